"""Loading without the cycle collector: building a cluster's model makes no garbage cycles.

Reading a cluster allocates millions of containers (the parsed objects, then
tasks, resources and their dicts) that all live on.  Each burst of allocations
sets off Python's generational collector, which traverses every one of them
again and finds nothing to free: on 50,000 pods that is half of the load time.
Loading and building a snapshot run with the collector paused.

Pausing alone only defers the cost: everything made during the pause sits in
the youngest generation, and the first collection afterwards traverses all of
it (0.4 s on L), then the middle generation's does again.  So at the end of
the pause the new objects are moved straight to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``: no traversal), where a full
collection still finds any cycle among them in due course.  When the program
keeps objects frozen itself (a pre-fork server), that is left alone and the
collector simply resumes.

Objects moved that way bypass the collector's own count of long-lived
objects, which is what sets off a full collection: on their own they never
would, and a process running session after session (``serve``, ``replay``)
would keep every finished session's cycles (a session's hooks and the session
refer to each other) for good.  So the pauses keep that count themselves and,
when a pause begins (the last session is usually over by then), collect in
full once the objects they moved since the last full collection outnumber
those that lived through it: memory stays within a small multiple of what is
live, and a one-shot run never pays for a full collection.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


class _Aged:
    """What the pauses moved to the oldest generation since the last full collection, and how
    many objects lived through that collection (None before the first pause: the first batch
    moved, usually a loaded cluster, is the measure)."""

    moved = 0
    survivors: int | None = None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Within the block, no cyclic garbage collection (reference counting still frees memory);
    afterwards, what the block made counts as long-lived."""
    if not gc.isenabled():  # already paused by an enclosing block, or by the program
        yield
        return
    if _Aged.survivors is not None and _Aged.moved > _Aged.survivors:
        gc.collect()
        _Aged.survivors, _Aged.moved = len(gc.get_objects()), 0
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():  # nobody keeps objects frozen: age the new ones at once
            made = gc.get_count()[0]  # tracked objects made in the block and still alive (about)
            gc.freeze()
            gc.unfreeze()
            _aged(made)
        gc.enable()


def _aged(made: int) -> None:
    if _Aged.survivors is None:
        _Aged.survivors = made
    else:
        _Aged.moved += made
