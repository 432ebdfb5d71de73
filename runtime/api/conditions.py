"""Pod and PodGroup conditions, and the times a site's policy asks of them.

A site's rule wants to know how long a job has waited, when a pod was last
scheduled or evicted.  Kubernetes and Volcano write those moments into status
conditions: the kubelet and scheduler into a Pod's ``PodScheduled`` and
``DisruptionTarget``, Volcano's gang plugin into a PodGroup's ``Unschedulable``
and ``Scheduled`` (framework/job_updater.go keeps a condition's
``lastTransitionTime`` while its status and reason stay the same, so it says
since when they hold).  These functions read them, and say ``None`` where the
cluster does not say.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from fumarole.policy_lang.timestamps import rfc3339_seconds
from fumarole.runtime.api.model import Job, Task

POD_SCHEDULED, DISRUPTION_TARGET = "PodScheduled", "DisruptionTarget"
PG_UNSCHEDULABLE, PG_SCHEDULED = "Unschedulable", "Scheduled"


class Condition:
    """One status condition (Pod or PodGroup), as a policy reads it."""

    __slots__ = ("type", "status", "reason", "message", "last_transition_time")

    def __init__(self, raw: dict) -> None:
        self.type = str(raw.get("type") or "")
        self.status = str(raw.get("status") or "")
        self.reason = str(raw.get("reason") or "")
        self.message = str(raw.get("message") or "")
        self.last_transition_time = seconds(raw.get("lastTransitionTime"))

    def __repr__(self) -> str:
        return f"<Condition {self.type}={self.status}>"


def seconds(value: Any) -> float | None:
    """A condition time as seconds since the epoch: RFC 3339 text, a YAML timestamp, or the seconds a
    session wrote itself; None when unset or unreadable."""
    if isinstance(value, bool) or value in (None, ""):
        return None
    if isinstance(value, (int, float)):
        try:
            seconds_ = float(value)
        except OverflowError:
            return None
        return seconds_ if math.isfinite(seconds_) else None
    if isinstance(value, _dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)).timestamp()
    return rfc3339_seconds(str(value))


def conditions_of(raw: Any) -> list[Condition]:
    return [Condition(c) for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def condition(conditions: list[Condition], kind: str) -> Condition | None:
    """The last condition of a type (Kubernetes keeps one per type)."""
    found = None
    for c in conditions:
        if c.type == kind:
            found = c
    return found


def _time_when_true(conditions: list[Condition], kind: str) -> float | None:
    c = condition(conditions, kind)
    return c.last_transition_time if c is not None and c.status == "True" else None


# -- pods -----------------------------------------------------------------------------------------------

def task_conditions(task: Task) -> list[Condition]:
    status = task.pod.get("status")
    return conditions_of(status.get("conditions")) if isinstance(status, dict) else []


def task_condition(task: Task, kind: str) -> Condition | None:
    return condition(task_conditions(task), kind)


def task_scheduled_at(task: Task) -> float | None:
    """When the pod was bound: its PodScheduled=True condition's transition (the cdp plugin's reading)."""
    return _time_when_true(task_conditions(task), POD_SCHEDULED)


def task_evicted_at(task: Task) -> float | None:
    """When the pod was marked for disruption (preempted, evicted): DisruptionTarget=True's transition."""
    return _time_when_true(task_conditions(task), DISRUPTION_TARGET)


def task_pending_since(task: Task) -> float | None:
    """Since when a pod without a node has waited: its PodScheduled=False condition's transition, else its
    creation time; None for a pod on a node, or one the cluster gives no time for."""
    if task.node_name:
        return None
    c = task_condition(task, POD_SCHEDULED)
    if c is not None and c.status == "False" and c.last_transition_time is not None:
        return c.last_transition_time
    return task.creation or None


# -- pod groups -------------------------------------------------------------------------------------------

def job_conditions(job: Job) -> list[Condition]:
    return conditions_of(job.conditions)


def job_condition(job: Job, kind: str) -> Condition | None:
    return condition(job_conditions(job), kind)


def job_scheduled_at(job: Job) -> float | None:
    """When Volcano last found the gang ready: the Scheduled condition's transition."""
    return _time_when_true(job_conditions(job), PG_SCHEDULED)


def job_pending_since(job: Job) -> float | None:
    """Since when the job has waited: its creation time while it was never scheduled (else, without one,
    its Unschedulable condition's transition); once scheduled, the Unschedulable transition when that is
    newer than the last Scheduled one; None while its latest word is Scheduled."""
    read = job_conditions(job)
    unschedulable = _time_when_true(read, PG_UNSCHEDULABLE)
    scheduled = _time_when_true(read, PG_SCHEDULED)
    if scheduled is None:
        return job.creation or unschedulable
    if unschedulable is not None and unschedulable > scheduled:
        return unschedulable
    return None


def job_evicted_at(job: Job) -> float | None:
    """The latest eviction among the job's pods (their DisruptionTarget conditions)."""
    known = [t for t in (task_evicted_at(task) for task in job.tasks.values()) if t is not None]
    return max(known) if known else None
