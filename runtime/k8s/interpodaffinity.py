"""Kubernetes' ``interpodaffinity`` plugin: the pod affinity terms of a pod, parsed once.

The terms, and the filter and the score over every pod of the session's view
(:class:`~fumarole.runtime.k8s.view.K8sView` holds the view and hands it over).
Namespaces: the scheduler sees no Namespace objects (neither does Volcano's
unit-test harness), so a namespace label set is always empty.  Consequently a
non-empty ``namespaceSelector`` in the incoming pod's own affinity terms selects
no namespace (Kubernetes lists the matching Namespace objects, of which there
are none), while one in an existing pod's term is evaluated against the
incoming pod's (empty) namespace labels, exactly as Kubernetes does.

A label selector: None selects nothing (labels.Nothing), [] selects everything
(labels.Everything), otherwise the AND of (key, operator, values) requirements.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Mapping

from fumarole.runtime.api.labels import parse_selector, Requirement, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import (
    MAX_NODE_SCORE,
    Placements,
    affinity_of,
    cached_per_spec,
    cached_per_task,
    list_at,
    mapping_at,
    pod_spec,
)


EXISTING_ANTI_AFFINITY_FAILURE = "node(s) didn't satisfy existing pods anti-affinity rules"


AFFINITY_FAILURE = "node(s) didn't match pod affinity rules"


ANTI_AFFINITY_FAILURE = "node(s) didn't match pod anti-affinity rules"


@cached_per_spec
def has_required_pod_terms(task: Task) -> bool:
    """Required pod affinity or anti-affinity terms of the pod's own (without: only placed pods'
    anti-affinity can refuse it).  Whether there are any reads the spec alone (the terms' owner
    namespace only fills them in), so the pods of a job ask it once: preempt and reclaim ask it
    at every attempt of a preemptor, most of which are its first."""
    return bool(required_terms(task, "podAffinity", True) or required_terms(task, "podAntiAffinity", True))


@dataclass(frozen=True)
class PodTerm:
    """A parsed PodAffinityTerm (with its weight for preferred terms)."""

    selector: list[Requirement] | None
    namespaces: frozenset[str]
    namespace_selector: list[Requirement] | None
    topology_key: str
    weight: int

    def matches(self, pod: Task) -> bool:
        """framework.AffinityTerm.Matches, with every namespace's labels empty (see module doc)."""
        if pod.namespace not in self.namespaces and not selects(self.namespace_selector, {}):
            return False
        return selects(self.selector, pod.labels)


def _parse_term(owner: Task, raw: dict, weight: int, incoming: bool) -> PodTerm:
    """A term of ``owner``; ``incoming`` terms get a non-empty namespaceSelector resolved to nothing.

    No namespaces and no namespaceSelector mean the owner's own namespace.
    """
    names = [str(n) for n in list_at(raw, "namespaces")]
    raw_ns_selector = raw.get("namespaceSelector")
    if not names and raw_ns_selector is None:
        names = [owner.namespace]
    ns_selector = parse_selector(raw_ns_selector)
    if incoming and ns_selector:
        ns_selector = None
    return PodTerm(parse_selector(raw.get("labelSelector")), frozenset(names), ns_selector,
                    str(raw.get("topologyKey") or ""), weight)


@cached_per_task
def required_terms(task: Task, kind: str, incoming: bool) -> list[PodTerm]:
    """Required terms (the filter's; they never score, see :func:`inter_pod_affinity_scores`)."""
    if not has_pod_affinity(task):
        return []
    block = affinity_of(task, kind)
    return [_parse_term(task, raw, 0, incoming)
            for raw in list_at(block, "requiredDuringSchedulingIgnoredDuringExecution") if isinstance(raw, dict)]


@cached_per_task
def preferred_terms(task: Task, kind: str, incoming: bool) -> list[PodTerm]:
    if not has_pod_affinity(task):
        return []
    block = affinity_of(task, kind)
    return [_parse_term(task, mapping_at(raw, "podAffinityTerm"), int(raw.get("weight") or 0), incoming)
            for raw in list_at(block, "preferredDuringSchedulingIgnoredDuringExecution") if isinstance(raw, dict)]


def has_pod_affinity(task: Task) -> bool:
    """Kubernetes' "pod with affinity": any podAffinity or podAntiAffinity block (asked of every
    pod placed, most of which have no affinity at all: two lookups, nothing kept)."""
    affinity = pod_spec(task).get("affinity")
    return isinstance(affinity, dict) and (isinstance(affinity.get("podAffinity"), dict)
                                           or isinstance(affinity.get("podAntiAffinity"), dict))


# -- the filter and the score: every pod of the view (k8s/view.py's K8sView holds it) ------------

def _others_with_affinity(task: Task, with_affinity: Placements,
                          placed: Placements | None = None) -> Iterator[tuple[Node, Task]]:
    """As :func:`_others`, restricted to pods that have pod (anti-)affinity terms."""
    index: Mapping[str, tuple[Node, Task]] = with_affinity
    if placed is not None:
        kept = getattr(placed, "with_affinity", None)
        index = kept if kept is not None else {
            key: where for key, where in placed.items() if has_pod_affinity(where[1])}
    for key, (node, other) in index.items():
        if key != task.key:
            yield node, other


def _others(task: Task, nodes: list[Node], placed: Placements | None = None) -> Iterator[tuple[Node, Task]]:
    """(node, pod) for every pod except ``task`` itself: the live view in node order, or ``placed``."""
    if placed is not None:
        for key, (node, other) in placed.items():
            if key != task.key:
                yield node, other
        return
    for node in nodes:
        for key, other in node.view_pods.items():
            if key != task.key:
                yield node, other


def affinity_cannot_refuse(task: Task, with_affinity: Placements, placed: Placements | None = None) -> bool:
    """No pod has terms that could refuse ``task`` on any node (the filter's first shortcut)."""
    index = with_affinity if placed is None else getattr(placed, "with_affinity", None)
    return index is not None and not index and not has_required_pod_terms(task)


def prefilter_skips(task: Task, with_affinity: Placements, placed: Placements | None = None) -> bool:
    """InterPodAffinity's PreFilter returns Skip (filtering.go PreFilter): the pod has no required
    terms of its own and no placed pod's required anti-affinity term matches it from a node
    carrying the term's topology key (the counts its filter would read are all empty)."""
    if has_required_pod_terms(task):
        return False
    return not any(t.topology_key in node.labels and t.matches(task)
                   for node, other in _others_with_affinity(task, with_affinity, placed)
                   for t in required_terms(other, "podAntiAffinity", False))


def pod_affinity_failure(task: Task, node: Node, nodes: list[Node], with_affinity: Placements,
                         placed: Placements | None = None) -> str | None:
    """InterPodAffinity Filter: why the node is refused, or None.

    Checked in Kubernetes' order: the pod's required affinity, its required
    anti-affinity, then existing pods' required anti-affinity towards it.
    The pods are the session's view (``nodes``' pods; ``with_affinity`` those
    with terms), or the placements of a :class:`PodView`.
    """
    if affinity_cannot_refuse(task, with_affinity, placed):
        return None  # nobody has terms that could refuse this pod
    affinity = required_terms(task, "podAffinity", True)
    labels = node.labels
    if affinity:
        counts: Counter[tuple[str, str]] = Counter()
        for other_node, other in _others(task, nodes, placed):
            if all(t.matches(other) for t in affinity):
                for t in affinity:
                    if t.topology_key in other_node.labels:
                        counts[(t.topology_key, other_node.labels[t.topology_key])] += 1
        if any(t.topology_key not in labels for t in affinity):
            return AFFINITY_FAILURE
        if any(counts[(t.topology_key, labels[t.topology_key])] <= 0 for t in affinity):
            # The first pod of a group with affinity to itself may go anywhere
            # as long as no pod matches the terms yet.
            if counts or not all(t.matches(task) for t in affinity):
                return AFFINITY_FAILURE
    anti = [t for t in required_terms(task, "podAntiAffinity", True) if t.topology_key in labels]
    for other_node, other in (_others(task, nodes, placed) if anti else ()):
        for t in anti:
            if other_node.labels.get(t.topology_key) == labels[t.topology_key] and t.matches(other):
                return ANTI_AFFINITY_FAILURE
    for other_node, other in _others_with_affinity(task, with_affinity, placed):
        for t in required_terms(other, "podAntiAffinity", False):
            value = other_node.labels.get(t.topology_key)
            if value is not None and labels.get(t.topology_key) == value and t.matches(task):
                return EXISTING_ANTI_AFFINITY_FAILURE
    return None


def inter_pod_affinity_scores(task: Task, candidates: list[Node], nodes: list[Node],
                              with_affinity: Placements) -> dict[Node, int] | None:
    """InterPodAffinity PreScore + Score + NormalizeScore for the candidate nodes.

    Each existing pod adds, to every node sharing its node's topology value:
    the incoming pod's preferred affinity (+weight) / anti-affinity (-weight)
    terms it matches, and its own preferred affinity (+weight) and preferred
    anti-affinity (-weight) terms the incoming pod matches.  Its required
    affinity terms add nothing: Kubernetes weighs them by the plugin's
    hardPodAffinityWeight only when that is above 0, and Volcano's nodeorder
    builds the plugin from an empty InterPodAffinityArgs (weight 0, not the
    kube-scheduler default 1).  Without preferred terms of its own, the
    incoming pod only looks at pods with affinity.  None (skip) when no term
    contributed anything.
    """
    own_affinity = preferred_terms(task, "podAffinity", True)
    own_anti = preferred_terms(task, "podAntiAffinity", True)
    has_constraints = bool(own_affinity or own_anti)
    topology: dict[str, dict[str, int]] = {}
    contributed = False

    def add(terms: list[PodTerm], pod: Task, where: Node, sign: int) -> None:
        nonlocal contributed
        for t in terms:
            if t.topology_key in where.labels and t.matches(pod):
                per_value = topology.setdefault(t.topology_key, {})
                value = where.labels[t.topology_key]
                per_value[value] = per_value.get(value, 0) + sign * t.weight
                contributed = True

    for other_node, other in (_others(task, nodes) if has_constraints
                                else _others_with_affinity(task, with_affinity)):
        if not other_node.labels:
            continue
        add(own_affinity, other, other_node, 1)
        add(own_anti, other, other_node, -1)
        add(preferred_terms(other, "podAffinity", False), task, other_node, 1)
        add(preferred_terms(other, "podAntiAffinity", False), task, other_node, -1)
    if not contributed:
        return None
    raw = {node: sum(per_value.get(node.labels[key], 0)
                     for key, per_value in topology.items() if key in node.labels)
           for node in candidates}
    low, high = min(raw.values(), default=0), max(raw.values(), default=0)
    spread = high - low
    return {node: int(MAX_NODE_SCORE * ((score - low) / spread)) if spread > 0 else 0
            for node, score in raw.items()}
