"""Loading without the cycle collector: building a cluster's model makes no garbage cycles.

Reading a cluster allocates millions of containers (the parsed objects, then
tasks, resources and their dicts) that all live on.  Each burst of allocations
sets off Python's generational collector, which traverses every one of them
again and finds nothing to free: a large share of the load time on a big
cluster (benchmarks/README.md has the figures).
Loading and building a snapshot run with the collector paused.

Pausing alone only defers the cost: everything made during the pause sits in
the youngest generation, and the first collection afterwards traverses all of
it, then the middle generation's does again.  So at the end of
the pause the new objects are moved straight to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``: no traversal), where a full
collection still finds any cycle among them in due course.  When the program
keeps objects frozen itself (a pre-fork server), that is left alone and the
collector simply resumes.

Objects moved that way bypass the collector's own count of long-lived
objects, which is what sets off a full collection: on their own they never
would, and a process running session after session (``serve``, ``replay``)
would keep every finished session's cycles (a session's hooks and the session
refer to each other) for good.  So the pauses keep that count themselves, and
a new session first collects in full (:func:`collect_if_due`) once the
objects they moved since the last full collection, less the cluster it is
about to read, outnumber those that lived through it: memory stays within a
small multiple of what is live.  The first
session of a process only takes the measure (a one-shot run never pays for a
full collection), and checking when a session starts rather than when any
pause does keeps a cluster just loaded, all of it alive, from setting one off.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


class _Aged:
    """What the pauses moved to the oldest generation since the last full collection (and the
    last pause's share of it), and how many objects lived through that collection (None until
    the first session takes the measure)."""

    moved = 0
    last = 0
    survivors: int | None = None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Within the block, no cyclic garbage collection (reference counting still frees memory);
    afterwards, what the block made counts as long-lived."""
    if not gc.isenabled():  # already paused by an enclosing block, or by the program
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():  # nobody keeps objects frozen: age the new ones at once
            made = gc.get_count()[0]  # tracked objects made in the block and still alive (about)
            gc.freeze()
            gc.unfreeze()
            _Aged.moved += made
            _Aged.last = made
        gc.enable()


def collect_if_due() -> None:
    """A session begins: collect in full if the pauses aged more objects since the last full
    collection than lived through it.  The last pause's objects are left out: they are the
    cluster this session is about to read, alive.  The first call only takes the measure."""
    if _Aged.survivors is None:
        _Aged.survivors, _Aged.moved = _Aged.moved, 0
    elif _Aged.moved - _Aged.last > _Aged.survivors and gc.isenabled():
        settle()


def settle() -> None:
    """Collect in full now and count from here (a benchmark between measurements)."""
    gc.collect()
    _Aged.survivors, _Aged.moved, _Aged.last = len(gc.get_objects()), 0, 0
