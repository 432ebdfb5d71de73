"""The scheduler's view of a cluster: Task, Job, Queue, Node and their accounting.

These mirror Volcano's ``TaskInfo``, ``JobInfo``, ``QueueInfo`` and ``NodeInfo``
(``pkg/scheduler/api``).  Everything is keyed by UID; a task is one object
shared by its job and its node, and the node remembers the status a task had
when it was added, because Volcano's node accounting is reversed by the status
of the copy the node holds, not the task's current one.
"""

from __future__ import annotations

from typing import Any

from fumarole.runtime.api.devices import atoi
from fumarole.runtime.api.resource import (
    ZERO,
    Resource,
    exceeded_part,
    less_equal,
    less_equal_with_names,
)

PENDING, ALLOCATED, PIPELINED, BINDING, BOUND = "Pending", "Allocated", "Pipelined", "Binding", "Bound"
RUNNING, RELEASING, SUCCEEDED, FAILED, UNKNOWN = "Running", "Releasing", "Succeeded", "Failed", "Unknown"

ALLOCATED_STATUS = frozenset({BOUND, BINDING, RUNNING, ALLOCATED})
COMPLETED_STATUS = frozenset({SUCCEEDED, FAILED})
SCHEDULED_STATUS = frozenset({RUNNING, BOUND, FAILED, SUCCEEDED})
_VALID_STATUS = ALLOCATED_STATUS | {SUCCEEDED, PIPELINED, PENDING}
_READY_STATUS = ALLOCATED_STATUS | {SUCCEEDED}  # a role's tasks that count towards its minimum
_PIPELINED_STATUS = _READY_STATUS | {PIPELINED}

PG_PENDING, PG_INQUEUE, PG_RUNNING, PG_UNKNOWN, PG_COMPLETED = "Pending", "Inqueue", "Running", "Unknown", "Completed"


class Task:
    """One pod.  ``request`` / ``init_request`` are Volcano's ``Resreq`` / ``InitResreq``."""

    __slots__ = (
        "uid", "name", "namespace", "key", "job_id", "role", "request", "init_request",
        "best_effort", "preemptable", "priority", "pod_priority", "gated", "node_name",
        "status", "eviction_occurred", "preemption_policy", "nominated_node", "priority_class",
        "creation", "labels", "annotations", "pod", "revocable_zone", "derived",
        "job_allocated_hyper_node", "last_transaction", "__weakref__",
    )

    def __init__(self, *, uid: str, name: str, namespace: str, key: str, job_id: str, role: str,
                 request: Resource, init_request: Resource, best_effort: bool, preemptable: bool,
                 priority: int, pod_priority: int, gated: bool, node_name: str, status: str,
                 preemption_policy: str, nominated_node: str, priority_class: str, creation: float,
                 labels: dict, annotations: dict, pod: dict, revocable_zone: str = "") -> None:
        self.uid, self.name, self.namespace, self.key = uid, name, namespace, key
        self.job_id, self.role, self.request, self.init_request = job_id, role, request, init_request
        self.best_effort, self.preemptable, self.priority, self.pod_priority = best_effort, preemptable, priority, pod_priority
        self.gated, self.node_name, self.status = gated, node_name, status
        self.preemption_policy, self.nominated_node = preemption_policy, nominated_node
        self.priority_class, self.creation, self.labels, self.annotations = priority_class, creation, labels, annotations
        self.pod, self.revocable_zone = pod, revocable_zone
        self.eviction_occurred = False
        # Volcano's TaskInfo.LastTransaction: (status, node, eviction occurred) when a statement
        # holding an operation on the task was discarded, None again once one is committed
        self.last_transaction: tuple[str, str, bool] | None = None
        self.job_allocated_hyper_node: Any = None  # a HyperNode; Volcano's TaskInfo.JobAllocatedHyperNode, set by allocate
        self.derived: dict = {}  # facts computed from the pod spec once per session (runtime/k8s/podspec.py)

    def __repr__(self) -> str:
        return f"<Task {self.key} {self.status}>"

    def for_session(self) -> "Task":
        """A copy of this task as its pod was loaded, for one session: what a session changes
        (status, resources, labels, derived facts) is the copy's own, the pod object is shared.
        Loading builds each task once; every session copies it instead of reading the pod again."""
        copy = Task.__new__(Task)
        copy.uid, copy.name, copy.namespace, copy.key = self.uid, self.name, self.namespace, self.key
        copy.job_id, copy.role = self.job_id, self.role
        copy.request, copy.init_request = self.request.clone(), self.init_request.clone()
        copy.best_effort, copy.preemptable = self.best_effort, self.preemptable
        copy.priority, copy.pod_priority, copy.gated = self.priority, self.pod_priority, self.gated
        copy.node_name, copy.status, copy.eviction_occurred = self.node_name, self.status, self.eviction_occurred
        copy.preemption_policy, copy.nominated_node = self.preemption_policy, self.nominated_node
        copy.priority_class, copy.creation = self.priority_class, self.creation
        copy.labels, copy.annotations, copy.pod = dict(self.labels), dict(self.annotations), self.pod
        copy.revocable_zone, copy.job_allocated_hyper_node, copy.derived = self.revocable_zone, None, {}
        copy.last_transaction = None
        return copy


def role_failed(task: Task, tasks: dict[str, Task], fit_errors: dict[str, Any]) -> bool:
    """TaskHasFitErrors: another of these tasks with the task's role already failed predicates."""
    if not task.role:
        return False
    return any(t.role == task.role for uid, t in tasks.items() if uid in fit_errors)


class TopologyMode:
    """IsHardTopologyMode, shared by a job and its sub-jobs: each reads its own network topology."""

    __slots__ = ()
    network_topology: NetworkTopology | None

    @property
    def is_hard_topology(self) -> bool:
        """Its first result: in hard mode (with a highest tier)."""
        return self.network_topology is not None and self.network_topology.is_hard

    @property
    def highest_tier_allowed(self) -> int:
        """Its second result: the highest allowed tier, in either mode (0 when unset)."""
        topology = self.network_topology
        return topology.highest_tier_allowed or 0 if topology is not None else 0


class Job(TopologyMode):
    """A PodGroup and its tasks, with Volcano's status index and gang counters."""

    __slots__ = (
        "uid", "name", "namespace", "queue", "min_available", "task_min_available",
        "task_min_available_total", "priority", "creation", "min_resources", "preemptable",
        "tasks", "status_index", "allocated", "total_request", "fit_errors", "phase",
        "conditions", "pod_group", "annotations", "labels", "priority_class",
        "network_topology", "sub_group_policies", "sub_jobs", "task_to_sub_job", "min_sub_jobs",
        "allocated_hyper_node", "best_effort_tasks", "ready_tasks",
    )
    # Set from the PodGroup by keyword (runtime/ingest/kube_convert.py, job_from_pod_group).
    uid: str
    name: str
    namespace: str
    queue: str
    min_available: int
    task_min_available: dict[str, int]
    task_min_available_total: int
    priority: int
    priority_class: str
    creation: float
    min_resources: Resource | None
    preemptable: bool
    phase: str
    pod_group: dict
    annotations: dict
    labels: dict

    def __init__(self, **fields: Any) -> None:
        self.network_topology: NetworkTopology | None = None
        self.sub_group_policies: tuple[SubGroupPolicy, ...] = ()
        self.sub_jobs: dict[str, SubJob] = {}
        self.task_to_sub_job: dict[str, SubJob] = {}
        self.min_sub_jobs: dict[str, int] = {}
        self.allocated_hyper_node: Any = None  # a HyperNode (runtime/framework/topology.py) or None
        self.tasks: dict[str, Task] = {}
        self.status_index: dict[str, dict[str, Task]] = {}
        self.best_effort_tasks = 0  # how many of its tasks request nothing, whatever their status
        # How many of its tasks are ready (ready_task_num): gang's victim rules and bounds ask it
        # for every candidate of every node reclaim tries, so it is counted as statuses change.
        self.ready_tasks = 0
        self.allocated = Resource()
        self.total_request = Resource()
        self.fit_errors: dict[str, Any] = {}
        self.conditions: list[dict] = []
        for name, value in fields.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"<Job {self.uid}>"

    # -- task bookkeeping ------------------------------------------------------
    def add_task(self, task: Task) -> None:
        self.tasks[task.uid] = task
        self.status_index.setdefault(task.status, {})[task.uid] = task
        if task.status in ALLOCATED_STATUS:
            self.allocated.add(task.request)
        if task.status in _READY_STATUS:
            self.ready_tasks += 1
        self.total_request.add(task.request)
        if task.best_effort:
            self.best_effort_tasks += 1
        sub_job = self.task_to_sub_job.get(task.uid) or self._sub_job_for(task)
        sub_job.add_task(task)
        self.task_to_sub_job[task.uid] = sub_job

    def _remove_task(self, task: Task) -> None:
        bucket = self.status_index.get(task.status)
        if bucket is not None:
            bucket.pop(task.uid, None)
            if not bucket:
                del self.status_index[task.status]
        if task.status in ALLOCATED_STATUS:
            self.allocated.sub(task.request)
        if task.status in _READY_STATUS:
            self.ready_tasks -= 1
        self.total_request.sub(task.request)
        if task.best_effort:
            self.best_effort_tasks -= 1
        del self.tasks[task.uid]
        sub_job = self.task_to_sub_job.get(task.uid)
        if sub_job is not None:
            sub_job.remove_task(task)

    def update_task_status(self, task: Task, status: str) -> None:
        """Volcano's UpdateTaskStatus: every status change goes through here."""
        self._remove_task(task)
        task.status = status
        self.add_task(task)

    def tasks_in(self, status: str) -> list[Task]:
        return list(self.status_index.get(status, {}).values())

    def count(self, *statuses: str) -> int:
        index = self.status_index
        return sum(len(index[s]) for s in statuses if s in index)

    # -- sub-jobs (job_info.go getOrCreateSubJob, sub_job_info.go) ---------------
    @property
    def has_sub_group_policy(self) -> bool:
        return bool(self.sub_group_policies)

    def _sub_job_for(self, task: Task) -> "SubJob":
        """The sub-job of the first policy whose matchLabelKeys the pod carries, else the default one."""
        for policy in self.sub_group_policies:
            values = policy.match_values(task.labels)
            if values:
                uid = sub_job_id(self.uid, policy.name, values)
                if uid not in self.sub_jobs:
                    self.sub_jobs[uid] = SubJob(f"{self.uid}/{policy.name}", uid, self, policy.size,
                                                policy.network_topology, values)
                return self.sub_jobs[uid]
        if self.uid not in self.sub_jobs:
            size = 1 if self.sub_group_policies else self.min_available
            self.sub_jobs[self.uid] = SubJob(self.uid, self.uid, self, size, self.network_topology, ())
        return self.sub_jobs[self.uid]

    @property
    def contains_hard_topology(self) -> bool:
        return (self.network_topology is not None and self.network_topology.is_hard) or any(
            s.network_topology is not None and s.network_topology.is_hard for s in self.sub_jobs.values())

    @property
    def contains_network_topology(self) -> bool:
        return self.network_topology is not None or any(
            s.network_topology is not None for s in self.sub_jobs.values())

    def _sub_jobs_meeting(self, condition: str) -> bool:
        if not self.min_sub_jobs:  # nothing asked of any sub-group (every job without sub-group policies)
            return True
        counts: dict[str, int] = {}
        for sub_job in self.sub_jobs.values():
            counts[sub_job.gid] = counts.get(sub_job.gid, 0) + (1 if getattr(sub_job, condition) else 0)
        return all(counts.get(gid, 0) >= need for gid, need in self.min_sub_jobs.items() if need)

    @property
    def check_sub_job_valid(self) -> bool:
        counts: dict[str, int] = {}
        for sub_job in self.sub_jobs.values():
            counts[sub_job.gid] = counts.get(sub_job.gid, 0) + 1
        return all(counts.get(gid, 0) >= need for gid, need in self.min_sub_jobs.items())

    @property
    def check_sub_job_ready(self) -> bool:
        return self._sub_jobs_meeting("is_ready")

    @property
    def check_sub_job_pipelined(self) -> bool:
        return self._sub_jobs_meeting("is_pipelined")

    # -- gang counters (job_info.go) -------------------------------------------
    @property
    def ready_task_num(self) -> int:
        return self.ready_tasks

    @property
    def waiting_task_num(self) -> int:
        return self.count(PIPELINED)

    @property
    def pending_best_effort_task_num(self) -> int:
        if not self.best_effort_tasks:  # most jobs have none: job order asks at every comparison
            return 0
        return sum(1 for t in self.status_index.get(PENDING, {}).values() if t.best_effort)

    @property
    def valid_task_num(self) -> int:
        return self.count(*_VALID_STATUS)

    @property
    def scheduled_task_num(self) -> int:
        return self.count(*SCHEDULED_STATUS)

    @property
    def allocated_task_num(self) -> int:
        return self.count(*ALLOCATED_STATUS)

    @property
    def releasing_scheduled_task_num(self) -> int:
        return sum(1 for t in self.status_index.get(RELEASING, {}).values() if t.node_name)

    @property
    def is_ready(self) -> bool:
        return self.ready_task_num + self.pending_best_effort_task_num >= self.min_available

    @property
    def is_pipelined(self) -> bool:
        return (self.waiting_task_num + self.ready_task_num
                + self.pending_best_effort_task_num >= self.min_available)

    @property
    def is_starving(self) -> bool:
        return self.waiting_task_num + self.ready_task_num < self.min_available

    @property
    def is_pending(self) -> bool:
        return self.phase in (PG_PENDING, "")

    def _roles_meet(self, statuses: frozenset, empty_pending: bool) -> bool:
        """Every role with a minimum has that many tasks in ``statuses`` (and, with ``empty_pending``,
        pending tasks requesting nothing); counted only for a job with such minimums."""
        if not self.task_min_available:
            return True
        counts = self._role_counts(statuses, empty_pending)
        return all(counts.get(role, 0) >= m for role, m in self.task_min_available.items() if m > 0)

    def _role_counts(self, statuses: frozenset, empty_pending: bool) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in self.tasks.values():
            if task.status in statuses or (empty_pending and task.status == PENDING
                                           and task.init_request.is_empty()):
                counts[task.role] = counts.get(task.role, 0) + 1
        return counts

    @property
    def check_task_valid(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet(_VALID_STATUS, False)

    def allocated_roles(self) -> dict[str, int]:
        return self._role_counts(_READY_STATUS, True)

    @property
    def check_task_ready(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet(_READY_STATUS, True)

    @property
    def check_task_pipelined(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet(_PIPELINED_STATUS, True)

    @property
    def elastic_resources(self) -> Resource:
        """GetElasticResources: allocated beyond minResources (all of it without minResources)."""
        return exceeded_part(self.allocated, self.min_resources or Resource())

    def reset_fit_errors(self) -> None:
        self.fit_errors = {}

    # -- fit-error bookkeeping (§6.2.6) ----------------------------------------
    def task_has_fit_errors(self, task: Task) -> bool:
        return role_failed(task, self.tasks, self.fit_errors)

    def need_continue_allocating(self) -> bool:
        if self.min_available == len(self.tasks):
            return False
        failed_roles = {t.role for uid, t in self.tasks.items() if uid in self.fit_errors}
        if self.min_available < self.task_min_available_total:
            pending: dict[str, int] = {}
            for t in self.status_index.get(PENDING, {}).values():
                pending[t.role] = pending.get(t.role, 0) + 1
            left = sum(n for role, n in pending.items() if role not in failed_roles)
            return self.ready_task_num + left >= self.min_available
        allocated = self.allocated_roles()
        for role in failed_roles:
            m = self.task_min_available.get(role, 0)
            if m != 0 and allocated.get(role, 0) < m:
                return False
        return True


class NetworkTopology:
    """A PodGroup's (or sub-group policy's) ``networkTopology``; the session's copy may be rewritten
    at open (tier name translated, soft turned into hard: framework/session.go)."""

    __slots__ = ("mode", "highest_tier_allowed", "highest_tier_name")

    def __init__(self, mode: str, highest_tier_allowed: int | None, highest_tier_name: str) -> None:
        self.mode = mode
        self.highest_tier_allowed = highest_tier_allowed
        self.highest_tier_name = highest_tier_name

    def copy(self) -> "NetworkTopology":
        return NetworkTopology(self.mode, self.highest_tier_allowed, self.highest_tier_name)

    @property
    def is_hard(self) -> bool:
        """IsHardTopologyMode: hard mode with a highest allowed tier."""
        return self.mode == "hard" and self.highest_tier_allowed is not None

    def convert_to_hard(self, max_tier: int) -> None:
        """ConvertToHardTopology: soft mode becomes hard mode up to ``max_tier`` (no tier name);
        hard mode is left as it is."""
        if self.mode == "soft":
            self.mode, self.highest_tier_allowed, self.highest_tier_name = "hard", max_tier, ""


class SubGroupPolicy:
    """One ``spec.subGroupPolicy`` entry of a PodGroup."""

    __slots__ = ("name", "size", "min_sub_groups", "match_label_keys", "label_selector", "network_topology")

    def __init__(self, name: str, size: int, min_sub_groups: int, match_label_keys: tuple[str, ...],
                 label_selector: Any, network_topology: NetworkTopology | None) -> None:
        self.name = name
        self.size = size
        self.min_sub_groups = min_sub_groups
        self.match_label_keys = match_label_keys
        self.label_selector = label_selector  # a callable(labels) -> bool, or None
        self.network_topology = network_topology

    def match_values(self, labels: dict) -> tuple[str, ...]:
        """getSubJobMatchValues: the pod's values for matchLabelKeys (all present and non-empty), or ()."""
        if self.label_selector is not None and not self.label_selector(labels):
            return ()
        values = tuple(str(labels.get(key) or "") for key in self.match_label_keys)
        return values if values and all(values) else ()


# apimachinery's rand alphabet (no vowels), which SafeEncodeString maps each character into.
_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def sub_job_id(job_uid: str, policy: str, values: tuple[str, ...]) -> str:
    """getSubJobID: ``<job>/<policy>-<values joined by '-'>``; values joining to more than 128 bytes
    become their FNV-32a hash in decimal, safe-encoded (rand.SafeEncodeString)."""
    joined = "-".join(values)
    data = joined.encode()
    if len(data) > 128:
        digest = 0x811C9DC5
        for byte in data:
            digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
        joined = "".join(_SAFE_ALPHANUMS[ord(c) % len(_SAFE_ALPHANUMS)] for c in str(digest))
    return f"{job_uid}/{policy}-{joined}"


class SubJob(TopologyMode):
    """Volcano's SubJobInfo: the tasks of one sub-group (or the job's default sub-job)."""

    __slots__ = ("gid", "uid", "job", "min_available", "match_index", "tasks", "status_index",
                 "allocated_hyper_node", "network_topology")

    def __init__(self, gid: str, uid: str, job: Job, min_available: int,
                 network_topology: NetworkTopology | None, match_values: tuple[str, ...]) -> None:
        self.gid = gid
        self.uid = uid
        self.job = job
        self.min_available = min_available
        # NewSubJobInfo: strconv.Atoi of the first value, 0 where Go's Atoi fails (out of int64 too).
        self.match_index = (atoi(match_values[0]) if match_values else None) or 0
        self.tasks: dict[str, Task] = {}
        self.status_index: dict[str, dict[str, Task]] = {}
        self.allocated_hyper_node: Any = None  # a HyperNode (runtime/framework/topology.py) or None
        self.network_topology = network_topology.copy() if network_topology is not None else None

    def __repr__(self) -> str:
        return f"<SubJob {self.uid}>"

    def add_task(self, task: Task) -> None:
        self.tasks[task.uid] = task
        self.status_index.setdefault(task.status, {})[task.uid] = task

    def remove_task(self, task: Task) -> None:
        self.tasks.pop(task.uid, None)
        bucket = self.status_index.get(task.status)
        if bucket is not None:
            bucket.pop(task.uid, None)
            if not bucket:
                del self.status_index[task.status]

    def count(self, *statuses: str) -> int:
        index = self.status_index
        return sum(len(index[s]) for s in statuses if s in index)

    def tasks_in(self, status: str) -> list[Task]:
        return list(self.status_index.get(status, {}).values())

    @property
    def priority(self) -> int:
        """The highest priority of its tasks (0 at least, as Volcano starts from 0)."""
        return max([0] + [t.priority for t in self.tasks.values()])

    @property
    def ready_task_num(self) -> int:
        return self.count(BOUND, BINDING, RUNNING, ALLOCATED, SUCCEEDED)

    @property
    def pending_best_effort_task_num(self) -> int:
        return sum(1 for t in self.status_index.get(PENDING, {}).values() if t.best_effort)

    @property
    def allocated_task_num(self) -> int:
        return self.count(*ALLOCATED_STATUS)

    @property
    def is_ready(self) -> bool:
        return self.ready_task_num + self.pending_best_effort_task_num >= self.min_available

    @property
    def is_pipelined(self) -> bool:
        return (self.count(PIPELINED) + self.ready_task_num
                + self.pending_best_effort_task_num >= self.min_available)

    @property
    def min_resources(self) -> Resource:
        """GetMinResources: the initial requests of its pending tasks."""
        total = Resource()
        for task in self.status_index.get(PENDING, {}).values():
            total.add(task.init_request)
        return total

    @property
    def is_soft_topology(self) -> bool:
        return self.network_topology is not None and self.network_topology.mode == "soft"

    def task_has_fit_errors(self, task: Task) -> bool:
        """TaskHasFitErrors(subJob, task): a task of the same role in this sub-job already failed."""
        return role_failed(task, self.tasks, self.job.fit_errors)

    def need_continue_allocating(self) -> bool:
        """NeedContinueAllocating(subJob) after a predicate failure."""
        job = self.job
        if job.min_available == len(job.tasks) or self.min_available >= len(self.tasks):
            return False
        if job.has_sub_group_policy:
            return True
        return job.need_continue_allocating()

    def reset_fit_errors(self) -> None:
        """ResetSubJobFitErr: forget the fit errors of this sub-job's tasks."""
        errors = self.job.fit_errors
        for uid in list(errors):
            if uid in self.tasks:
                del errors[uid]


class Queue:
    """A Volcano Queue (``QueueInfo``)."""

    __slots__ = ("uid", "name", "weight", "capability", "deserved", "guarantee", "priority",
                 "parent", "reclaimable", "state", "annotations", "labels", "creation", "raw")
    # Set from the Queue object by keyword (runtime/ingest/kube_convert.py, queue_from_object).
    uid: str
    name: str
    weight: int
    capability: Resource | None
    deserved: Resource | None
    guarantee: Resource | None
    priority: int
    parent: str
    reclaimable: bool
    state: str
    annotations: dict
    labels: dict
    creation: float
    raw: dict

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"<Queue {self.name}>"


class NodeError(Exception):
    """A node refused a task (resource or duplicate); the statement rolls back."""


class Node:
    """A node with Volcano's idle / used / releasing / pipelined accounting."""

    __slots__ = ("name", "allocatable", "capacity", "idle", "used", "releasing", "pipelined",
                 "tasks", "added_status", "labels", "annotations", "taints", "unschedulable",
                 "images", "raw", "view_pods", "view_cache", "revocable_zone", "numa", "holding_jobs",
                 "holding_job_list", "holding_groups", "holding_task_lists", "future_idle_known")

    def __init__(self, name: str, allocatable: Resource, capacity: Resource, raw: dict,
                 labels: dict, annotations: dict, taints: list, unschedulable: bool,
                 images: list) -> None:
        self.name = name
        self.allocatable = allocatable
        self.capacity = capacity
        self.idle = allocatable.clone()
        self.used = Resource()
        self.releasing = Resource()
        self.pipelined = Resource()
        self.tasks: dict[str, Task] = {}
        self.added_status: dict[str, str] = {}
        self.labels = labels
        self.annotations = annotations
        self.taints = taints
        self.unschedulable = unschedulable
        self.images = images
        self.raw = raw
        self.view_pods: dict[str, Task] = {}  # the Kubernetes NodeInfo view (§2.2)
        self.view_cache: dict = {}  # sums over view_pods; cleared whenever the view changes
        self.revocable_zone = labels.get("volcano.sh/revocable-zone", "")
        self.numa: object = None  # its Numatopology (runtime/api/numa.py), set by the session's snapshot
        # job id -> how many of its tasks here are Bound or Running (what preempt and reclaim may
        # evict): they ask which jobs they could take from on a node (holding_jobs in
        # runtime/schema.yaml) for every node they try, and walking the node's tasks for it cost
        # as much as the search itself.
        self.holding_jobs: dict[str, int] = {}
        self.holding_job_list: list | None = None  # those jobs, until holding_jobs changes (job_info.py)
        self.holding_groups: dict[str, tuple] | None = None  # those jobs by queue name, likewise
        # queue name -> the node's Bound or Running tasks of that queue's jobs, in task order, until
        # one of those tasks comes, goes or changes status (job_info.holding_tasks_in)
        self.holding_task_lists: dict[str, list] | None = None
        # future_idle until the accounting changes: preempt and reclaim read it for every node they
        # consider, tens of times between two placements on the node.
        self.future_idle_known: Resource | None = None

    def __repr__(self) -> str:
        return f"<Node {self.name}>"

    def for_session(self) -> "Node":
        """A copy of this node as it was loaded (no tasks yet), for one session."""
        return Node(self.name, self.allocatable.clone(), self.capacity.clone(), self.raw, dict(self.labels),
                    dict(self.annotations), list(self.taints), self.unschedulable, list(self.images))

    @property
    def future_idle(self) -> Resource:
        """idle + releasing - pipelined (Volcano's FutureIdle), worked out once per change of the
        node's accounting.  Shared, like ``idle``: nothing may change it in place (policies see
        resources with value semantics; their arithmetic makes new vectors)."""
        known = self.future_idle_known
        if known is None:
            known = self.idle.clone()
            releasing, pipelined = self.releasing, self.pipelined
            if releasing.milli_cpu or releasing.memory or releasing.scalars:
                known.add(releasing)
            if pipelined.milli_cpu or pipelined.memory or pipelined.scalars:
                known.sub(pipelined)
            self.future_idle_known = known
        return known

    def add_task(self, task: Task) -> None:
        if task.node_name and task.node_name != self.name:
            raise NodeError(f"task {task.key} is on node {task.node_name}, not {self.name}")
        if task.key in self.tasks:
            raise NodeError(f"task {task.key} already on node {self.name}")
        self._account(task)
        self.tasks[task.key] = task
        self.added_status[task.key] = task.status

    def _account(self, task: Task) -> None:
        """Take the task's request into the node's sums, by its status."""
        req, status = task.request, task.status
        self.future_idle_known = None
        if status == RELEASING:
            self.idle.sub(req)
            self.used.add(req)
            self.releasing.add(req)
        elif status == PIPELINED:
            self.pipelined.add(req)
        else:
            if status == BINDING:
                ok, _ = less_equal_with_names(req, self.idle, ZERO)
                if not ok:
                    raise NodeError(f"not enough idle resources on {self.name} for {task.key}")
            elif status == RUNNING or status == BOUND:
                holding = self.holding_jobs
                holding[task.job_id] = holding.get(task.job_id, 0) + 1
                self.holding_job_list = self.holding_groups = self.holding_task_lists = None
            self.idle.sub(req)
            self.used.add(req)

    def remove_task(self, task: Task) -> None:
        status = self.added_status.pop(task.key, None)
        if status is None:
            raise NodeError(f"task {task.key} is not on node {self.name}")
        del self.tasks[task.key]
        self._unaccount(task, status)

    def _unaccount(self, task: Task, status: str) -> None:
        """Give back what ``_account`` took for the task in ``status``."""
        req = task.request
        self.future_idle_known = None
        if status == RELEASING:
            self.idle.add(req)
            self.used.sub(req)
            self.releasing.sub(req)
        elif status == PIPELINED:
            self.pipelined.sub(req)
        else:
            if status == RUNNING or status == BOUND:
                holding = self.holding_jobs
                self.holding_task_lists = None
                left = holding[task.job_id] - 1
                if left:
                    holding[task.job_id] = left
                else:
                    del holding[task.job_id]
                    self.holding_job_list = self.holding_groups = None
            self.idle.add(req)
            self.used.sub(req)

    def update_task(self, task: Task) -> None:
        """A status change (evicting, undoing it) re-accounts the task where it stands among
        the node's tasks: an eviction rolled back leaves the node as it found it, order included."""
        status = self.added_status.get(task.key)
        if status is None:
            raise NodeError(f"task {task.key} is not on node {self.name}")
        self._unaccount(task, status)
        try:
            self._account(task)
        except NodeError:
            del self.tasks[task.key], self.added_status[task.key]
            raise
        self.added_status[task.key] = task.status

    def fits_idle(self, request: Resource) -> bool:
        return less_equal(request, self.idle, ZERO)


class DryRunNode(Node):
    """A copy of a node for a dry run: tasks come off and go back without touching the session.

    Topology-aware preemption tries victims on copies (Volcano clones the
    ``NodeInfo``); accounting, task map and Kubernetes view are the copy's own,
    everything else (labels, taints, allocatable) is shared with the node.
    """

    __slots__ = ()

    @classmethod
    def of(cls, node: Node) -> "DryRunNode":
        copy = cls.__new__(cls)
        for name in Node.__slots__:
            setattr(copy, name, getattr(node, name))
        copy.idle, copy.used = node.idle.clone(), node.used.clone()
        copy.releasing, copy.pipelined = node.releasing.clone(), node.pipelined.clone()
        copy.tasks, copy.added_status = dict(node.tasks), dict(node.added_status)
        copy.holding_jobs, copy.holding_job_list, copy.holding_groups = dict(node.holding_jobs), None, None
        copy.holding_task_lists = None
        copy.future_idle_known = None
        copy.view_pods = dict(node.view_pods)
        copy.view_cache = {}
        return copy
