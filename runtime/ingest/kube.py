"""Kubernetes objects in, the scheduler's model out.

``load_cluster`` reads what ``kubectl get nodes,pods,podgroups,queues,
priorityclasses -A -o yaml`` prints (multi-document YAML or a ``kind: List``),
validates every object and parses every quantity up front, so that a bad
input is reported with its ``file:line:col`` before anything runs.  A
:class:`Cluster` is immutable; each session calls :meth:`Cluster.snapshot`
for fresh Task / Job / Queue / Node objects, as Volcano's cache snapshot does.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import math
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Iterator

from fumarole.policy_lang.diagnostics import (
    Diagnostic,
    NO_POSITION,
    FumaroleError,
    Span,
    did_you_mean,
)
from fumarole.runtime.api.model import (
    BOUND,
    COMPLETED_STATUS,
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
from fumarole.runtime.api.labels import parse_selector, selects
from fumarole.runtime.api.numa import numa_problems, numa_topology
from fumarole.runtime.api.quantity import QuantityError
from fumarole.runtime.api.resource import Resource, all_text
from fumarole.runtime.ingest.fast_checks import all_typed
from fumarole.runtime.ingest.gc_pause import gc_paused
from fumarole.runtime.ingest.json_input import plain_json
from fumarole.runtime.ingest.known_fields import unknown_fields
from fumarole.runtime.ingest.plain_yaml import plain_yaml
from fumarole.runtime.ingest.go_parse import parse_go_bool
from fumarole.runtime.ingest.hypernodes import (HyperNodeSpec, hyper_node_spec, missing_hyper_node_members,
                                                tree_problems)
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS, SchedulerOptions
from fumarole.runtime.ingest.yamlpos import (
    PosDict,
    YamlError,
    key_position,
    load_all,
    position,
    walk_path,
)

GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"
TASK_PRIORITY = "volcano.sh/task-priority"
PREEMPTABLE = "volcano.sh/preemptable"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
DEFAULT_QUEUE = "default"
KINDS = ("Node", "Pod", "PodGroup", "Queue", "PriorityClass", "ResourceQuota", "HyperNode", "PodDisruptionBudget",
         "Numatopology")

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


class _Reader:
    """Collects diagnostics while reading one file's objects."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.diagnostics: list[Diagnostic] = []

    def fail(self, code: str, message: str, where: Any, key: Any = None, hint: str | None = None) -> None:
        line, col = position(where, key) if key is not None else position(where)
        self.diagnostics.append(Diagnostic(code, message, self.file, Span(line, col), hint=hint))

    def resources(self, owner: dict, key: str, what: str) -> Resource | None:
        raw = owner.get(key) if isinstance(owner, dict) else None
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.fail("K004", f"{what}.{key} must be a map of resource quantities", owner, key)
            return Resource()
        try:
            return Resource.from_list(raw)
        except QuantityError:
            name, exc = next(_bad_quantities(raw))  # the first, for the diagnostic
            self.fail("K003", f"bad quantity in {what}.{key}.{name}: {exc}", raw, name)
            return Resource()


def _bad_quantities(resources: dict) -> Iterator[tuple[Any, QuantityError]]:
    """(name, error) of each quantity of a resource list that does not parse, in order."""
    for name, amount in resources.items():
        try:
            Resource.from_list({name: amount})
        except QuantityError as exc:
            yield name, exc


def _mapping(obj: Any, key: str) -> dict:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


# Pod requests already summed, by the containers' resource lists (see _requests_key).
_POD_REQUESTS: dict[tuple, Resource] = {}
_POD_REQUESTS_LIMIT = 4096


def _requests_key(spec: dict) -> tuple | None:
    """What a pod's request depends on, when that is only its containers' resource lists (the
    pods of a job all have the same); None for anything else, summed afresh each time."""
    if spec.get("initContainers") or spec.get("overhead"):
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


def pod_request(spec: dict, reader: _Reader | None = None, where: str = "pod") -> Resource:
    """Volcano's pod request: containers, init containers (sidecars included), pods: 1, overhead.

    Requests of texts already summed are cloned (only those are kept: see resource._PARSED)."""
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


def _summed_request(spec: dict, reader: _Reader | None, where: str) -> Resource:
    total = _containers_total(spec, reader, where, "requests")
    total.add(Resource(scalars={"pods": 1.0}))
    if reader is not None:
        total.add(reader.resources(spec, "overhead", f"{where}.spec") or Resource())
    elif spec.get("overhead"):
        total.add(Resource.from_list(spec["overhead"]))
    return total


def pod_limit(spec: dict) -> Resource:
    """Volcano's GetPodResourceLimit: the containers' limits summed, init containers (sidecars
    included) as for requests, and the overhead added to the dimensions that have a limit.
    Raises QuantityError for a limit that is not a quantity."""
    total = _containers_total(spec, None, "pod", "limits")
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


def _containers_total(spec: dict, reader: _Reader | None, where: str, key: str) -> Resource:
    """One resource list of the containers (`requests` or `limits`) summed, with the init
    containers' peak: a sidecar (restartPolicy Always) adds to the pod and to every later init
    container, any other init container counts alone with the sidecars before it."""
    def listed(container: dict, index: int, group: str) -> Resource:
        resources = _mapping(container, "resources")
        if reader is not None:
            return reader.resources(resources, key, f"{where}.spec.{group}[{index}].resources") or Resource()
        raw = resources.get(key)
        return Resource.from_list(raw if isinstance(raw, dict) else {})

    total = Resource()
    for i, container in enumerate(spec.get("containers") or []):
        total.add(listed(container, i, "containers"))
    sidecars = Resource()
    peak = Resource()
    for i, container in enumerate(spec.get("initContainers") or []):
        req = listed(container, i, "initContainers")
        if container.get("restartPolicy") == "Always":
            total.add(req)
            sidecars.add(req)
            peak.set_max(sidecars)
        else:
            peak.set_max(req.clone().add(sidecars))
    total.set_max(peak)
    return total


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


def _check_limits(spec: dict, reader: _Reader, where: str) -> None:
    """Container limits must be quantities too: deviceshare reads its requests from them."""
    for group in ("containers", "initContainers"):
        containers = spec.get(group)
        for i, container in enumerate(containers if isinstance(containers, list) else ()):
            resources = container.get("resources") if isinstance(container, dict) else None
            if isinstance(resources, dict) and "limits" in resources:
                reader.resources(resources, "limits", f"{where}.spec.{group}[{i}].resources")


def task_from_pod(pod: dict, reader: _Reader | None = None) -> Task:
    """Volcano's NewTaskInfo for one Pod object."""
    meta, spec, status = _mapping(pod, "metadata"), _mapping(pod, "spec"), _mapping(pod, "status")
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    group = annotations.get(GROUP_NAME) or ""
    request = pod_request(spec, reader, f"Pod {namespace}/{name}")
    if reader is not None:
        _check_limits(spec, reader, f"Pod {namespace}/{name}")
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
                       reader: _Reader | None = None, default_queue: str = DEFAULT_QUEUE) -> Job:
    """Volcano's JobInfo for one PodGroup (without tasks)."""
    meta, spec, status = _mapping(pg, "metadata"), _mapping(pg, "spec"), _mapping(pg, "status")
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
            parsed = parse_selector(entry.get("labelSelector"))
            selector = lambda labels, parsed=parsed: selects(parsed, labels)  # noqa: E731
        out.append(SubGroupPolicy(str(entry.get("name") or ""), _int_or(entry.get("subGroupSize"), 1) or 0,
                                  _int_or(entry.get("minSubGroups"), 0) or 0,
                                  tuple(str(k) for k in keys) if isinstance(keys, list) else (),
                                  selector, network_topology(entry.get("networkTopology"))))
    return tuple(out)


def queue_from_object(obj: dict, reader: _Reader | None = None) -> Queue:
    meta, spec, status = _mapping(obj, "metadata"), _mapping(obj, "spec"), _mapping(obj, "status")
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
        guarantee=res(_mapping(spec, "guarantee"), "resource", where + ".guarantee"),
        priority=int(spec.get("priority") or 0),
        parent=str(spec.get("parent") or ""),
        reclaimable=True if reclaimable is None else bool(reclaimable),
        state=str(status.get("state") or ""),
        annotations=dict(meta.get("annotations") or {}),
        labels=dict(meta.get("labels") or {}),
        creation=parse_time(meta.get("creationTimestamp")),
        raw=obj,
    )


def _node_from_object(obj: dict, reader: _Reader) -> Node:
    meta, spec, status = _mapping(obj, "metadata"), _mapping(obj, "spec"), _mapping(obj, "status")
    name = str(meta.get("name") or "")
    allocatable = reader.resources(status, "allocatable", f"Node {name}.status") or Resource()
    capacity = reader.resources(status, "capacity", f"Node {name}.status") or allocatable.clone()
    images = [n for image in status.get("images") or [] for n in (image.get("names") or [])]
    return Node(name, allocatable, capacity, obj, dict(meta.get("labels") or {}),
                dict(meta.get("annotations") or {}), list(spec.get("taints") or []),
                bool(spec.get("unschedulable")), images)


@dataclass(frozen=True)
class Cluster:
    """Validated Kubernetes objects, in the order they were read."""

    nodes: tuple = ()
    pods: tuple = ()
    pod_groups: tuple = ()
    queues: tuple = ()
    priority_classes: tuple = ()
    resource_quotas: tuple = ()
    warnings: tuple = field(default=())
    file: str = "<cluster>"
    hyper_nodes: tuple[HyperNodeSpec, ...] = ()
    # The nodes and tasks validation built, one per object of ``nodes`` / ``pods``; a session
    # copies them instead of reading the objects again.  None: built by each snapshot.
    built: "BuiltModels | None" = field(default=None, compare=False, repr=False)
    disruption_budgets: tuple = ()  # policy/v1 PodDisruptionBudget objects (the pdb plugin)
    numa_topologies: tuple = ()  # nodeinfo.volcano.sh/v1alpha1 Numatopology objects (the numa-aware plugin)

    @property
    def is_empty(self) -> bool:
        """No object of any kind was read (every field of objects is empty)."""
        return not any(getattr(self, f.name) for f in fields(self)
                       if f.name not in ("warnings", "file", "built"))

    def warnings_for(self, options: SchedulerOptions) -> tuple:
        """The warnings, with the queue of a PodGroup naming none taken from ``--default-queue``."""
        if options.default_queue == DEFAULT_QUEUE:
            return self.warnings
        kept = [w for w in self.warnings if w.code != "K101"]
        return tuple(kept + _queue_warnings(self.queues, self.pod_groups, self.file, options.default_queue))

    def priorities(self, options: SchedulerOptions = DEFAULT_OPTIONS) -> tuple[dict[str, int], int | None]:
        """PriorityClass values and the global default's; none when --priority-class=false (no informer)."""
        values: dict[str, int] = {}
        if not options.priority_class:
            return values, None
        default = None
        for pc in self.priority_classes:
            name = str(_mapping(pc, "metadata").get("name") or "")
            values[name] = int(pc.get("value") or 0)
            if pc.get("globalDefault"):
                default = values[name]
        return values, default

    def snapshot(self, options: SchedulerOptions = DEFAULT_OPTIONS) -> "Snapshot":
        """Fresh model objects for one session (Volcano's cache.Snapshot).

        The scheduler options decide what Volcano's cache holds: only nodes
        matching ``--node-selector``, only pods for one of its
        ``--scheduler-name``s or already on a node, PodGroups without a queue
        in ``--default-queue``.
        """
        with gc_paused():
            return self._snapshot(options)

    def _snapshot(self, options: SchedulerOptions) -> "Snapshot":
        nodes: dict[str, Node] = {}
        selector = options.node_selector_labels()
        for node in self._fresh_nodes():
            if selector and not any(f"{k}:{v}" in selector for k, v in node.labels.items()):
                continue
            nodes[node.name] = node
        queues = {q.name: q for q in (queue_from_object(obj) for obj in self.queues)}
        priorities, default = self.priorities(options)
        all_jobs: dict[str, Job] = {}
        for obj in self.pod_groups:
            job = job_from_pod_group(obj, priorities, default, default_queue=options.default_queue)
            all_jobs[job.uid] = job
        for task in self._fresh_tasks(options.scheduler_names):
            if task.node_name and task.status not in COMPLETED_STATUS:
                holder = nodes.get(task.node_name)
                if holder is not None and task.key not in holder.tasks:
                    holder.add_task(task)
            owner = all_jobs.get(task.job_id)
            if owner is not None:
                owner.add_task(task)
        for node in nodes.values():
            node.view_pods = dict(node.tasks)
        for obj in self.numa_topologies:
            holder = nodes.get(str(obj["metadata"]["name"]))
            if holder is not None:
                holder.numa = numa_topology(obj)
        jobs = {uid: job for uid, job in all_jobs.items() if job.queue in queues}
        return Snapshot(nodes, queues, jobs)

    def _fresh_nodes(self) -> Iterator[Node]:
        if self.built is not None:
            return (node.for_session() for node in self.built.nodes)
        return (_node_from_object(obj, _Reader(self.file)) for obj in self.nodes)

    def _fresh_tasks(self, scheduler_names: tuple[str, ...]) -> Iterator[Task]:
        """A task of the session's own for each pod the scheduler is responsible for: a copy of
        the one loading built, or without one a new one."""
        if self.built is None:
            return (task_from_pod(pod) for pod in self.pods if _responsible_for_pod(pod, scheduler_names))
        return (task.for_session() for pod, task in zip(self.pods, self.built.tasks)
                if _responsible_for_pod(pod, scheduler_names))


@dataclass(frozen=True)
class BuiltModels:
    """What validating a cluster built, kept for its sessions."""

    nodes: tuple[Node, ...]
    tasks: tuple[Task, ...]


def _responsible_for_pod(pod: dict, scheduler_names: tuple[str, ...]) -> bool:
    """The cache's pod filter: one of our scheduler names, or already bound to a node.

    A pod without ``spec.schedulerName`` counts as ours: the API server always
    sets the field, so only hand-written clusters lack it, and they mean Volcano.
    """
    spec = _mapping(pod, "spec")
    name = spec.get("schedulerName")
    return not name or name in scheduler_names or bool(spec.get("nodeName"))


@dataclass
class Snapshot:
    nodes: dict[str, Node]
    queues: dict[str, Queue]
    jobs: dict[str, Job]


_NOT_AN_OBJECT = "expected a Kubernetes object (a mapping with apiVersion and kind)"


def _objects(doc: Any, reader: _Reader) -> list[dict]:
    if not isinstance(doc, dict):
        reader.fail("K005", _NOT_AN_OBJECT, doc)
        return []
    kind = doc.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc):
        items = doc.get("items") or []
        if not isinstance(items, list):
            reader.fail("K004", f"items of a {kind} must be a list of objects, not {_clip(repr(items))}",
                        doc, "items")
            return []
        out = []
        for index, item in enumerate(items):
            if isinstance(item, dict):
                out.extend(_objects(item, reader))
            else:  # reported at the item, not at the top of the file
                reader.fail("K005", _NOT_AN_OBJECT, items, index)
        return out
    return [doc]


def _check_object(obj: dict, reader: _Reader) -> str | None:
    kind = obj.get("kind")
    if kind is None:
        reader.fail("K002", "object has no kind", obj)
        return None
    if not isinstance(kind, str):
        reader.fail("K002", f"kind must be a string, not {_clip(repr(kind))}", obj, "kind",
                    hint=f"fumarole reads {', '.join(KINDS)}")
        return None
    if kind not in KINDS:
        reader.fail("K002", f"unknown kind {_clip(repr(kind))}", obj, "kind",
                    hint=did_you_mean(str(kind), KINDS) or f"fumarole reads {', '.join(KINDS)}")
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        reader.fail("K004", f"{kind} has no metadata.name", obj, "metadata" if meta else None)
        return None
    return kind


def load_cluster(text: str, file: str = "<cluster>") -> Cluster:
    """Parse and validate a cluster; raises FumaroleError listing every problem found.

    The text is first read without a position per value: JSON (what programs and
    ``kubectl -o json`` write) by the C JSON parser, YAML by libyaml's events into
    plain objects.  Only when the cluster has something to report is the text read
    again with positions, so every diagnostic still names its line and column.
    """
    with gc_paused():
        cluster = _load_cluster(text, file)
    if cluster.is_empty:
        # kubectl refuses such a file ("no objects passed"); a session on it would decide nothing, silently.
        raise FumaroleError([Diagnostic("K008", "the cluster holds no objects", file, NO_POSITION,
                                        hint="a cluster dump is Kubernetes objects (Nodes, Pods, PodGroups, "
                                             "Queues...), one YAML document each or a kind: List")],
                            {file: text})
    return cluster


def _require_containers(pod: dict, reader: _Reader) -> None:
    """Kubernetes requires spec.containers, with at least one container: the API server rejects a
    pod without.  Read leniently, a pod whose `containers:` is misspelt would request nothing and
    move other jobs around; so it is an error, at the misspelling where there is one."""
    spec = _mapping(pod, "spec")
    containers = spec.get("containers")
    if isinstance(containers, list) and containers:
        return
    meta = pod["metadata"]
    name = f"{meta.get('namespace') or 'default'}/{meta['name']}"
    if "containers" in spec:
        reader.fail("K004", f"spec.containers of Pod {name} is empty: Kubernetes requires at least one "
                    "container", spec, "containers")
        return
    near = difflib.get_close_matches("containers", [k for k in spec if isinstance(k, str)], n=1, cutoff=0.6)
    if near:
        line, col = key_position(spec, near[0])
        reader.diagnostics.append(Diagnostic(
            "K004", f"Pod {name} has no spec.containers: Kubernetes requires at least one container",
            reader.file, Span(line, col), hint=f"did you mean 'containers' for {near[0]!r}?"))
    else:
        reader.fail("K004", f"Pod {name} has no spec.containers: Kubernetes requires at least one container",
                    pod, "spec" if isinstance(pod.get("spec"), dict) else None,
                    hint="each pod lists its containers, with their resource requests")


def _load_cluster(text: str, file: str) -> Cluster:
    plain = plain_json(text)
    if plain is None:
        plain = plain_yaml(text)
    if plain is not None:
        try:
            cluster = cluster_from_objects(plain, file, text)
        except FumaroleError:
            cluster = None  # read again with positions, for the diagnostics
        # Positions may still be needed later: a PodGroup naming no queue is warned about by the
        # queue --default-queue gives it (Cluster.warnings_for).
        if cluster is not None and not cluster.warnings and all(
                _mapping(pg, "spec").get("queue") for pg in cluster.pod_groups):
            return cluster
    try:
        docs = load_all(text)
    except YamlError as exc:
        raise FumaroleError([Diagnostic("K001", exc.message, file, Span(exc.line, exc.col))],
                            {file: text}) from None
    return cluster_from_objects(docs, file, text)


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


def _fields_are_typed(kind: str, obj: dict, reader: _Reader) -> bool:
    if _ALL_TYPED[kind](obj):
        return True
    ok = True
    for owner, key, where, type_name in _mistyped(obj, _TREES[kind]):
        name = obj["metadata"].get("name") if isinstance(obj.get("metadata"), dict) else None
        subject = f"{kind} {_clip(str(name))}" if _is_typed(name, "scalar") else f"a {kind}"
        reader.fail("K007", f"{where} of {subject} must be {_TYPE_NAMES[type_name]}, "
                    f"not {_clip(repr(owner[key]))}", owner, key)
        ok = False
    return ok


def _clip(text: str) -> str:
    """Text quoted in a message, clipped: hostile input must not make a huge diagnostic."""
    return text if len(text) <= 60 else text[:60] + "..."


def cluster_from_objects(docs: list, file: str = "<cluster>", text: str | None = None) -> Cluster:
    """The cluster of already parsed objects; raises FumaroleError listing every problem found."""
    with gc_paused():
        return _cluster_from_objects(docs, file, text)


def _cluster_from_objects(docs: list, file: str, text: str | None) -> Cluster:
    reader = _Reader(file)
    groups: dict[str, list] = {kind: [] for kind in KINDS}
    for doc in docs:
        for obj in _objects(doc, reader):
            kind = _check_object(obj, reader)
            if kind is not None:
                groups[kind].append(obj)
    seen: set[tuple[str, str]] = set()
    for kind, objs in groups.items():
        for obj in objs:
            meta = obj["metadata"]
            ident = (kind, f"{meta.get('namespace', '')}/{meta['name']}")
            if ident in seen:
                reader.fail("K006", f"duplicate {kind} {ident[1].lstrip('/')}", obj, "metadata")
            seen.add(ident)
    for kind, objs in groups.items():
        groups[kind] = [obj for obj in objs if _fields_are_typed(kind, obj, reader)]
    nodes = tuple(_node_from_object(obj, reader) for obj in groups["Node"])
    for obj in groups["Queue"]:
        queue_from_object(obj, reader)
    for obj in groups["PodGroup"]:
        job_from_pod_group(obj, {}, None, reader)
    for obj in groups["Pod"]:
        _require_containers(obj, reader)
    tasks = tuple(task_from_pod(obj, reader) for obj in groups["Pod"])
    for obj in groups["ResourceQuota"]:
        for key in ("hard", "used"):
            reader.resources(_mapping(obj, "status"), key, f"ResourceQuota {obj['metadata']['name']} status")
    for obj in groups["Numatopology"]:
        for owner, key, at_key, code, message in numa_problems(obj):
            if at_key:
                line, col = key_position(owner, key)
                reader.diagnostics.append(Diagnostic(code, message, file, Span(line, col)))
            else:
                reader.fail(code, message, owner, key)
    hyper_nodes = [spec for spec in (hyper_node_spec(obj, reader.fail) for obj in groups["HyperNode"]) if spec]
    if not reader.diagnostics:
        reader.diagnostics.extend(tree_problems(hyper_nodes, file))
    if reader.diagnostics:
        raise FumaroleError(reader.diagnostics, {file: text} if text is not None else {})
    warnings = [d for kind, objs in groups.items() for obj in objs for d in unknown_fields(kind, obj, file)]
    warnings += _referential_warnings(groups, file)
    warnings += _missing_node_members(hyper_nodes, groups["Node"], file)
    warnings += missing_hyper_node_members(hyper_nodes, file)
    warnings += _numa_without_node(groups["Numatopology"], groups["Node"], file)
    return Cluster(tuple(groups["Node"]), tuple(groups["Pod"]), tuple(groups["PodGroup"]),
                   tuple(groups["Queue"]), tuple(groups["PriorityClass"]),
                   tuple(groups["ResourceQuota"]), tuple(warnings), file, tuple(hyper_nodes),
                   BuiltModels(nodes, tasks), tuple(groups["PodDisruptionBudget"]),
                   tuple(groups["Numatopology"]))


def _queue_warnings(queues: Any, pod_groups: Any, file: str, default_queue: str = DEFAULT_QUEUE) -> list[Diagnostic]:
    """K101: PodGroups whose queue (``default_queue`` when they name none) does not exist."""
    out = []
    names = {o["metadata"]["name"] for o in queues}
    for pg in pod_groups:
        queue = _mapping(pg, "spec").get("queue") or default_queue
        if queue not in names:
            line, col = key_position(pg, "spec")
            out.append(Diagnostic("K101", f"PodGroup {pg['metadata']['name']} names queue {queue!r}, "
                                  "which does not exist: Volcano leaves the group out of the session",
                                  file, Span(line, col), severity="warning"))
    return out


def _referential_warnings(groups: dict[str, list], file: str) -> list[Diagnostic]:
    """Dangling references are legal (Volcano ignores them) but worth telling the user."""
    out = _queue_warnings(groups["Queue"], groups["PodGroup"], file)
    pgs = {f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}" for o in groups["PodGroup"]}
    for pod in groups["Pod"]:
        meta = pod["metadata"]
        group = (meta.get("annotations") or {}).get(GROUP_NAME)
        ns = meta.get("namespace") or "default"
        if group and f"{ns}/{group}" not in pgs:
            line, col = key_position(pod, "metadata")
            out.append(Diagnostic("K102", f"Pod {ns}/{meta['name']} names PodGroup {group!r}, which does "
                                  "not exist: Volcano does not schedule it", file, Span(line, col),
                                  severity="warning"))
    return out


def _numa_without_node(topologies: list[dict], nodes: list[dict], file: str) -> list[Diagnostic]:
    """A Numatopology naming no node of the dump is legal (Volcano's session only has the nodes
    it knows), but worth telling: its CPUs count nowhere."""
    names = {o["metadata"]["name"] for o in nodes}
    out = []
    for obj in topologies:
        if obj["metadata"]["name"] not in names:
            line, col = key_position(obj, "metadata")
            out.append(Diagnostic("K106", f"Numatopology {obj['metadata']['name']} names no node of the cluster: "
                                  "Volcano leaves it out", file, Span(line, col), severity="warning"))
    return out


def _missing_node_members(hyper_nodes: list[HyperNodeSpec], nodes: list[dict], file: str) -> list[Diagnostic]:
    """A node member naming no node of the dump is legal (Volcano keeps only the nodes it
    knows), but worth telling: the HyperNode is smaller than it says."""
    names = {o["metadata"]["name"] for o in nodes}
    out = []
    for spec in hyper_nodes:
        for i, member in enumerate(spec.members):
            if member.type == "Node" and member.exact and member.exact not in names:
                line, col = walk_path(spec.raw, iter(("spec", "members", i)))
                out.append(Diagnostic("K104", f"HyperNode {spec.name} has member node {member.exact!r}, which "
                                      "is not in the cluster: Volcano leaves it out", file, Span(line, col),
                                      severity="warning"))
    return out


__all__ = ["Cluster", "Snapshot", "load_cluster", "cluster_from_objects", "task_from_pod",
           "job_from_pod_group", "queue_from_object", "empty_task", "PosDict", "parse_go_bool"]
