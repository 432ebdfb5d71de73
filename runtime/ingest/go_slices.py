"""Go slices of texts over shared backing arrays, for the one place Volcano's decisions depend on
slice aliasing: capacity's queue ancestors (queue_tree.py).

``child.ancestors = append(parent.ancestors, parent)`` (capacity.go updateAncestors) writes into
the parent's backing array whenever it has room past the parent's length, so siblings' -- and
cousins' -- slices share one array, and a later ``append`` into it (another build step, or the
``list := append(attr.ancestors, queue)`` of the allocatable and enqueueable checks) rewrites an
element every slice over that array sees.  A slice here is ``(array, length)``; an array is a
list whose length is Go's capacity (``None`` where nothing was written yet).

Growth is Go's ``growslice`` for a 16-byte element (a QueueID string header): the capacity doubles
(from 0 to 1), and 16 times a power of two is always one of the allocator's size classes, so no
rounding.  That holds while the capacity is below 256 (lists of up to 256 ancestors); past it Go
grows by about 1.25 and rounds to a size class, which is not modelled: ``append`` refuses such a
slice rather than guess.
"""

from __future__ import annotations

# Go doubles a slice's capacity while it is below this (runtime/slice.go growslice, Go 1.18 on).
DOUBLING_LIMIT = 256

Slice = tuple[int, int]  # (backing array, length)
EMPTY: Slice = (0, 0)  # make([]T, 0): nothing to share, every append onto it allocates


class SliceArena:
    """The backing arrays of a family of slices, and ``append`` as Go runs it on them."""

    def __init__(self) -> None:
        self._arrays: list[list[str | None]] = [[]]  # array 0: EMPTY's, of capacity 0

    def items(self, view: Slice) -> list[str]:
        array, length = view
        return self._arrays[array][:length]  # type: ignore[return-value]  # written up to length

    def append(self, view: Slice, item: str) -> tuple[Slice, bool]:
        """Go's ``append(s, item)``: the new slice, and whether an element some slice already
        shows was overwritten (with another value) -- the moment other slices' contents change."""
        array, length = view
        backing = self._arrays[array]
        if length < len(backing):
            before = backing[length]
            backing[length] = item
            return (array, length + 1), before is not None and before != item
        if len(backing) >= DOUBLING_LIMIT:
            raise ValueError(f"a slice grown past {DOUBLING_LIMIT} items: Go's growth there is not modelled")
        capacity = max(1, 2 * len(backing))
        self._arrays.append(backing[:length] + [item] + [None] * (capacity - length - 1))
        return (len(self._arrays) - 1, length + 1), False
