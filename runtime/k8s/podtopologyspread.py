"""Kubernetes' ``podtopologyspread`` plugin: a pod's topology spread constraints, parsed
once, and which nodes count towards their domains.

The constraints, and the filter and the score over every pod of the session's view
(:class:`~fumarole.runtime.k8s.view.K8sView` holds the view and hands it over).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from fumarole.runtime.api.labels import parse_selector, Requirement, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.nodeaffinity import matches_node_selector_and_affinity
from fumarole.runtime.k8s.podspec import (
    MAX_NODE_SCORE,
    Placements,
    cached_per_spec,
    cached_per_task,
    list_at,
    pod_spec,
    terminating,
)
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


@cached_per_spec
def has_hard_spread_constraints(task: Task) -> bool:
    """Any DoNotSchedule topology spread constraint (none: the filter passes every node).  Whether
    there is one reads the spec alone (the pod's labels only fill a constraint's selector in), so
    the pods of a job ask it once."""
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


# -- the filter and the score: every pod of the view (k8s/view.py's K8sView holds it) ------------

def _count_matching(node: Node, selector: list[Requirement] | None, task: Task,
                    pods: Mapping[str, Task] | None = None) -> int:
    """Pods of the incoming pod's namespace on the node (or among ``pods``) that the selector picks.

    An empty selector counts nothing and terminating pods are skipped, as in
    Kubernetes' spread counting.
    """
    if selector == []:
        return 0
    return sum(1 for key, other in (node.view_pods if pods is None else pods).items()
               if key != task.key and other.namespace == task.namespace
               and not terminating(other) and selects(selector, other.labels))


def topology_spread_failure(task: Task, node: Node, nodes: list[Node],
                            placed: Placements | None = None) -> str | None:
    """PodTopologySpread Filter over the DoNotSchedule constraints.

    Per constraint, matching pods are counted per domain over nodes that
    carry every constraint key and pass the inclusion policies; placing the
    pod must keep ``count(domain) + self - global minimum <= maxSkew``, the
    minimum being 0 while there are fewer domains than ``minDomains``.  The
    pods are the session's view (``nodes``' pods), or the placements of a :class:`PodView`.
    """
    constraints = spread_constraints(task, "DoNotSchedule")
    if not constraints:
        return None
    pods_on: dict[str, dict[str, Task]] | None = None
    if placed is not None:
        pods_on = {n.name: {} for n in nodes}
        for key, (where, pod) in placed.items():
            pods_on.setdefault(where.name, {})[key] = pod
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for other_node in nodes:
        if not has_all_keys(other_node, constraints):
            continue
        pods = pods_on[other_node.name] if pods_on is not None else None
        for i, c in enumerate(constraints):
            if included(task, other_node, c):
                value = other_node.labels[c.topology_key]
                counts[i][value] = counts[i].get(value, 0) + _count_matching(other_node, c.selector, task, pods)
    for i, c in enumerate(constraints):
        if c.topology_key not in node.labels:
            return SPREAD_LABEL_FAILURE
        domains = counts[i]
        minimum = 0 if len(domains) < c.min_domains else min(domains.values(), default=2**31 - 1)
        self_match = 1 if selects(c.selector, task.labels) else 0
        if domains.get(node.labels[c.topology_key], 0) + self_match - minimum > c.max_skew:
            return SPREAD_FAILURE
    return None


def topology_spread_scores(task: Task, candidates: list[Node], nodes: list[Node]) -> dict[Node, int] | None:
    """PodTopologySpread PreScore + Score + NormalizeScore over the ScheduleAnyway constraints.

    A node's raw score sums, per constraint, ``matching pods in its domain *
    log(domains + 2) + maxSkew - 1`` (domains = distinct values among the
    candidates; hostname domains are counted on the node itself), rounded;
    fewer pods is better, so the normalised score is
    ``100 * (max + min - raw) // max``.  Candidates missing a constraint key
    score 0.  None (skip) without soft constraints; system-default
    constraints are not modelled.
    """
    constraints = spread_constraints(task, "ScheduleAnyway")
    if not constraints or not nodes:
        return None
    ignored = {id(n) for n in candidates if not has_all_keys(n, constraints)}
    scored = [n for n in candidates if id(n) not in ignored]
    counts: list[dict[str, int]] = []
    weights: list[float] = []
    for c in constraints:
        values = {n.labels[c.topology_key] for n in scored}
        counts.append({} if c.topology_key == HOSTNAME_LABEL else dict.fromkeys(values, 0))
        size = len(scored) if c.topology_key == HOSTNAME_LABEL else len(values)
        weights.append(math.log(size + 2))
    for other_node in nodes:
        if not has_all_keys(other_node, constraints):
            continue
        for i, c in enumerate(constraints):
            value = other_node.labels[c.topology_key]
            if value in counts[i] and included(task, other_node, c):
                counts[i][value] += _count_matching(other_node, c.selector, task)
    raw: dict[Node, int] = {}
    for n in scored:
        total = 0.0
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME_LABEL:
                matched = _count_matching(n, c.selector, task)
            else:
                matched = counts[i][n.labels[c.topology_key]]
            total += matched * weights[i] + (c.max_skew - 1)
        raw[n] = go_round(total)
    high = max(raw.values(), default=0)
    low = min(raw.values(), default=0)
    result = {}
    for n in candidates:
        if id(n) in ignored:
            result[n] = 0
        elif high == 0:
            result[n] = MAX_NODE_SCORE
        else:
            result[n] = MAX_NODE_SCORE * (high + low - raw[n]) // high
    return result
