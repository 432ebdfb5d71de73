"""What the Kubernetes plugins read of a pod's spec, and the caches that read it once.

Pods do not change within a session, and the filters and scorers ask the same
questions of every node, so facts of a pod are kept on its task
(:func:`cached_per_task`) or, when they depend on the spec alone, shared by
every pod with that spec (:func:`cached_per_spec`).  ``MAX_NODE_SCORE`` is the
framework's ``MaxNodeScore`` every scorer normalises to.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Mapping

import orjson

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.ingest.kube_convert import parse_time


MAX_NODE_SCORE = 100


# The pods an inter-pod affinity or topology spread filter reads: pod key -> (its node, the pod).
Placements = Mapping[str, tuple[Node, Task]]


def cached_per_task(fn):
    """Cache a function of a pod's spec on its task: pods do not change within a session,
    and the filters and scorers ask the same questions for every node."""
    name = fn.__name__

    @functools.wraps(fn)
    def cached(task, *args):
        key = (name, args)
        derived = task.derived
        if key in derived:
            return derived[key]
        value = derived[key] = fn(task, *args)
        return value
    return cached


# Pod specs as canonical text (spec_identity), and the facts of each spec: shared by every pod
# with that spec, in this session and the next (they are functions of the text alone).
_IDENTITY = ("spec_identity",)


_FACTS = ("spec_facts",)


_FACTS_BY_SPEC: dict[bytes | str, dict] = {}


_FACTS_KEPT = 4096


def canonical_text(value: object) -> bytes | str:
    """A JSON value as canonical text (keys sorted): equal texts, equal values."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits, keys of several types
        return json.dumps(value, sort_keys=True, default=str)


def spec_identity(task: Task) -> bytes | str:
    """The pod's spec as canonical text, without ``nodeName`` (where a pod runs, not what it
    asks for: no filter or scorer reads it from the spec).  The pods of a job share one."""
    derived = task.derived
    identity = derived.get(_IDENTITY)
    if identity is None:
        spec = pod_spec(task)
        if "nodeName" in spec:
            spec = {k: v for k, v in spec.items() if k != "nodeName"}
        identity = derived[_IDENTITY] = canonical_text(spec)
    return identity


def cached_per_spec(fn):
    """Cache a function of the pod spec alone (it reads nothing else of the task) per distinct
    spec: thousands of pods of a few jobs ask the same questions once."""
    name = fn.__name__

    @functools.wraps(fn)
    def cached(task):
        derived = task.derived
        facts = derived.get(_FACTS)
        if facts is None:
            identity = spec_identity(task)
            facts = _FACTS_BY_SPEC.get(identity)
            if facts is None:
                if len(_FACTS_BY_SPEC) >= _FACTS_KEPT:
                    _FACTS_BY_SPEC.clear()
                facts = _FACTS_BY_SPEC[identity] = {}
            derived[_FACTS] = facts
        if name in facts:
            return facts[name]
        value = facts[name] = fn(task)
        return value
    return cached


def mapping_at(obj: Any, key: str) -> dict:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def list_at(obj: Any, key: str) -> list:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, list) else []


def pod_spec(task: Task) -> dict:
    return mapping_at(task.pod, "spec")


def affinity_of(task: Task, kind: str) -> dict | None:
    """spec.affinity.<kind> (nodeAffinity, podAffinity, podAntiAffinity), None when absent."""
    value = mapping_at(pod_spec(task), "affinity").get(kind)
    return value if isinstance(value, dict) else None


def terminating(task: Task) -> bool:
    return bool(mapping_at(task.pod, "metadata").get("deletionTimestamp"))


def terminating_by_preemption(task: Task) -> bool:
    """Deleted, with a true DisruptionTarget condition whose reason is PreemptionByScheduler.

    Only the first DisruptionTarget condition counts, as in Volcano's
    ``podTerminatingByPreemption``.
    """
    if not terminating(task):
        return False
    for condition in list_at(mapping_at(task.pod, "status"), "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


def has_start_time(task: Task) -> bool:
    """status.startTime is set (Volcano's preemption counts a pod without one as starting now)."""
    return bool(mapping_at(task.pod, "status").get("startTime"))


def start_time(task: Task) -> float:
    """status.startTime, else the pod's creation time, in seconds since the epoch."""
    started = (task.pod.get("status") or {}).get("startTime")
    return parse_time(started) if started else task.creation


GO_ZERO_TIME = -62135596800.0  # Go's zero time.Time (0001-01-01 UTC), seconds since the epoch


def pod_phase(task: Task) -> str:
    """status.phase as the pod reports it ("" when unset)."""
    return str(mapping_at(task.pod, "status").get("phase") or "")


def pod_scheduled_since(task: Task) -> float | None:
    """The lastTransitionTime of the pod's first PodScheduled condition that is True, or None when
    it has none (a condition without lastTransitionTime turned True at Go's zero time).  cdp.go's
    filterVictimFn walks past PodScheduled conditions that are not True to the first one that is."""
    for condition in list_at(mapping_at(task.pod, "status"), "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "PodScheduled" \
                and condition.get("status") == "True":
            since = condition.get("lastTransitionTime")
            return parse_time(since) if since else GO_ZERO_TIME
    return None


QUEUE_ALLOCATION_GATE = "scheduling.volcano.sh/queue-allocation-gate"


def only_queue_allocation_gate(task: Task) -> bool:
    """The pod's one scheduling gate is Volcano's queue-allocation gate (HasOnlyVolcanoSchedulingGate).

    Volcano removes that gate itself once the queue has room, so allocate still
    considers such a pod and enqueue's quota plugins count it as inqueue.
    """
    gates = list_at(mapping_at(task.pod, "spec"), "schedulingGates")
    return len(gates) == 1 and isinstance(gates[0], dict) and gates[0].get("name") == QUEUE_ALLOCATION_GATE
