"""The cluster a replay changes: Kubernetes objects moved by the trace and by the sessions' decisions.

A replay keeps the cluster as the Kubernetes objects a dump would hold, so
each session starts from ``Cluster.snapshot()`` exactly as ``fumarole run``
does.  Between sessions this module plays the parts of the world around the
scheduler: the kubelet (a bound pod runs, and succeeds after its run time), the
API server (an evicted pod terminates after its grace period) and the job
controller (it recreates an evicted pod, Pending again, with a new UID).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube import Cluster
from fumarole.runtime.ingest.kube_convert import pod_request
from fumarole.runtime.whatif.trace import Event, Trace, rfc3339

# What happens to an evicted task's work: it starts again from zero, or it resumes.
RESTART, RESUME = "restart", "resume"


@dataclass
class LiveTask:
    key: str
    job: str
    pod: dict
    request: Resource
    run_time: float | None  # what is left to run once started; None: until deleted
    started: float | None = None  # virtual seconds, while bound
    releasing_until: float | None = None  # while terminating after an eviction
    succeeded: bool = False
    incarnation: int = 0  # times the job controller recreated the pod
    bind_annotations: tuple[str, ...] = ()  # keys its binds wrote, which a recreated pod does not have

    @property
    def finishes(self) -> float | None:
        if self.started is None or self.run_time is None or self.releasing_until is not None:
            return None
        return self.started + self.run_time


@dataclass
class LiveJob:
    uid: str
    queue: str
    pod_group: dict
    submitted: float
    tasks: dict[str, LiveTask] = field(default_factory=dict)
    first_bound: float | None = None
    finished: float | None = None
    deleted: float | None = None


@dataclass
class Lost:
    """Work a task lost: it was evicted (or its node removed) after running ``seconds``."""

    at: float
    task: str
    job: str
    queue: str
    seconds: float
    eviction: bool


class LiveCluster:
    """The replay's cluster between sessions; times are virtual seconds since the trace's start."""

    def __init__(self, trace: Trace, on_evict: str = RESTART, grace: float = 0.0) -> None:
        self.start = trace.start
        self.on_evict, self.grace = on_evict, grace
        initial = trace.cluster
        self.nodes: dict[str, dict] = {n["metadata"]["name"]: n for n in initial.nodes}
        self.queues, self.priority_classes = initial.queues, initial.priority_classes
        # Kept as the trace gives them: no quota or disruption controller runs during a replay.
        self.resource_quotas, self.disruption_budgets = initial.resource_quotas, initial.disruption_budgets
        self.hyper_nodes = initial.hyper_nodes  # the network topology does not change during a replay
        self.node_shards = initial.node_shards  # nor do the NodeShards (no sharding controller runs)
        self.jobs: dict[str, LiveJob] = {}
        self.orphans: list[dict] = []  # pods of no PodGroup: kept, as Volcano keeps them
        self.lost: list[Lost] = []
        self.gone: list[LiveJob] = []  # deleted by the trace before they completed
        self.owner: dict[str, str] = {}  # namespace/pod -> its job's uid
        self.version = 0  # grows with every change, so a replay can tell a session changed nothing
        for pg in initial.pod_groups:
            self._add_job(pg, 0.0)
        for pod in initial.pods:
            meta = pod["metadata"]
            key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
            job = self._job_of(pod)
            if job is None:
                self.orphans.append(pod)
                continue
            task = LiveTask(key, job.uid, pod, pod_request(pod.get("spec") or {}), trace.run_times.get(key))
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Succeeded":
                task.succeeded = True
            elif (pod.get("spec") or {}).get("nodeName") and phase in ("Running", "Pending"):
                task.started = 0.0
                job.first_bound = 0.0
            self._add_task(job, task)

    # -- the trace --------------------------------------------------------------------
    def apply(self, event: Event, now: float) -> None:
        self.version += 1
        if event.kind == "submit":
            assert event.pod_group is not None  # a submit event carries its PodGroup (trace.py reads it so)
            job = self._add_job(self._stamped(event.pod_group, now), now)
            for spec in event.tasks:
                pod = self._stamped(spec.pod, now)
                key = f"{pod['metadata'].get('namespace') or 'default'}/{pod['metadata']['name']}"
                self._add_task(job, LiveTask(key, job.uid, pod, pod_request(pod.get("spec") or {}), spec.run_time))
        elif event.kind == "delete":
            deleted = self.jobs.get(event.target)
            if deleted is not None:
                deleted.deleted = now
                self._remove(deleted)
                self.gone.append(deleted)
        elif event.kind == "addNode":
            assert event.node is not None  # an addNode event carries its Node (trace.py reads it so)
            self.nodes[event.node["metadata"]["name"]] = event.node
        elif event.kind == "removeNode":
            if self.nodes.pop(event.target, None) is not None:
                for task in self._tasks_on(event.target):
                    self._lose(task, now, eviction=False)
                    self._recreate(task, now)

    def _add_job(self, pg: dict, now: float) -> LiveJob:
        meta = pg["metadata"]
        uid = f"{meta.get('namespace') or 'default'}/{meta['name']}"
        job = LiveJob(uid, str((pg.get("spec") or {}).get("queue") or "default"), pg, now)
        self.jobs[uid] = job
        return job

    def _add_task(self, job: LiveJob, task: LiveTask) -> None:
        job.tasks[task.key] = task
        self.owner[task.key] = job.uid

    def _remove(self, job: LiveJob) -> None:
        del self.jobs[job.uid]
        for key in job.tasks:
            self.owner.pop(key, None)

    def task(self, key: str) -> LiveTask:
        return self.jobs[self.owner[key]].tasks[key]

    def _job_of(self, pod: dict) -> LiveJob | None:
        meta = pod["metadata"]
        group = (meta.get("annotations") or {}).get("scheduling.k8s.io/group-name")
        return self.jobs.get(f"{meta.get('namespace') or 'default'}/{group}") if group else None

    def _stamped(self, obj: dict, now: float) -> dict:
        """A submitted object, created now (a copy: the trace's objects serve every replay)."""
        meta = dict(obj.get("metadata") or {})
        meta["creationTimestamp"] = rfc3339(self.start + now)
        meta.setdefault("uid", f"{meta.get('namespace') or 'default'}-{meta['name']}")
        return {**obj, "metadata": meta, "status": {"phase": "Pending", **(obj.get("status") or {})}}

    # -- the world between sessions -------------------------------------------------------
    def advance(self, now: float) -> list[LiveJob]:
        """Finish the tasks whose run time is over and end the terminations due; the jobs completed."""
        completed = []
        for job in list(self.jobs.values()):
            for task in job.tasks.values():
                if task.releasing_until is not None and task.releasing_until <= now:
                    self._recreate(task, now)
                    self.version += 1
                ends = task.finishes
                if ends is not None and ends <= now:
                    self._succeed(task, ends)
                    self.version += 1
            if job.tasks and all(t.succeeded for t in job.tasks.values()):
                job.finished = now
                self._remove(job)
                completed.append(job)
        return completed

    def next_change(self) -> float | None:
        """The earliest time a task finishes or a termination ends."""
        times = [t for job in self.jobs.values() for task in job.tasks.values()
                 for t in (task.finishes, task.releasing_until) if t is not None]
        return min(times, default=None)

    def _succeed(self, task: LiveTask, at: float) -> None:
        task.succeeded, task.started = True, None
        task.pod = {**task.pod, "status": {**task.pod.get("status", {}), "phase": "Succeeded"}}

    def _tasks_on(self, node: str) -> list[LiveTask]:
        return [t for job in self.jobs.values() for t in job.tasks.values()
                if t.started is not None and t.pod["spec"].get("nodeName") == node]

    def _lose(self, task: LiveTask, now: float, eviction: bool) -> None:
        ran = 0.0 if task.started is None else now - task.started
        self.lost.append(Lost(now, task.key, task.job, self.jobs[task.job].queue, ran, eviction))
        if self.on_evict == RESUME and task.run_time is not None:
            task.run_time = max(task.run_time - ran, 0.0)

    def _recreate(self, task: LiveTask, now: float) -> None:
        """The job controller's new pod: same name, new UID, Pending, created now."""
        task.incarnation += 1
        task.started, task.releasing_until = None, None
        meta = dict(task.pod["metadata"])
        meta.pop("deletionTimestamp", None)
        if task.bind_annotations:
            meta["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items()
                                   if k not in task.bind_annotations}
            task.bind_annotations = ()
        meta["uid"] = f"{meta.get('uid') or task.key}~{task.incarnation}"
        meta["creationTimestamp"] = rfc3339(self.start + now)
        spec = {k: v for k, v in task.pod.get("spec", {}).items() if k != "nodeName"}
        task.pod = {**task.pod, "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}

    # -- the sessions' decisions ------------------------------------------------------------
    def bind(self, key: str, node: str, now: float, annotations: dict[str, str] | None = None) -> None:
        """The pod runs on the node from now; the annotations the bind carries (a device
        assignment) are the pod's from then on, so later sessions see what it holds."""
        self.version += 1
        task = self.task(key)
        job = self.jobs[task.job]
        task.started = now
        if job.first_bound is None:
            job.first_bound = now
        status = {"phase": "Running", "startTime": rfc3339(self.start + now)}
        task.pod = {**task.pod, "spec": {**task.pod.get("spec", {}), "nodeName": node}, "status": status}
        if annotations:
            task.bind_annotations = tuple(sorted({*task.bind_annotations, *annotations}))
            meta = task.pod.get("metadata", {})
            task.pod = {**task.pod, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}),
                                                                           **annotations}}}

    def evict(self, key: str, now: float) -> None:
        task = self.task(key)
        if task.started is None or task.releasing_until is not None:
            return
        self.version += 1
        self._lose(task, now, eviction=True)
        task.releasing_until = now + self.grace
        meta = {**task.pod["metadata"], "deletionTimestamp": rfc3339(self.start + now)}
        task.pod = {**task.pod, "metadata": meta}

    def nominate(self, key: str, node: str) -> None:
        """The node a session nominated for the task (Decisions.nominations), written to status.nominatedNodeName."""
        task = self.task(key)
        if task.pod.get("status", {}).get("nominatedNodeName") == node:
            return
        self.version += 1
        task.pod = {**task.pod, "status": {**task.pod.get("status", {}), "nominatedNodeName": node}}

    def set_phase(self, job_uid: str, phase: str) -> None:
        job = self.jobs.get(job_uid)
        if job is None or job.pod_group.get("status", {}).get("phase") == phase:
            return
        self.version += 1
        job.pod_group = {**job.pod_group, "status": {**job.pod_group.get("status", {}), "phase": phase}}

    # -- views ------------------------------------------------------------------------------
    def cluster(self) -> Cluster:
        """The objects as a dump would list them, for the next session's snapshot."""
        pods = [task.pod for job in self.jobs.values() for task in job.tasks.values()]
        return Cluster(tuple(self.nodes.values()), tuple(pods + self.orphans),
                       tuple(job.pod_group for job in self.jobs.values()), self.queues,
                       self.priority_classes, self.resource_quotas, hyper_nodes=self.hyper_nodes,
                       disruption_budgets=self.disruption_budgets, node_shards=self.node_shards)

    def has_pending_work(self) -> bool:
        """Whether a session could have anything to do: a pod waiting, or a PodGroup not yet running."""
        return any(task.started is None and not task.succeeded
                   for job in self.jobs.values() for task in job.tasks.values())
