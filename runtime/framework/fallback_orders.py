"""The orders a session falls back to when no plugin decides (``framework/session_plugins.go``).

Volcano's ``JobOrderFn``, ``QueueOrderFn`` and ``SubJobOrderFn`` compare by creation time
and UID when every plugin abstains; its task order falls back to the job
controller's ``CompareTask``.  The session's dispatchers end on these.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fumarole.runtime.api.model import Job, Queue, Task


def job_fallback(l: Job, r: Job) -> bool:
    if l.creation != r.creation:
        return l.creation < r.creation
    return l.uid < r.uid


def queue_fallback(l: Queue, r: Queue) -> bool:
    if l.creation != r.creation:
        return l.creation < r.creation
    return l.uid < r.uid


def sub_job_fallback(l: Any, r: Any) -> bool:
    """SubJobOrderFn without plugins: match index, then UID."""
    if l.match_index != r.match_index:
        return l.match_index < r.match_index
    return l.uid < r.uid


@lru_cache(maxsize=1 << 16)  # asked for both tasks of every comparison of a task order
def _pod_index(name: str) -> int | None:
    parts = name.split("-")
    if len(parts) < 3:
        return None
    try:
        return int(parts[-1])
    except ValueError:
        return None


def compare_task(l: Task, r: Task) -> bool:
    """CompareTask (controllers/job/helpers): numeric pod-name suffix, then creation, then UID."""
    li, ri = _pod_index(l.name), _pod_index(r.name)
    if li is None or ri is None or li == ri:
        if l.creation == r.creation:
            return l.uid < r.uid
        return l.creation < r.creation
    return li < ri
