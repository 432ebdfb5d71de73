"""Volcano's priority queue: Go's ``container/heap`` algorithm, verbatim.

Volcano's comparators read live session state (shares change while a queue is
being drained) and some are not strict total orders, so the pop order depends
on the exact sift-up/sift-down steps.  ``heapq`` would pick different elements;
this port makes the same swaps Go makes.
"""

from __future__ import annotations

from typing import Callable, Generic, Iterable, TypeVar

T = TypeVar("T")


class PriorityQueue(Generic[T]):
    """A binary heap ordered by ``less(a, b)`` (a pops before b), evaluated lazily."""

    __slots__ = ("items", "less")

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()) -> None:
        self.less = less
        self.items: list[T] = []
        for item in items:
            self.push(item)

    def __len__(self) -> int:
        return len(self.items)

    def empty(self) -> bool:
        return not self.items

    def push(self, item: T) -> None:
        items, less = self.items, self.less
        items.append(item)
        j = len(items) - 1
        while j > 0:
            i = (j - 1) // 2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def pop(self) -> T:
        items, less = self.items, self.less
        n = len(items) - 1
        items[0], items[n] = items[n], items[0]
        i = 0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(items[j2], items[j1]):
                j = j2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            i = j
        return items.pop()

    def clone(self) -> "PriorityQueue[T]":
        copy = PriorityQueue(self.less)
        copy.items = list(self.items)
        return copy
