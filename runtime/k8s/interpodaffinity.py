"""Kubernetes' ``interpodaffinity`` plugin: the pod affinity terms of a pod, parsed once.

The filter and the score need every pod of the cluster, so they are
:class:`~fumarole.runtime.k8s.view.K8sView`'s; this module reads the terms.
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

from dataclasses import dataclass

from fumarole.runtime.api.labels import parse_selector, Requirement, selects
from fumarole.runtime.api.model import Task
from fumarole.runtime.k8s.podspec import affinity_of, cached_per_task, list_at, mapping_at, pod_spec


HARD_POD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs default, as Volcano configures it


EXISTING_ANTI_AFFINITY_FAILURE = "node(s) didn't satisfy existing pods anti-affinity rules"


AFFINITY_FAILURE = "node(s) didn't match pod affinity rules"


ANTI_AFFINITY_FAILURE = "node(s) didn't match pod anti-affinity rules"


def has_required_pod_terms(task: Task) -> bool:
    """Required pod affinity or anti-affinity terms of the pod's own (without: only placed pods'
    anti-affinity can refuse it)."""
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
def required_terms(task: Task, kind: str, incoming: bool, weight: int = 0) -> list[PodTerm]:
    """Required terms; ``weight`` is what a match is worth when scoring (hard affinity)."""
    if not has_pod_affinity(task):
        return []
    block = affinity_of(task, kind)
    return [_parse_term(task, raw, weight, incoming)
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
