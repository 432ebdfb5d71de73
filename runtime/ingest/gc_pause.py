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
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


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
            gc.freeze()
            gc.unfreeze()
        gc.enable()
