"""Kubernetes' ``nodeaffinity`` plugin: nodeSelector and required node affinity (the
filter, its PreFilter's conflicting-names failure) and preferred node affinity (the score).

Quirks kept: an empty required node-selector term matches nothing, a
requirement Kubernetes refuses to parse fails its whole term, and such a
requirement in a preferred term fails the scorer itself.
"""

from __future__ import annotations

import re

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import affinity_of, cached_per_spec, canonical_text, list_at, mapping_at, pod_spec


_GO_INT = re.compile(r"[+-]?[0-9]+")


def _parse_go_int(text: object) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, decimal digits, int64 range."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    text = str(text)
    if not _GO_INT.fullmatch(text):
        return None
    number = int(text)
    return number if -2**63 <= number < 2**63 else None


_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def _valid_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: at most 63 characters, alphanumerics with '-', '_' or '.' inside."""
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


def _requirement_parses(expr: dict) -> bool:
    """Whether labels.NewRequirement accepts a node selector requirement.

    In / NotIn need values, Exists / DoesNotExist none, Gt / Lt exactly one
    integer; every value must be a valid label value (so a negative bound
    fails).  The API server checks only the operator and the number of values,
    so a pod can carry a requirement the scheduler refuses to parse.
    """
    op = expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op in ("In", "NotIn"):
        shape = bool(values)
    elif op in ("Exists", "DoesNotExist"):
        shape = not values
    elif op in ("Gt", "Lt"):
        shape = len(values) == 1 and _parse_go_int(values[0]) is not None
    else:
        return False
    return shape and all(_valid_label_value(v) for v in values)


def _node_requirement(expr: dict, labels: dict) -> bool:
    """One nodeSelectorRequirement against node labels.

    A requirement Kubernetes refuses to parse (:func:`_requirement_parses`)
    makes the whole term fail, which inside an AND is the same as this
    requirement failing.
    """
    if not _requirement_parses(expr):
        return False
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op in ("In", "NotIn"):
        present = key in labels and str(labels[key]) in values
        return present if op == "In" else not present
    if op in ("Exists", "DoesNotExist"):
        return (key in labels) == (op == "Exists")
    actual = _parse_go_int(labels[key]) if key in labels else None
    if actual is None:
        return False
    bound = _parse_go_int(values[0])
    assert bound is not None  # _requirement_parses checked it
    return actual > bound if op == "Gt" else actual < bound


def _field_parses(expr: dict) -> bool:
    """nodeSelectorRequirementsAsFieldSelector: only In / NotIn with exactly one value parse."""
    return expr.get("operator") in ("In", "NotIn") and len(expr.get("values") or []) == 1


def _field_requirement(expr: dict, node: Node) -> bool:
    """One matchFields requirement (metadata.name is the only field a node has)."""
    if not _field_parses(expr):
        return False
    actual = node.name if expr.get("key") == "metadata.name" else ""
    equal = actual == str((expr.get("values") or [])[0])
    return equal if expr.get("operator") == "In" else not equal


def _is_empty_term(term: dict) -> bool:
    return not list_at(term, "matchExpressions") and not list_at(term, "matchFields")


def _term_matches(term: dict, node: Node) -> bool:
    """A node selector term: the AND of its label expressions and field requirements."""
    labels = node.labels
    return (all(_node_requirement(e, labels) for e in list_at(term, "matchExpressions"))
            and all(_field_requirement(f, node) for f in list_at(term, "matchFields")))


@cached_per_spec
def _required_node_affinity(task: Task) -> dict | None:
    node_affinity = affinity_of(task, "nodeAffinity")
    if node_affinity is None:
        return None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return required if isinstance(required, dict) else None


@cached_per_spec
def has_node_selection(task: Task) -> bool:
    """Whether the NodeAffinity filter has anything to check (its PreFilter does not Skip)."""
    return pod_spec(task).get("nodeSelector") is not None or _required_node_affinity(task) is not None


@cached_per_spec
def node_selection_text(task: Task) -> bytes | str:
    """What :func:`matches_node_selector_and_affinity` reads of the pod, as canonical text: pods
    with equal texts get the same answer on every node."""
    return canonical_text([mapping_at(pod_spec(task), "nodeSelector"), _required_node_affinity(task)])


def matches_node_selector_and_affinity(task: Task, node: Node) -> bool:
    """nodeSelector (every label equal) AND required node affinity (OR over non-empty terms)."""
    labels = node.labels
    for key, value in mapping_at(pod_spec(task), "nodeSelector").items():
        if key not in labels or str(labels[key]) != str(value):
            return False
    required = _required_node_affinity(task)
    if required is None:
        return True
    return any(_term_matches(term, node) for term in list_at(required, "nodeSelectorTerms")
               if isinstance(term, dict) and not _is_empty_term(term))


def node_affinity_conflict(task: Task) -> bool:
    """The NodeAffinity PreFilter's "conflicting affinity to node names" failure.

    Every required term must pin ``metadata.name In`` (the names of one term
    intersect, terms union); if they all do and the union is empty, no node can
    ever match.  A term without such a requirement leaves every node eligible.
    """
    required = _required_node_affinity(task)
    if required is None:
        return False
    terms = list_at(required, "nodeSelectorTerms")
    if not terms:
        return False
    union: set[str] = set()
    for term in terms:
        names: set[str] | None = None
        for expr in list_at(term, "matchFields"):
            if expr.get("key") == "metadata.name" and expr.get("operator") == "In":
                values = {str(v) for v in expr.get("values") or []}
                names = values if names is None else names & values
        if names is None:
            return False
        union |= names
    return not union


def _preferred_node_terms(task: Task) -> list:
    node_affinity = affinity_of(task, "nodeAffinity")
    if node_affinity is None:
        return []
    return list_at(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution")


def _scored_preferred_terms(task: Task) -> list[tuple[int, dict]]:
    """The preferred terms NewPreferredSchedulingTerms keeps: (weight, preference), zero weights and
    empty preferences left out."""
    out = []
    for term in _preferred_node_terms(task):
        weight = int(term.get("weight") or 0) if isinstance(term, dict) else 0
        preference = mapping_at(term, "preference")
        if weight and not _is_empty_term(preference):
            out.append((weight, preference))
    return out


@cached_per_spec
def preferred_node_affinity_unparsable(task: Task) -> bool:
    """Whether NodeAffinity's PreScore fails: a kept preferred term holds a requirement Kubernetes
    refuses to parse.  Unlike the filter, which lets such a term match no node, the scorer
    returns the error, and Volcano's nodeorder plugin then fails its whole batch of scores."""
    return any(not all(_requirement_parses(e) for e in list_at(preference, "matchExpressions"))
               or not all(_field_parses(f) for f in list_at(preference, "matchFields"))
               for _weight, preference in _scored_preferred_terms(task))


def has_preferred_node_affinity(task: Task) -> bool:
    """Whether the NodeAffinity scorer runs (its PreScore skips pods without preferred terms)."""
    return bool(_preferred_node_terms(task))


def preferred_node_affinity_score(task: Task, node: Node) -> int:
    """Sum of weights of the preferred terms matching the node (zero-weight and empty terms ignored)."""
    return sum(weight for weight, preference in _scored_preferred_terms(task) if _term_matches(preference, node))
