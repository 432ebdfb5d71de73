"""Kubernetes' ``nodeunschedulable`` plugin: a cordoned node takes only pods that
tolerate its unschedulable taint."""

from __future__ import annotations

from fumarole.runtime.api.model import Task
from fumarole.runtime.k8s.tainttoleration import tolerated, tolerations_of_pod


UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def tolerates_unschedulable(task: Task) -> bool:
    """Whether the pod may go to a cordoned node (NodeUnschedulable filter)."""
    taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    return tolerated(tolerations_of_pod(task), taint)
