"""Plain records the gang-eviction policies build (``gangpreempt`` / ``gangreclaim``).

The policy language has no record types of its own, so the two values Volcano's
gang eviction passes around are offered here as data holders: the context a
``unified_evictable`` hook is asked in (Volcano's ``api.EvictionContext``) and a
victim bundle (``actions/utils/bundle.go``).  Every decision about them is made
in ``policies/volcano/``; nothing here computes anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from fumarole.runtime.api.model import Job, Task
from fumarole.runtime.api.resource import Resource


@dataclass(frozen=True, eq=False)
class Eviction:
    """Who asks for victims: the eviction kind, the job that needs room, the domain searched."""

    kind: str
    job: Job
    hypernode: str


@dataclass(frozen=True, eq=False)
class VictimBundle:
    """Tasks of one victim job evicted together.

    ``whole`` bundles break the job's gang (all of the job goes with them), safe
    ones do not.  ``local_request`` is what the bundle frees in the domain,
    ``global_request`` what evicting it costs the job as a whole (empty for a
    safe bundle).
    """

    job: Job
    tasks: list[Task]
    whole: bool
    local_request: Resource
    global_request: Resource
