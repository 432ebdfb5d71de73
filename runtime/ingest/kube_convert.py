"""One Kubernetes object to one model object, as Volcano's cache builds its infos.

A Pod becomes a Task (``NewTaskInfo``: the pod's request with init containers
and overhead, priority, preemptable and revocable-zone annotations, status), a
PodGroup a Job, a Queue a Queue, a Node a Node.  Each function reads one object
and nothing about the rest of the cluster; given an :class:`ObjectReader`, a
quantity that does not parse is a positioned diagnostic instead of an
exception.  Assembling and checking a whole cluster is ``kube.py``'s job; the
type of every field read here is checked before (``kube_fields.py``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Iterator

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.api.labels import parse_selector, selects
from fumarole.runtime.api.model import (
    BOUND,
    FAILED,
    PENDING,
    RELEASING,
    RUNNING,
    SUCCEEDED,
    UNKNOWN,
    Job,
    NetworkTopology,
    Node,
    Queue,
    SubGroupPolicy,
    Task,
)
from fumarole.runtime.api.quantity import QuantityError
from fumarole.runtime.api.resource import Resource, all_text
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.go_parse import parse_go_bool
from fumarole.runtime.ingest.yamlpos import key_position, position

GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"
TASK_PRIORITY = "volcano.sh/task-priority"
PREEMPTABLE = "volcano.sh/preemptable"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
DEFAULT_QUEUE = "default"


def pod_revocable_zone(annotations: dict) -> str:
    """GetPodRevocableZone: "*" when the pod may run on revocable nodes (tdm), else "".

    Only the annotation counts: volcano.sh/revocable-zone must be exactly "*";
    without it, volcano.sh/preemptable: "true" means "*" too.
    """
    if REVOCABLE_ZONE in annotations:
        return "*" if annotations[REVOCABLE_ZONE] == "*" else ""
    return "*" if parse_go_bool(annotations.get(PREEMPTABLE, "")) else ""


def parse_time(value: object) -> float:
    """creationTimestamp as seconds since the epoch (0 when unset)."""
    if value in (None, ""):
        return 0.0
    if isinstance(value, _dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        return stamp.timestamp()
    text = str(value).replace("Z", "+00:00")
    return _dt.datetime.fromisoformat(text).timestamp()


class ObjectReader:
    """Collects diagnostics while reading one file's objects: the one positioned reader of every
    YAML input (cluster dumps, traces, sweeps, a scenario's process state).  It finds where a
    problem is; the problem's words are its constructor's (``kube_errors``, ``trace_errors``,
    ``process_state_errors``), called with the reader's file and that place."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.diagnostics: list[Diagnostic] = []

    @staticmethod
    def at(where: Any, key: Any = None) -> Span:
        """Where ``where`` is in the file, or its ``key``'s value when given."""
        return Span(*position(where, key))

    @staticmethod
    def at_key(owner: Any, key: Any) -> Span:
        """Where the key itself is (an unknown or misplaced one)."""
        return Span(*key_position(owner, key))

    def report(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def resources(self, owner: dict, key: str, what: str) -> Resource | None:
        raw = owner.get(key) if isinstance(owner, dict) else None
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.report(kube_errors.resources_not_a_map(self.file, self.at(owner, key), f"{what}.{key}"))
            return Resource()
        try:
            return Resource.from_list(raw)
        except QuantityError:
            name, exc = next(_bad_quantities(raw))  # the first, for the diagnostic
            self.report(kube_errors.bad_quantity(self.file, self.at(raw, name), f"{what}.{key}.{name}", exc))
            return Resource()


def _bad_quantities(resources: dict) -> Iterator[tuple[Any, QuantityError]]:
    """(name, error) of each quantity of a resource list that does not parse, in order."""
    for name, amount in resources.items():
        try:
            Resource.from_list({name: amount})
        except QuantityError as exc:
            yield name, exc


def mapping_field(obj: Any, key: str) -> dict:
    """``obj[key]`` when both are mappings, else an empty one: a missing part reads as unset."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


# Pod requests already summed, by the containers' resource lists (see _requests_key).
_POD_REQUESTS: dict[tuple, Resource] = {}
_POD_REQUESTS_LIMIT = 4096


def _requests_key(spec: dict) -> tuple | None:
    """What a pod's request depends on, when that is only its containers' resource lists (the
    pods of a job all have the same); None for anything else, summed afresh each time."""
    if spec.get("initContainers") or spec.get("overhead") or spec.get("resources"):
        return None
    containers = spec.get("containers") or ()
    if not isinstance(containers, list):
        return None
    key: list[tuple] = []
    for container in containers:
        resources = container.get("resources") if isinstance(container, dict) else None
        requests = resources.get("requests") if isinstance(resources, dict) else None
        if requests is None:
            key.append(())
        elif isinstance(requests, dict):
            key.append(tuple(requests.items()))
        else:  # reported (K004) where it is summed
            return None
    return tuple(key)


def pod_request(spec: dict, reader: ObjectReader | None = None, where: str = "pod",
                status: dict | None = None) -> Resource:
    """Volcano's pod request (GetPodResourceRequest): containers, init containers (sidecars
    included), pods: 1, the pod-level requests, overhead.

    ``status``: the pod's status, whose container statuses carry in-place resizes.
    Requests of texts already summed are cloned (only those are kept: see resource._PARSED)."""
    resized = _resized_containers(status)
    if resized:
        return _summed_request(spec, reader, where, resized, resize_infeasible(status))
    key = _requests_key(spec)
    try:
        known = _POD_REQUESTS.get(key) if key is not None else None
    except TypeError:  # a list or mapping where a quantity belongs: reported where it is summed
        key = known = None
    if known is not None:
        return known.clone()
    reported = len(reader.diagnostics) if reader is not None else 0
    total = _summed_request(spec, reader, where)
    if key is not None and (reader is None or len(reader.diagnostics) == reported) and all(map(all_text, key)):
        if len(_POD_REQUESTS) >= _POD_REQUESTS_LIMIT:
            _POD_REQUESTS.clear()
        _POD_REQUESTS[key] = total.clone()
    return total


def _summed_request(spec: dict, reader: ObjectReader | None, where: str,
                    resized: Resized | None = None, infeasible: bool = False) -> Resource:
    total = _containers_total(spec, reader, where, "requests", resized, infeasible)
    total.add(Resource(scalars={"pods": 1.0}))
    _apply_pod_level(total, spec, reader, where)
    if reader is not None:
        total.add(reader.resources(spec, "overhead", f"{where}.spec") or Resource())
    elif spec.get("overhead"):
        total.add(Resource.from_list(spec["overhead"]))
    return total


def pod_limit(spec: dict, status: dict | None = None) -> Resource:
    """Volcano's GetPodResourceLimit: the containers' limits summed (a container whose status
    reports resources: the larger of its spec's and its status's limits), init containers
    (sidecars included) as for requests, the pod-level limits, and the overhead added to the
    dimensions that have a limit.  Raises QuantityError for a limit that is not a quantity."""
    total = _containers_total(spec, None, "pod", "limits", _resized_containers(status))
    _apply_pod_level(total, spec, None, "pod", "limits")
    overhead = Resource.from_list(spec.get("overhead") or {}) if isinstance(spec.get("overhead"), dict) else None
    if overhead is not None:
        if total.milli_cpu != 0:
            total.milli_cpu += overhead.milli_cpu
        if total.memory != 0:
            total.memory += overhead.memory
        scalars = total.scalars or {}
        for name, amount in (overhead.scalars or {}).items():
            if scalars.get(name, 0) != 0:
                scalars[name] += amount
    return total


# Per container group ("containers", "initContainers"), each container status that reports
# resources, by container name: (its index in the status list, the status).
Resized = dict[str, dict[str, tuple[int, dict]]]

_STATUS_GROUPS = (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses"))
_STATUS_FIELD = dict(_STATUS_GROUPS)

# Pod-level resources Kubernetes supports (component-helpers IsSupportedPodLevelResource).
_POD_LEVEL = ("cpu", "memory")
_HUGE_PAGES = "hugepages-"


def _resized_containers(status: dict | None) -> Resized:
    """The container statuses a resize reads, InPlacePodVerticalScaling being on (GA in the
    Kubernetes Volcano builds with): one whose ``resources`` is set, as Volcano's
    ``cs.Resources != nil`` asks (pod_info.go aggregateRegularContainerResourceRequests)."""
    found: Resized = {}
    if not status:
        return found
    for group, field in _STATUS_GROUPS:
        statuses = status.get(field)
        for i, cs in enumerate(statuses if isinstance(statuses, list) else ()):
            if isinstance(cs, dict) and cs.get("resources") is not None:
                found.setdefault(group, {})[str(cs.get("name"))] = (i, cs)
    return found


def _read_list(owner: dict, key: str, reader: ObjectReader | None, what: str) -> Resource:
    """``owner[key]`` as a resource list, reported through ``reader`` when it is not one
    (without a reader a bad quantity raises QuantityError, as the containers' own lists do)."""
    if reader is not None:
        return reader.resources(owner, key, what) or Resource()
    raw = owner.get(key)
    return Resource.from_list(raw if isinstance(raw, dict) else {})


def resize_infeasible(status: dict | None) -> bool:
    """component-helpers IsPodResizeInfeasible: the first PodResizePending condition's reason."""
    conditions = (status or {}).get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Infeasible"
    return False


def _status_list(owner: dict, key: str) -> Resource:
    """A resource list of a container status; one that is not a list of quantities counts as
    none here (task_from_pod reports it at load: _check_lists)."""
    raw = owner.get(key)
    try:
        return Resource.from_list(raw if isinstance(raw, dict) else {})
    except QuantityError:
        return Resource()


def _apply_pod_level(total: Resource, spec: dict, reader: ObjectReader | None, where: str,
                     key: str = "requests") -> None:
    """amendResourceAccordingToPodFeatures and its limits twin (PodLevelResources on, beta and
    on by default): each supported pod-level request (limit) replaces the containers' sum of
    that resource."""
    resources = mapping_field(spec, "resources")
    listed = mapping_field(resources, key)
    supported = [name for name in listed if name in _POD_LEVEL or str(name).startswith(_HUGE_PAGES)]
    if not supported:
        return
    pod_level = _read_list(resources, key, reader, f"{where}.spec.resources")
    for name in supported:
        if name == "cpu":
            total.milli_cpu = pod_level.milli_cpu
        elif name == "memory":
            total.memory = pod_level.memory
        else:
            scalars = dict(total.scalars or {})
            scalars[name] = pod_level.get(name)
            total.scalars = scalars


def _containers_total(spec: dict, reader: ObjectReader | None, where: str, key: str,
                      resized: Resized | None = None, infeasible: bool = False) -> Resource:
    """One resource list of the containers (`requests` or `limits`) summed, with the init
    containers' peak: a sidecar (restartPolicy Always) adds to the pod and to every later init
    container, any other init container counts alone with the sidecars before it.

    ``resized``: a container (or sidecar) whose status reports resources asks for
    determineContainerReqs' request, the largest of its spec's, its status's and its allocated
    requests (without the spec's when the resize is infeasible)."""
    def listed(container: dict, index: int, group: str) -> Resource:
        resources = mapping_field(container, "resources")
        if reader is not None:
            return reader.resources(resources, key, f"{where}.spec.{group}[{index}].resources") or Resource()
        raw = resources.get(key)
        return Resource.from_list(raw if isinstance(raw, dict) else {})

    def effective(container: dict, index: int, group: str) -> Resource:
        own = listed(container, index, group)
        if group == "initContainers" and container.get("restartPolicy") != "Always":
            return own  # only sidecars read their status
        found = (resized or {}).get(group, {}).get(str(container.get("name")))
        if found is None:
            return own
        status = found[1]
        wanted = Resource() if infeasible else own
        wanted.set_max(_status_list(mapping_field(status, "resources"), key))
        if key == "requests":
            wanted.set_max(_status_list(status, "allocatedResources"))
        return wanted

    return sidecar_aggregate(spec, effective)


def sidecar_aggregate(spec: dict, amount_of: Callable[[dict, int, str], Resource]) -> Resource:
    """Kubernetes' aggregation of a pod's containers (the sidecar KEP's formula, which Volcano's
    pod_info.go and component-helpers share): the containers and the restartable (sidecar) init
    containers add up, each ordinary init container runs alongside the sidecars started before
    it, and the pod needs the larger of the two.  ``amount_of(container, index, group)``: what
    one container counts ("containers" or "initContainers")."""
    def listed(group: str) -> list:
        containers = spec.get(group)
        return containers if isinstance(containers, list) else []

    total = Resource()
    for i, container in enumerate(listed("containers")):
        total.add(amount_of(container, i, "containers"))
    sidecars, peak = Resource(), Resource()
    for i, container in enumerate(listed("initContainers")):
        amount = amount_of(container, i, "initContainers")
        if container.get("restartPolicy") == "Always":
            total.add(amount)
            sidecars.add(amount)
            peak.set_max(sidecars)
        else:
            peak.set_max(amount.clone().add(sidecars))
    return total.set_max(peak)


def _task_status(phase: str, deleting: bool, node_name: str) -> str:
    if phase == "Running":
        return RELEASING if deleting else RUNNING
    if phase == "Pending":
        if deleting:
            return RELEASING
        return BOUND if node_name else PENDING
    if phase == "Succeeded":
        return SUCCEEDED
    if phase == "Failed":
        return FAILED
    return UNKNOWN


def _check_lists(spec: dict, status: dict, reader: ObjectReader, where: str) -> None:
    """Container limits must be quantities too: deviceshare reads its requests from them, and
    usage the pod's limits (with the pod-level ones and those a resize reports); so must every
    container status's resource lists, which the pod's request and Kubernetes' view of the pod
    read."""
    for group in ("containers", "initContainers"):
        containers = spec.get(group)
        for i, container in enumerate(containers if isinstance(containers, list) else ()):
            resources = container.get("resources") if isinstance(container, dict) else None
            if isinstance(resources, dict) and "limits" in resources:
                reader.resources(resources, "limits", f"{where}.spec.{group}[{i}].resources")
    reader.resources(mapping_field(spec, "resources"), "limits", f"{where}.spec.resources")
    for field in _STATUS_FIELD.values():
        statuses = status.get(field)
        for i, cs in enumerate(statuses if isinstance(statuses, list) else ()):
            place = f"{where}.status.{field}[{i}]"
            for key in ("requests", "limits"):
                reader.resources(mapping_field(cs, "resources"), key, f"{place}.resources")
            reader.resources(cs, "allocatedResources", place)


def task_from_pod(pod: dict, reader: ObjectReader | None = None) -> Task:
    """Volcano's NewTaskInfo for one Pod object."""
    meta, spec, status = mapping_field(pod, "metadata"), mapping_field(pod, "spec"), mapping_field(pod, "status")
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    group = annotations.get(GROUP_NAME) or ""
    request = pod_request(spec, reader, f"Pod {namespace}/{name}", status)
    if reader is not None:
        _check_lists(spec, status, reader, f"Pod {namespace}/{name}")
    priority = spec.get("priority")
    task_priority = 1 if priority is None else int(priority)
    override = annotations.get(TASK_PRIORITY)
    if override is not None:
        try:
            value = int(str(override))
            if -2**31 <= value < 2**31:
                task_priority = value
        except ValueError:
            pass
    raw_preemptable = annotations.get(PREEMPTABLE, labels.get(PREEMPTABLE))
    preemptable = True if raw_preemptable is None else bool(parse_go_bool(raw_preemptable))
    node_name = str(spec.get("nodeName") or "")
    return Task(
        uid=str(meta.get("uid") or f"{namespace}-{name}"),
        name=name,
        namespace=namespace,
        key=f"{namespace}/{name}",
        job_id=f"{namespace}/{group}" if group else "",
        role=str(annotations.get(TASK_SPEC) or labels.get(TASK_SPEC) or ""),
        request=request,
        init_request=request.clone(),
        best_effort=request.is_empty(),
        preemptable=preemptable,
        priority=task_priority,
        pod_priority=0 if priority is None else int(priority),
        gated=bool(spec.get("schedulingGates")),
        node_name=node_name,
        status=_task_status(str(status.get("phase") or ""), bool(meta.get("deletionTimestamp")), node_name),
        preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
        nominated_node=str(status.get("nominatedNodeName") or ""),
        priority_class=str(spec.get("priorityClassName") or ""),
        creation=parse_time(meta.get("creationTimestamp")),
        labels=dict(labels),
        annotations=dict(annotations),
        pod=pod,
        revocable_zone=pod_revocable_zone(annotations),
    )


def empty_task() -> Task:
    """The `preemptor: null` of hook cases: no pod, no job, no resources."""
    return task_from_pod({"metadata": {"name": "", "namespace": "", "uid": ""}, "spec": {}})


def job_from_pod_group(pg: dict, priorities: dict[str, int], default_priority: int | None,
                       reader: ObjectReader | None = None, default_queue: str = DEFAULT_QUEUE) -> Job:
    """Volcano's JobInfo for one PodGroup (without tasks)."""
    meta, spec, status = mapping_field(pg, "metadata"), mapping_field(pg, "spec"), mapping_field(pg, "status")
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    where = f"PodGroup {namespace}/{name}"
    if reader is not None:
        min_resources = reader.resources(spec, "minResources", f"{where}.spec")
    else:
        min_resources = Resource.parse(spec.get("minResources"))
    task_min = {str(k): int(v) for k, v in (spec.get("minTaskMember") or {}).items()}
    class_name = spec.get("priorityClassName") or ""
    priority = priorities.get(class_name) if class_name else None
    if priority is None:
        priority = default_priority if default_priority is not None else 0
    annotations, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    raw_preemptable = annotations.get(PREEMPTABLE, labels.get(PREEMPTABLE))
    policies = sub_group_policies(spec.get("subGroupPolicy"))
    return Job(
        uid=f"{namespace}/{name}",
        name=name,
        namespace=namespace,
        queue=str(spec.get("queue") or default_queue),
        min_available=int(spec.get("minMember") or 0),
        task_min_available=task_min,
        task_min_available_total=sum(task_min.values()),
        priority=priority,
        priority_class=str(class_name),
        creation=parse_time(meta.get("creationTimestamp")),
        min_resources=min_resources,
        preemptable=bool(parse_go_bool(raw_preemptable)) if raw_preemptable is not None else False,
        phase=str(status.get("phase") or ""),
        conditions=list(status.get("conditions") or []),
        pod_group=pg,
        annotations=dict(annotations),
        labels=dict(labels),
        network_topology=network_topology(spec.get("networkTopology")),
        sub_group_policies=policies,
        min_sub_jobs={f"{namespace}/{name}/{p.name}": p.min_sub_groups for p in policies},
    )


def _int_or(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def network_topology(raw: object) -> NetworkTopology | None:
    """spec.networkTopology (mode, highestTierAllowed, highestTierName), or None when absent."""
    if not isinstance(raw, dict):
        return None
    return NetworkTopology(str(raw.get("mode") or "hard"), _int_or(raw.get("highestTierAllowed"), None),
                           str(raw.get("highestTierName") or ""))


def sub_group_policies(raw: object) -> tuple[SubGroupPolicy, ...]:
    """spec.subGroupPolicy: sub-jobs by matchLabelKeys (and an optional labelSelector)."""
    out = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict):
            continue
        keys = entry.get("matchLabelKeys")
        selector = None
        if entry.get("labelSelector") is not None:
            parsed = parse_selector(entry.get("labelSelector"), strict=True)  # invalid: no pod matches
            selector = lambda labels, parsed=parsed: selects(parsed, labels)  # noqa: E731
        out.append(SubGroupPolicy(str(entry.get("name") or ""), _int_or(entry.get("subGroupSize"), 1) or 0,
                                  _int_or(entry.get("minSubGroups"), 0) or 0,
                                  tuple(str(k) for k in keys) if isinstance(keys, list) else (),
                                  selector, network_topology(entry.get("networkTopology"))))
    return tuple(out)


def queue_from_object(obj: dict, reader: ObjectReader | None = None) -> Queue:
    meta, spec, status = mapping_field(obj, "metadata"), mapping_field(obj, "spec"), mapping_field(obj, "status")
    name = str(meta.get("name") or "")
    where = f"Queue {name}.spec"

    def res(owner: dict, key: str, what: str) -> Resource | None:
        """An absent or empty list means unset (Volcano tests len(...) != 0)."""
        if not owner.get(key):
            return None
        if reader is not None:
            return reader.resources(owner, key, what)
        return Resource.parse(owner.get(key))

    reclaimable = spec.get("reclaimable")
    return Queue(
        uid=name,
        name=name,
        weight=int(spec.get("weight") or 0),
        capability=res(spec, "capability", where),
        deserved=res(spec, "deserved", where),
        guarantee=res(mapping_field(spec, "guarantee"), "resource", where + ".guarantee"),
        priority=int(spec.get("priority") or 0),
        parent=str(spec.get("parent") or ""),
        reclaimable=True if reclaimable is None else bool(reclaimable),
        state=str(status.get("state") or ""),
        annotations=dict(meta.get("annotations") or {}),
        labels=dict(meta.get("labels") or {}),
        creation=parse_time(meta.get("creationTimestamp")),
        raw=obj,
    )


def node_from_object(obj: dict, reader: ObjectReader) -> Node:
    meta, spec, status = mapping_field(obj, "metadata"), mapping_field(obj, "spec"), mapping_field(obj, "status")
    name = str(meta.get("name") or "")
    allocatable = reader.resources(status, "allocatable", f"Node {name}.status") or Resource()
    capacity = reader.resources(status, "capacity", f"Node {name}.status") or allocatable.clone()
    images = [n for image in status.get("images") or [] for n in (image.get("names") or [])]
    return Node(name, allocatable, capacity, obj, dict(meta.get("labels") or {}),
                dict(meta.get("annotations") or {}), list(spec.get("taints") or []),
                bool(spec.get("unschedulable")), images)
