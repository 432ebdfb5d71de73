"""Plugin state kept per node that row-local rules may read (docs/language.md, "Row memos").

A plugin's ``state S: map[string, T]`` of plain values (int, float, bool, string) that the
plugin never assigns as a whole, read by a row-local rule only at its own node's name
(``S[node.name]``, ``S.get(node.name, d)``, ``node.name in S``), is a fact of that node's row
like its columns: deviceshare's per-node tallies of free GPU memory and idle cards.  The fast
engine holds such a state in a :class:`RowState`, which logs the row of the node a key names
whenever the entry changes, so row memos that read it are recomputed for that row only.
Values are immutable, so every change goes through the map itself.
"""

from __future__ import annotations

from typing import Any, Callable


class RowState(dict):
    """A dict that calls ``touch(key)`` after every change of an entry (a key that names no node
    is the caller's to ignore)."""

    __slots__ = ("_touch",)

    def __init__(self, initial: dict, touch: Callable[[Any], None]) -> None:
        super().__init__(initial)
        self._touch = touch
        for key in initial:
            touch(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._touch(key)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._touch(key)

    def pop(self, key: Any, *default: Any) -> Any:
        value = super().pop(key, *default)
        self._touch(key)
        return value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        value = super().setdefault(key, default)
        self._touch(key)
        return value

    def update(self, *args: Any, **kwargs: Any) -> None:
        changed = dict(*args, **kwargs)
        super().update(changed)
        for key in changed:
            self._touch(key)

    def popitem(self) -> tuple[Any, Any]:
        key, value = super().popitem()
        self._touch(key)
        return key, value

    def clear(self) -> None:
        keys = list(self)
        super().clear()
        for key in keys:
            self._touch(key)

    def __ior__(self, other: Any) -> "RowState":  # type: ignore[misc]
        self.update(other)
        return self

    def __reduce__(self) -> tuple[type, tuple[dict]]:
        """Copied or pickled (a session's outcome), it is a plain map: only the session's own is watched."""
        return (dict, (dict(self),))
