"""What limits evictions, admissions and placements beyond requests and capacities.

PodDisruptionBudgets and ResourceQuotas (Volcano's pdb and resourcequota
plugins read them through informers), a queue's node-group affinity and
node-group resource limits (the nodegroup plugin).  fumarole reads them from the
cluster dump and offers them to policies as facts (runtime/schema.yaml:
``disruption_budgets``, ``namespace_quotas``, the Queue's node-group
attributes); what the plugins do with them is written in their policies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from fumarole.runtime.api.labels import Requirement, parse_selector, selects
from fumarole.runtime.api.model import Task
from fumarole.runtime.api.quantity import QuantityError, parse_quantity
from fumarole.runtime.api.resource import EPS, Resource


@dataclass(frozen=True)
class DisruptionBudget:
    """One policy/v1 PodDisruptionBudget: its selector and its status."""

    namespace: str
    name: str
    disruptions_allowed: int
    disrupted_pods: frozenset[str]
    selector: tuple[Requirement, ...] | None  # None: the selector selects nothing (missing or invalid)

    def covers(self, task: Task) -> bool:
        """The budget's selector is valid, not empty, and matches the pod's labels in its namespace."""
        return (self.namespace == task.namespace and bool(self.selector)
                and selects(list(self.selector or ()), task.labels))

    def has_disrupted(self, task: Task) -> bool:
        """status.disruptedPods names the pod: the API server already counted its eviction."""
        return task.name in self.disrupted_pods


def disruption_budget(obj: Mapping) -> DisruptionBudget:
    """The budget of a validated PodDisruptionBudget object."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    selector = parse_selector(spec.get("selector"), strict=True)
    return DisruptionBudget(str(meta.get("namespace") or "default"), str(meta.get("name")),
                            int(status.get("disruptionsAllowed") or 0),
                            frozenset(str(name) for name in status.get("disruptedPods") or {}),
                            None if selector is None else tuple(selector))


class ResourceList:
    """A Kubernetes ResourceList (resource name -> exact quantity) with quotav1's arithmetic.

    Names are compared as written (``cpu`` and ``requests.cpu`` are different names),
    quantities exactly, as the API server's quota code does.
    """

    __slots__ = ("amounts",)

    def __init__(self, amounts: Mapping[str, Fraction] | None = None) -> None:
        self.amounts: dict[str, Fraction] = dict(amounts or {})

    @classmethod
    def of(cls, raw: Any) -> "ResourceList":
        """The list of a validated mapping of quantities."""
        return cls({str(name): parse_quantity(q) for name, q in (raw or {}).items()})

    @property
    def names(self) -> list[str]:
        return list(self.amounts)

    def masked(self, names: list[str]) -> "ResourceList":
        """quotav1.Mask: only the named entries."""
        keep = set(names)
        return ResourceList({n: q for n, q in self.amounts.items() if n in keep})

    def plus(self, other: "ResourceList") -> "ResourceList":
        """quotav1.Add: the sum over the union of names."""
        out = dict(self.amounts)
        for name, q in other.amounts.items():
            out[name] = out.get(name, Fraction(0)) + q
        return ResourceList(out)

    def exceeding(self, limit: "ResourceList") -> list[str]:
        """quotav1.LessThanOrEqual's failures: names of ``limit`` this list has more of."""
        return [name for name, q in limit.amounts.items() if name in self.amounts and self.amounts[name] > q]

    def __repr__(self) -> str:
        return f"ResourceList({ {n: str(q) for n, q in self.amounts.items()} })"


@dataclass(frozen=True)
class NamespaceQuota:
    """status of one v1 ResourceQuota (what Volcano's NamespaceInfo keeps of it)."""

    namespace: str
    name: str
    hard: ResourceList
    used: ResourceList


def namespace_quota(obj: Mapping) -> NamespaceQuota:
    """The status of a validated ResourceQuota object."""
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    return NamespaceQuota(str(meta.get("namespace") or "default"), str(meta.get("name")),
                          ResourceList.of(status.get("hard")), ResourceList.of(status.get("used")))


# -- node groups (the nodegroup plugin) ------------------------------------------------

NODE_GROUP_LIMITS = "volcano.sh/nodegroup-resource-limits"


def queue_has_affinity(queue: Any) -> bool:
    """spec.affinity is set (even empty): the queue does not inherit an ancestor's node groups."""
    return isinstance(((queue.raw or {}).get("spec") or {}).get("affinity"), dict)


def queue_node_groups(queue: Any, kind: str, when: str) -> list[str]:
    """spec.affinity.<kind>.<when>: the node groups a queue names (kind nodeGroupAffinity or
    nodeGroupAntiAffinity, when required... or preferred...DuringSchedulingIgnoredDuringExecution)."""
    affinity = ((queue.raw or {}).get("spec") or {}).get("affinity")
    groups = ((affinity or {}).get(kind) or {}).get(when) if isinstance(affinity, dict) else None
    return [str(group) for group in groups] if isinstance(groups, list) else []


@dataclass(frozen=True)
class NodeGroupLimits:
    """The queue's volcano.sh/nodegroup-resource-limits annotation: per node group, the most its
    tasks there may request, on the resources the group's list names."""

    valid: bool  # false: the annotation is not a JSON map of resource lists (every node refuses)
    limits: Mapping[str, Resource]
    names: Mapping[str, tuple[str, ...]]

    def limited(self, group: str) -> bool:
        return group in self.limits

    def exceeded(self, group: str, used: Resource) -> list[str]:
        """The named resources ``used`` goes over the group's limit by at least Volcano's minimum
        (0.1): cpu, then memory, then the others."""
        limit, names = self.limits.get(group), self.names.get(group, ())
        if limit is None:
            return []
        order = [n for n in ("cpu", "memory") if n in names] + [n for n in names if n not in ("cpu", "memory")]
        return [n for n in order if used.get(n) > limit.get(n) and used.get(n) - limit.get(n) >= EPS]


def node_group_limits(queue: Any) -> NodeGroupLimits:
    """Read the annotation as Volcano's parseNodeGroupResourceLimits does."""
    raw = (queue.annotations or {}).get(NODE_GROUP_LIMITS, "")
    if not raw:
        return NodeGroupLimits(True, {}, {})
    try:
        # Numbers kept as written (Quantity.UnmarshalJSON parses their text); NaN and Infinity are
        # not JSON to Go.  A JSON null leaves Go's map nil, without an error: no limits.
        parsed = json.loads(raw, parse_int=str, parse_float=str, parse_constant=_not_json)
        if parsed is None:
            return NodeGroupLimits(True, {}, {})
        if not isinstance(parsed, dict):
            raise ValueError("not a map")
        limits, names = {}, {}
        for group, listed in parsed.items():
            if listed is not None and not isinstance(listed, dict):
                raise ValueError("not a resource list")
            listed = listed or {}
            limits[str(group)] = Resource.from_list({str(k): _json_quantity(v) for k, v in listed.items()})
            names[str(group)] = tuple(str(k) for k in listed)
    except (ValueError, QuantityError, TypeError, RecursionError):  # Go's decoder refuses past 10,000 levels
        return NodeGroupLimits(False, {}, {})
    return NodeGroupLimits(True, limits, names)


def _json_quantity(value: Any) -> Any:
    """A quantity as JSON may hold it (Quantity.UnmarshalJSON): a string or a number's text, or
    null, which is zero."""
    if value is None:
        return 0
    if not isinstance(value, str):
        raise ValueError("not a quantity")
    return value


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
