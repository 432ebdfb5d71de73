"""Kubernetes' ``tainttoleration`` plugin: the NoSchedule / NoExecute filter and the
PreferNoSchedule score."""

from __future__ import annotations

from typing import Iterable

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import cached_per_spec, canonical_text, list_at, pod_spec


DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


def _tolerates(toleration: dict, taint: dict) -> bool:
    """Kubernetes Toleration.ToleratesTaint (an empty operator means Equal)."""
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return str(toleration.get("value") or "") == str(taint.get("value") or "")
    return False


@cached_per_spec
def tolerations_of_pod(task: Task) -> list[dict]:
    return [t for t in list_at(pod_spec(task), "tolerations") if isinstance(t, dict)]


def tolerations_of(task: Task) -> list[dict]:
    """What the taint filters and scores read of the pod: pods with equal tolerations get the
    same answer on every node."""
    return tolerations_of_pod(task)


@cached_per_spec
def tolerations_text(task: Task) -> bytes | str:
    """:func:`tolerations_of` as canonical text (a key for answers per distinct tolerations)."""
    return canonical_text(tolerations_of_pod(task))


def tolerated(tolerations: Iterable[dict], taint: dict) -> bool:
    return any(_tolerates(t, taint) for t in tolerations)


def _describe_taint(taint: dict) -> str:
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def untolerated_taint(task: Task, node: Node, effects: list[str]) -> str | None:
    """The first taint with one of ``effects`` that no toleration of the pod tolerates."""
    tolerations = tolerations_of_pod(task)
    for taint in node.taints:
        if isinstance(taint, dict) and taint.get("effect") in effects and not tolerated(tolerations, taint):
            return _describe_taint(taint)
    return None


def intolerable_prefer_no_schedule(task: Task, node: Node) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints not tolerated.

    Only tolerations whose effect is empty or PreferNoSchedule count, so a
    NoSchedule toleration does not soften a PreferNoSchedule taint.
    """
    tolerations = [t for t in tolerations_of_pod(task) if (t.get("effect") or "") in ("", "PreferNoSchedule")]
    return sum(1 for taint in node.taints
               if isinstance(taint, dict) and taint.get("effect") == "PreferNoSchedule"
               and not tolerated(tolerations, taint))
