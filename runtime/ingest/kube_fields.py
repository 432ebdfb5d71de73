"""The fields fumarole reads from each kind of Kubernetes object, and the type each must have.

Kubernetes' API server guarantees every field's type; a cluster dump written by
hand or by another program does not.  So before an object is converted
(``kube_convert.py``), every field the conversion reads is checked against a
per-kind table, in one walk of the object (a compiled check, ``fast_checks.py``,
when all is well).  The tables change with the fields the conversion reads, not
with how a cluster is assembled, so they live apart from both.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Iterable, Iterator

from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.fast_checks import all_typed
from fumarole.runtime.api.quoting import clip
from fumarole.runtime.ingest.kube_convert import ObjectReader, parse_time


# The fields fumarole reads, per kind, with the type Kubernetes gives them: a value of another
# type is reported (K007) at its place instead of failing later while the session is built or
# runs, and a structure fumarole does not read is left alone.  A path's "*" is every item of a
# list or every value of a mapping.  ``scalar`` is any text, number or boolean (fumarole reads
# names and label values as text; YAML may have read `name: 12` as a number).
def _under(prefix: str, table: tuple) -> tuple:
    """``table``'s paths below ``prefix`` ("" in a table is the place itself)."""
    return tuple((f"{prefix}.{path}" if path else prefix, kind) for path, kind in table)


_REQUIREMENTS = (("", "list"), ("*", "map"), ("*.key", "scalar"), ("*.operator", "scalar"), ("*.values", "list"),
                 ("*.values.*", "scalar"))
_NODE_SELECTOR_TERM = (("", "map"), *_under("matchExpressions", _REQUIREMENTS), *_under("matchFields", _REQUIREMENTS))
_LABEL_SELECTOR = (("", "map"), ("matchLabels", "map"), ("matchLabels.*", "scalar"),
                   *_under("matchExpressions", _REQUIREMENTS))
_POD_AFFINITY_TERM = (("", "map"), *_under("labelSelector", _LABEL_SELECTOR), ("topologyKey", "scalar"),
                      ("namespaces", "list"), ("namespaces.*", "scalar"), *_under("namespaceSelector", _LABEL_SELECTOR))
_REQUIRED, _PREFERRED = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
_POD_AFFINITY = (("", "map"), (_REQUIRED, "list"), *_under(_REQUIRED + ".*", _POD_AFFINITY_TERM),
                 (_PREFERRED, "list"), (_PREFERRED + ".*", "map"), (_PREFERRED + ".*.weight", "int"),
                 *_under(_PREFERRED + ".*.podAffinityTerm", _POD_AFFINITY_TERM))
_AFFINITY = (("", "map"), ("nodeAffinity", "map"), (f"nodeAffinity.{_REQUIRED}", "map"),
             (f"nodeAffinity.{_REQUIRED}.nodeSelectorTerms", "list"),
             *_under(f"nodeAffinity.{_REQUIRED}.nodeSelectorTerms.*", _NODE_SELECTOR_TERM),
             (f"nodeAffinity.{_PREFERRED}", "list"), (f"nodeAffinity.{_PREFERRED}.*", "map"),
             (f"nodeAffinity.{_PREFERRED}.*.weight", "int"),
             *_under(f"nodeAffinity.{_PREFERRED}.*.preference", _NODE_SELECTOR_TERM),
             *_under("podAffinity", _POD_AFFINITY), *_under("podAntiAffinity", _POD_AFFINITY))
_NODE_GROUP_KINDS = ("nodeGroupAffinity", "nodeGroupAntiAffinity")
_TOLERATION = (("", "map"), ("key", "scalar"), ("operator", "scalar"), ("value", "scalar"), ("effect", "scalar"),
               ("tolerationSeconds", "int"))
_SPREAD = (("", "map"), ("maxSkew", "int"), ("minDomains", "int"), ("topologyKey", "scalar"),
           ("whenUnsatisfiable", "scalar"), ("nodeAffinityPolicy", "scalar"), ("nodeTaintsPolicy", "scalar"),
           ("matchLabelKeys", "list"), ("matchLabelKeys.*", "scalar"), *_under("labelSelector", _LABEL_SELECTOR))
_CONDITIONS = (("", "list"), ("*", "map"), ("*.type", "scalar"), ("*.status", "scalar"), ("*.reason", "scalar"),
               ("*.message", "scalar"), ("*.lastTransitionTime", "time"))
_CONTAINER = (("", "map"), ("resources", "map"), ("ports", "list"), ("ports.*", "map"),
              ("ports.*.hostPort", "int"), ("ports.*.protocol", "scalar"), ("ports.*.hostIP", "scalar"),
              ("restartPolicy", "scalar"), ("image", "scalar"))
_COMMON_FIELDS = (("metadata", "map"), ("metadata.name", "scalar"), ("metadata.namespace", "scalar"),
                  ("metadata.uid", "scalar"), ("metadata.creationTimestamp", "time"),
                  ("metadata.labels", "map"), ("metadata.labels.*", "scalar"),
                  ("metadata.annotations", "map"), ("metadata.annotations.*", "scalar"),
                  ("spec", "map"), ("status", "map"))
_TYPED_FIELDS: dict[str, tuple] = {
    "Node": (("metrics", "map"), ("metrics.time", "time"), ("metrics.cpu", "map"), ("metrics.cpu.*", "number"),
             ("metrics.memory", "map"), ("metrics.memory.*", "number"), ("spec.taints", "list"), ("spec.taints.*", "map"), ("spec.taints.*.key", "scalar"),
             ("spec.taints.*.value", "scalar"), ("spec.taints.*.effect", "scalar"),
             ("spec.unschedulable", "bool"), ("status.images", "list"), ("status.images.*", "map"),
             ("status.images.*.names", "list"), ("status.images.*.names.*", "scalar"),
             ("status.images.*.sizeBytes", "int"), *_under("status.conditions", _CONDITIONS)),
    "Pod": (("metadata.deletionTimestamp", "time"), ("spec.priority", "int"), ("spec.nodeName", "scalar"),
            ("spec.priorityClassName", "scalar"), ("spec.preemptionPolicy", "scalar"),
            ("spec.containers", "list"), ("spec.initContainers", "list"),
            *_under("spec.containers.*", _CONTAINER), *_under("spec.initContainers.*", _CONTAINER),
            ("spec.nodeSelector", "map"), ("spec.nodeSelector.*", "scalar"), *_under("spec.affinity", _AFFINITY),
            ("spec.tolerations", "list"), *_under("spec.tolerations.*", _TOLERATION), ("spec.schedulingGates", "list"),
            ("spec.topologySpreadConstraints", "list"), *_under("spec.topologySpreadConstraints.*", _SPREAD),
            ("spec.volumes", "list"), ("spec.volumes.*", "map"), ("status.phase", "scalar"),
            ("status.startTime", "time"), ("status.nominatedNodeName", "scalar"),
            *_under("status.conditions", _CONDITIONS)),
    "PodGroup": (("spec.minMember", "int"), ("spec.minTaskMember", "map"), ("spec.minTaskMember.*", "int"),
                 ("spec.networkTopology", "map"), ("spec.networkTopology.highestTierAllowed", "int"),
                 ("spec.networkTopology.mode", "scalar"), ("spec.networkTopology.highestTierName", "scalar"),
                 ("spec.subGroupPolicy", "list"), ("spec.subGroupPolicy.*", "map"),
                 ("spec.subGroupPolicy.*.subGroupSize", "int"), ("spec.subGroupPolicy.*.minSubGroups", "int"),
                 ("spec.subGroupPolicy.*.matchLabelKeys", "list"),
                 ("spec.queue", "scalar"), ("spec.priorityClassName", "scalar"), ("status.phase", "scalar"),
                 *_under("status.conditions", _CONDITIONS)),
    "Queue": (("spec.weight", "int"), ("spec.priority", "int"), ("spec.reclaimable", "bool"),
              ("spec.parent", "scalar"), ("spec.guarantee", "map"), ("status.state", "scalar"),
              ("spec.affinity", "map"), *((f"spec.affinity.{kind}", "map") for kind in _NODE_GROUP_KINDS),
              *((f"spec.affinity.{kind}.{when}", "list") for kind in _NODE_GROUP_KINDS for when in (_REQUIRED, _PREFERRED)),
              *((f"spec.affinity.{kind}.{when}.*", "scalar") for kind in _NODE_GROUP_KINDS for when in (_REQUIRED, _PREFERRED))),
    "PriorityClass": (("value", "int"), ("globalDefault", "bool")),
    "ResourceQuota": (("status.hard", "map"), ("status.used", "map")),
    "HyperNode": (),
    "Numatopology": (("spec.policies", "map"), ("spec.policies.*", "scalar"), ("spec.resReserved", "map"),
                     ("spec.resReserved.*", "scalar"), ("spec.numares", "map"), ("spec.numares.*", "map"),
                     ("spec.numares.*.allocatable", "scalar"), ("spec.numares.*.capacity", "int"),
                     ("spec.cpuDetail", "map"), ("spec.cpuDetail.*", "map"), ("spec.cpuDetail.*.numa", "int"),
                     ("spec.cpuDetail.*.socket", "int"), ("spec.cpuDetail.*.core", "int"),
                     ("spec.podAllocations", "list"), ("spec.podAllocations.*", "map"),
                     ("spec.podAllocations.*.uid", "scalar"), ("spec.podAllocations.*.name", "scalar"),
                     ("spec.podAllocations.*.namespace", "scalar")),
    "NodeShard": (("spec.nodesDesired", "list"), ("spec.nodesDesired.*", "scalar"),
                  ("status.nodesInUse", "list"), ("status.nodesInUse.*", "scalar")),
    "PodDisruptionBudget": (*_under("spec.selector", _LABEL_SELECTOR), ("status.disruptionsAllowed", "int"),
                            ("status.disruptedPods", "map"), ("status.disruptedPods.*", "time")),
}
_TYPE_NAMES = {"time": "an RFC 3339 time", "map": "a mapping", "list": "a list", "bool": "true or false",
               "number": "a number",
               "int": "an integer", "scalar": "a string or a number"}


def _is_typed(value: Any, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "map":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list)
    if kind == "scalar":
        return isinstance(value, (str, int, float, _dt.date))
    if kind == "number":
        if isinstance(value, int) and not isinstance(value, bool):
            return -2**63 <= value < 2**63
        return isinstance(value, float) and math.isfinite(value)
    try:
        parse_time(value)
        return True
    except (TypeError, ValueError, OverflowError):
        return False


def _tree(table: tuple) -> dict:
    """A path table as a tree: segment -> (type name or None, subtree), so one walk checks an object."""
    root: dict = {}
    for path, type_name in table:
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, [None, {}])[1]
        node.setdefault(parts[-1], [None, {}])[0] = type_name
    return root


_TREES = {kind: _tree(_COMMON_FIELDS + fields) for kind, fields in _TYPED_FIELDS.items()}
_ALL_TYPED = {kind: all_typed(tree, lambda value: _is_typed(value, "time")) for kind, tree in _TREES.items()}


def _mistyped(value: Any, tree: dict, label: str = "") -> Iterator[tuple[Any, Any, str, str]]:
    """(container, key, dotted path, expected type) of every value under ``value`` of the wrong type;
    what lies under a mistyped value is not looked at."""
    for segment, (type_name, subtree) in tree.items():
        items: Iterable[tuple[Any, Any]]
        if segment == "*":
            items = enumerate(value) if isinstance(value, list) else value.items() if isinstance(value, dict) else ()
        elif isinstance(value, dict) and value.get(segment) is not None:  # null: unset, as Kubernetes reads it
            items = ((segment, value[segment]),)
        else:
            continue
        for key, item in items:
            where = f"{label}[{key}]" if isinstance(value, list) else f"{label}.{key}"
            if type_name is not None and not _is_typed(item, type_name):
                yield value, key, where.lstrip("."), type_name
            elif subtree:
                yield from _mistyped(item, subtree, where)


def fields_are_typed(kind: str, obj: dict, reader: ObjectReader) -> bool:
    """Whether every field of ``obj`` that fumarole reads has its type; a K007 at each that has not."""
    if _ALL_TYPED[kind](obj):
        return True
    ok = True
    for owner, key, where, type_name in _mistyped(obj, _TREES[kind]):
        name = obj["metadata"].get("name") if isinstance(obj.get("metadata"), dict) else None
        subject = f"{kind} {clip(str(name))}" if _is_typed(name, "scalar") else f"a {kind}"
        reader.report(kube_errors.field_mistyped(reader.file, reader.at(owner, key), where, subject,
                                                 _TYPE_NAMES[type_name], owner[key]))
        ok = False
    return ok
