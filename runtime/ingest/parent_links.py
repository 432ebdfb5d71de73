"""Cycles among parent links, for the two hierarchies a cluster declares: queues
(``spec.parent``) and HyperNodes (members).  Each link is followed once, so a
chain of thousands costs as much as its length."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def cycles(parents: Mapping[str, str], names: Iterable[str]) -> list[list[str]]:
    """Each cycle of ``parents`` (child -> parent) once, as the ring child -> parent ->
    ..., starting where a walk from ``names``, in order, first entered it."""
    done: set[str] = set()
    out: list[list[str]] = []
    for start in names:
        path: list[str] = []
        on_path: dict[str, int] = {}
        current: str | None = start
        while current is not None and current not in done and current not in on_path:
            on_path[current] = len(path)
            path.append(current)
            current = parents.get(current)
        if current is not None and current in on_path:
            out.append(path[on_path[current]:])
        done.update(path)
    return out


def starting_at(ring: list[str], member: str) -> list[str]:
    """The ring turned to begin at ``member``."""
    i = ring.index(member)
    return ring[i:] + ring[:i]
