"""Kubernetes label selectors (``metav1.LabelSelector``): parsed once, matched against label maps.

Pod affinity terms, topology spread constraints, PodGroup sub-group policies
and HyperNode members all select by labels with the same rules.
"""

from __future__ import annotations

import re
from typing import Any

Requirement = tuple[str, str, tuple[str, ...]]

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _is_label_key(key: str) -> bool:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix and '/', then a name of at most 63."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix) or "/" in prefix):
        return False
    return 0 < len(name) <= 63 and _NAME.fullmatch(name) is not None


def _is_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: empty, or a name of at most 63 characters."""
    return value == "" or (len(value) <= 63 and _NAME.fullmatch(value) is not None)


def _valid_requirement(key: str, op: str, values: tuple[str, ...]) -> bool:
    """labels.NewRequirement's checks: the key's and values' syntax, and the operator's arity."""
    if not _is_label_key(key) or not all(_is_label_value(v) for v in values):
        return False
    return bool(values) if op in ("In", "NotIn") else not values


def parse_selector(raw: Any, strict: bool = False) -> list[Requirement] | None:
    """metav1.LabelSelectorAsSelector: absent -> nothing, {} -> everything, bad operator -> nothing.

    ``strict`` adds the rest of its validation (labels.NewRequirement), for
    selectors the API server does not check (a HyperNode's ``labelMatch``, a
    PodGroup's sub-group ``labelSelector``: neither Volcano's webhooks nor its
    CRDs validate them) or that a dump may carry unchecked (a
    PodDisruptionBudget's): In / NotIn without values, Exists / DoesNotExist
    with some, a key that is not a qualified name, a value that is not a label
    value, or a malformed expression select nothing.
    """
    if not isinstance(raw, dict):
        return None
    labels = raw.get("matchLabels")
    reqs: list[Requirement] = [(str(k), "In", (str(v),)) for k, v in (labels if isinstance(labels, dict) else {}).items()]
    expressions = raw.get("matchExpressions")
    for expr in expressions if isinstance(expressions, list) else []:
        op = expr.get("operator") if isinstance(expr, dict) else None
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return None
        raw_values = expr.get("values") or []
        if strict and not (isinstance(raw_values, list) and isinstance(expr.get("key"), str)):
            return None
        values = tuple(str(v) for v in raw_values)
        reqs.append((str(expr.get("key")), op, values))
    if strict and not all(_valid_requirement(*req) for req in reqs):
        return None
    return reqs


def selects(selector: list[Requirement] | None, labels: dict) -> bool:
    if selector is None:
        return False
    for key, op, values in selector:
        present = key in labels
        if op == "In" and not (present and str(labels[key]) in values):
            return False
        if op == "NotIn" and present and str(labels[key]) in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
