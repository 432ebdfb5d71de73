"""Kubernetes' ``podtopologyspread`` plugin: a pod's topology spread constraints, parsed
once, and which nodes count towards their domains.

The filter and the score need every pod of the cluster, so they are
:class:`~fumarole.runtime.k8s.view.K8sView`'s; this module reads the constraints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fumarole.runtime.api.labels import parse_selector, Requirement, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.nodeaffinity import matches_node_selector_and_affinity
from fumarole.runtime.k8s.podspec import cached_per_task, list_at, pod_spec
from fumarole.runtime.k8s.tainttoleration import DO_NOT_SCHEDULE_EFFECTS, untolerated_taint


HOSTNAME_LABEL = "kubernetes.io/hostname"


SPREAD_FAILURE = "node(s) didn't match pod topology spread constraints"


SPREAD_LABEL_FAILURE = SPREAD_FAILURE + " (missing required label)"


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero (Python's round() is half to even)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)


def has_hard_spread_constraints(task: Task) -> bool:
    """Any DoNotSchedule topology spread constraint (none: the filter passes every node)."""
    return bool(spread_constraints(task, "DoNotSchedule"))


@dataclass(frozen=True)
class SpreadConstraint:
    max_skew: int
    topology_key: str
    selector: list[Requirement] | None
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool


@cached_per_task
def spread_constraints(task: Task, action: str) -> list[SpreadConstraint]:
    """The pod's constraints with ``whenUnsatisfiable == action``.

    ``matchLabelKeys`` adds the pod's own values for those keys to the selector
    (a selector that selects nothing stays so).  Node inclusion policies default
    to honouring node affinity and ignoring taints.
    """
    out = []
    for raw in list_at(pod_spec(task), "topologySpreadConstraints"):
        if not isinstance(raw, dict) or raw.get("whenUnsatisfiable") != action:
            continue
        selector = parse_selector(raw.get("labelSelector"))
        extra = [(str(k), "In", (str(task.labels[k]),)) for k in list_at(raw, "matchLabelKeys") if k in task.labels]
        if extra and selector is not None:
            selector = extra + selector
        min_domains = raw.get("minDomains")
        out.append(SpreadConstraint(
            int(raw.get("maxSkew") or 0), str(raw.get("topologyKey") or ""), selector,
            1 if min_domains is None else int(min_domains),
            (raw.get("nodeAffinityPolicy") or "Honor") == "Honor",
            (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor"))
    return out


def has_all_keys(node: Node, constraints: list[SpreadConstraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


def included(task: Task, node: Node, constraint: SpreadConstraint) -> bool:
    """Node inclusion policies: whether the node's pods count towards the constraint's domains."""
    if constraint.honor_node_affinity and not matches_node_selector_and_affinity(task, node):
        return False
    if constraint.honor_node_taints and untolerated_taint(task, node, list(DO_NOT_SCHEDULE_EFFECTS)):
        return False
    return True
