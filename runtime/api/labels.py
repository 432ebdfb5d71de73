"""Kubernetes label selectors (``metav1.LabelSelector``): parsed once, matched against label maps.

Pod affinity terms, topology spread constraints, PodGroup sub-group policies
and HyperNode members all select by labels with the same rules.
"""

from __future__ import annotations

from typing import Any

Requirement = tuple[str, str, tuple[str, ...]]


def parse_selector(raw: Any, strict: bool = False) -> list[Requirement] | None:
    """metav1.LabelSelectorAsSelector: absent -> nothing, {} -> everything, bad operator -> nothing.

    ``strict`` adds the rest of its validation, for objects the API server did
    not check for us (a PodDisruptionBudget's selector): In / NotIn without
    values, Exists / DoesNotExist with some, or a malformed expression select
    nothing.
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
        if strict and not isinstance(raw_values, list):
            return None
        values = tuple(str(v) for v in raw_values)
        if strict and (op in ("In", "NotIn") and not values or op in ("Exists", "DoesNotExist") and values):
            return None
        reqs.append((str(expr.get("key")), op, values))
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
