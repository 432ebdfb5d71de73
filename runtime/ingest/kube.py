"""Kubernetes objects in, the scheduler's model out: a whole cluster read, checked and snapshotted.

``load_cluster`` reads what ``kubectl get nodes,pods,podgroups,queues,
priorityclasses -A -o yaml`` prints (and the other kinds in :data:`KINDS`) (multi-document YAML or a ``kind: List``),
validates every object and parses every quantity up front, so that a bad
input is reported with its ``file:line:col`` before anything runs.  A
:class:`Cluster` is immutable; each session calls :meth:`Cluster.snapshot`
for fresh Task / Job / Queue / Node objects, as Volcano's cache snapshot does.

The walk goes one way: each object's fields are checked against their types
(``kube_fields.py``), converted (``kube_convert.py``), and the HyperNodes
checked as a tree (``hypernodes.py``); what is left here is what needs the
whole cluster: duplicates, references between objects, and the snapshot.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from typing import Any, Iterator

from fumarole.policy_lang.diagnostics import (
    Diagnostic,
    FumaroleError,
    Span,
)
from fumarole.runtime.api.model import COMPLETED_STATUS, Job, Node, Queue, Task
from fumarole.runtime.api.numa import numa_topology
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.block_yaml import block_yaml
from fumarole.runtime.ingest.gc_pause import gc_paused
from fumarole.runtime.ingest.hypernodes import HyperNodeSpec, hyper_node_specs, hyper_node_warnings, tree_problems
from fumarole.runtime.ingest.json_input import plain_json
from fumarole.runtime.ingest.known_fields import unknown_fields
from fumarole.runtime.ingest.kube_convert import (
    DEFAULT_QUEUE,
    GROUP_NAME,
    ObjectReader,
    job_from_pod_group,
    mapping_field,
    node_from_object,
    queue_from_object,
    task_from_pod,
)
from fumarole.runtime.ingest.kube_fields import fields_are_typed
from fumarole.runtime.ingest.node_shards import missing_shard_warning, nodes_in_shard
from fumarole.runtime.ingest.numa_fields import check_numatopology_values
from fumarole.runtime.ingest.plain_yaml import plain_yaml
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS, SchedulerOptions
from fumarole.runtime.ingest.yamlpos import YamlError, key_position, load_all

KINDS = ("Node", "Pod", "PodGroup", "Queue", "PriorityClass", "ResourceQuota", "HyperNode", "PodDisruptionBudget",
         "Numatopology", "NodeShard")


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
    node_shards: tuple = ()  # shard.volcano.sh/v1alpha1 NodeShard objects (--scheduler-sharding-mode)

    @property
    def is_empty(self) -> bool:
        """No object of any kind was read (every field of objects is empty)."""
        return not any(getattr(self, f.name) for f in fields(self)
                       if f.name not in ("warnings", "file", "built"))

    def warnings_for(self, options: SchedulerOptions) -> tuple:
        """The warnings, with the queue of a PodGroup naming none taken from ``--default-queue``, and
        K107 when the scheduler shards by a NodeShard the cluster does not have."""
        warnings = self.warnings
        if options.default_queue != DEFAULT_QUEUE:
            kept = [w for w in warnings if w.code != "K101"]
            warnings = tuple(kept + _queue_warnings(self.queues, self.pod_groups, self.file, options.default_queue))
        if options.sharded:
            warnings += tuple(missing_shard_warning(self.node_shards, options.sharding_name, options.sharding_mode,
                                                    self.file))
        return warnings

    def nodes_in_shard(self, options: SchedulerOptions) -> frozenset[str]:
        """Volcano's NodesInShard for a session (node_shards.py); empty unless the scheduler shards."""
        return nodes_in_shard(self.node_shards, options.sharding_name) if options.sharded else frozenset()

    def priorities(self, options: SchedulerOptions = DEFAULT_OPTIONS) -> tuple[dict[str, int], int | None]:
        """PriorityClass values and the global default's; none when --priority-class=false (no informer)."""
        values: dict[str, int] = {}
        if not options.priority_class:
            return values, None
        default = None
        for pc in self.priority_classes:
            name = str(mapping_field(pc, "metadata").get("name") or "")
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
        return (node_from_object(obj, ObjectReader(self.file)) for obj in self.nodes)

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
    spec = mapping_field(pod, "spec")
    name = spec.get("schedulerName")
    return not name or name in scheduler_names or bool(spec.get("nodeName"))


@dataclass
class Snapshot:
    nodes: dict[str, Node]
    queues: dict[str, Queue]
    jobs: dict[str, Job]


def _objects(doc: Any, reader: ObjectReader) -> list[dict]:
    if not isinstance(doc, dict):
        reader.report(kube_errors.not_an_object(reader.file, reader.at(doc)))
        return []
    kind = doc.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc):
        items = doc.get("items") or []
        if not isinstance(items, list):
            reader.report(kube_errors.list_items_not_a_list(reader.file, reader.at(doc, "items"), kind, items))
            return []
        out = []
        for index, item in enumerate(items):
            if isinstance(item, dict):
                out.extend(_objects(item, reader))
            else:  # reported at the item, not at the top of the file
                reader.report(kube_errors.not_an_object(reader.file, reader.at(items, index)))
        return out
    return [doc]


def _check_object(obj: dict, reader: ObjectReader) -> str | None:
    kind = obj.get("kind")
    if kind is None:
        reader.report(kube_errors.object_without_kind(reader.file, reader.at(obj)))
        return None
    if not isinstance(kind, str):
        reader.report(kube_errors.kind_not_a_string(reader.file, reader.at(obj, "kind"), kind, KINDS))
        return None
    if kind not in KINDS:
        reader.report(kube_errors.unknown_kind(reader.file, reader.at(obj, "kind"), kind, KINDS))
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        reader.report(kube_errors.object_without_name(reader.file, reader.at(obj, "metadata" if meta else None), kind))
        return None
    return kind


def load_cluster(text: str, file: str = "<cluster>") -> Cluster:
    """Parse and validate a cluster; raises FumaroleError listing every problem found.

    The text is first read without a position per value: JSON (what programs and
    ``kubectl -o json`` write) by the C JSON parser, YAML in the block style kubectl
    prints a distinct line at a time, other YAML by libyaml's events, into plain
    objects.  Only when the cluster has something to report is the text read
    again with positions, so every diagnostic still names its line and column.
    """
    with gc_paused():
        cluster = _load_cluster(text, file)
    if cluster.is_empty:
        # kubectl refuses such a file ("no objects passed"); a session on it would decide nothing, silently.
        raise FumaroleError([kube_errors.empty_cluster(file)], {file: text})
    return cluster


def _require_containers(pod: dict, reader: ObjectReader) -> None:
    """Kubernetes requires spec.containers, with at least one container: the API server rejects a
    pod without.  Read leniently, a pod whose `containers:` is misspelt would request nothing and
    move other jobs around; so it is an error, at the misspelling where there is one."""
    spec = mapping_field(pod, "spec")
    containers = spec.get("containers")
    if isinstance(containers, list) and containers:
        return
    meta = pod["metadata"]
    name = f"{meta.get('namespace') or 'default'}/{meta['name']}"
    if "containers" in spec:
        reader.report(kube_errors.pod_containers_empty(reader.file, reader.at(spec, "containers"), name))
        return
    near = difflib.get_close_matches("containers", [k for k in spec if isinstance(k, str)], n=1, cutoff=0.6)
    if near:
        reader.report(kube_errors.pod_without_containers(reader.file, reader.at_key(spec, near[0]), name, near[0]))
    else:
        at = reader.at(pod, "spec" if isinstance(pod.get("spec"), dict) else None)
        reader.report(kube_errors.pod_without_containers(reader.file, at, name))


def _load_cluster(text: str, file: str) -> Cluster:
    plain = plain_json(text)
    if plain is None:
        plain = block_yaml(text)
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
                mapping_field(pg, "spec").get("queue") for pg in cluster.pod_groups):
            return cluster
    try:
        docs = load_all(text)
    except YamlError as exc:
        raise FumaroleError([kube_errors.malformed_cluster(file, Span(exc.line, exc.col), exc.message)],
                            {file: text}) from None
    return cluster_from_objects(docs, file, text)


def cluster_from_objects(docs: list, file: str = "<cluster>", text: str | None = None) -> Cluster:
    """The cluster of already parsed objects; raises FumaroleError listing every problem found."""
    with gc_paused():
        return _cluster_from_objects(docs, file, text)


def _cluster_from_objects(docs: list, file: str, text: str | None) -> Cluster:
    reader = ObjectReader(file)
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
                reader.report(kube_errors.duplicate_object(reader.file, reader.at(obj, "metadata"), kind,
                                                           ident[1].lstrip("/")))
            seen.add(ident)
    for kind, objs in groups.items():
        groups[kind] = [obj for obj in objs if fields_are_typed(kind, obj, reader)]
    nodes = tuple(node_from_object(obj, reader) for obj in groups["Node"])
    for obj in groups["Queue"]:
        queue_from_object(obj, reader)
    for obj in groups["PodGroup"]:
        job_from_pod_group(obj, {}, None, reader)
    for obj in groups["Pod"]:
        _require_containers(obj, reader)
    tasks = tuple(task_from_pod(obj, reader) for obj in groups["Pod"])
    for obj in groups["ResourceQuota"]:
        for key in ("hard", "used"):
            reader.resources(mapping_field(obj, "status"), key, f"ResourceQuota {obj['metadata']['name']} status")
    for obj in groups["Numatopology"]:
        check_numatopology_values(obj, reader)
    hyper_nodes = hyper_node_specs(groups["HyperNode"], reader)
    if not reader.diagnostics:
        reader.diagnostics.extend(tree_problems(hyper_nodes, file))
    if reader.diagnostics:
        raise FumaroleError(reader.diagnostics, {file: text} if text is not None else {})
    warnings = [d for kind, objs in groups.items() for obj in objs for d in unknown_fields(kind, obj, file)]
    warnings += _referential_warnings(groups, file)
    warnings += hyper_node_warnings(hyper_nodes, {o["metadata"]["name"] for o in groups["Node"]}, file)
    warnings += _numa_without_node(groups["Numatopology"], groups["Node"], file)
    return Cluster(tuple(groups["Node"]), tuple(groups["Pod"]), tuple(groups["PodGroup"]),
                   tuple(groups["Queue"]), tuple(groups["PriorityClass"]),
                   tuple(groups["ResourceQuota"]), tuple(warnings), file, tuple(hyper_nodes),
                   BuiltModels(nodes, tasks), tuple(groups["PodDisruptionBudget"]),
                   tuple(groups["Numatopology"]), tuple(groups["NodeShard"]))


def _queue_warnings(queues: Any, pod_groups: Any, file: str, default_queue: str = DEFAULT_QUEUE) -> list[Diagnostic]:
    """K101: PodGroups whose queue (``default_queue`` when they name none) does not exist."""
    out = []
    names = {o["metadata"]["name"] for o in queues}
    for pg in pod_groups:
        queue = mapping_field(pg, "spec").get("queue") or default_queue
        if queue not in names:
            line, col = key_position(pg, "spec")
            out.append(kube_errors.pod_group_queue_missing(file, Span(line, col), pg['metadata']['name'], queue))
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
            out.append(kube_errors.pod_group_missing(file, Span(line, col), f"{ns}/{meta['name']}", group))
    return out


def _numa_without_node(topologies: list[dict], nodes: list[dict], file: str) -> list[Diagnostic]:
    """A Numatopology naming no node of the dump is legal (Volcano's session only has the nodes
    it knows), but worth telling: its CPUs count nowhere."""
    names = {o["metadata"]["name"] for o in nodes}
    out = []
    for obj in topologies:
        if obj["metadata"]["name"] not in names:
            line, col = key_position(obj, "metadata")
            out.append(kube_errors.numatopology_without_node(file, Span(line, col), obj['metadata']['name']))
    return out
