"""What Volcano's ``api/job_info.go`` computes of a job for the plugins: its minResources as
written, its resources less the scheduling-gated tasks', where its fit errors go; and what
the session knows of it: its tasks being evicted, a task's sub-job, its PodGroup
conditions (UpdatePodGroupCondition), and which jobs hold tasks on a node.

Standard-library functions (runtime/schema.yaml); those of the session take it first,
where the schema's template passes ``_rt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fumarole.runtime.api.constraints import ResourceList
from fumarole.runtime.api.fit import FitErrors
from fumarole.runtime.api.model import BOUND, RUNNING, Job, Node, Queue, SubJob, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.queue_info import queue_of
from fumarole.runtime.k8s.podspec import only_queue_allocation_gate

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def min_resource_list(job: Job) -> ResourceList | None:
    """spec.minResources with its names as written (the resourcequota plugin compares by name)."""
    raw = (job.pod_group.get("spec") or {}).get("minResources")
    return None if raw is None else ResourceList.of(raw)


def min_resource_names(job: Job) -> list[str]:
    spec = job.pod_group.get("spec") or {}
    return [str(name) for name in (spec.get("minResources") or {})]


def deduct_gated(job: Job, res: Resource) -> Resource:
    """Volcano's DeductSchGatedResources over GetSchGatedPodResources.

    Gated tasks hold no queue room until their gates go, so the quota plugins
    leave them out of a job's inqueue share; a task whose only gate is
    Volcano's queue-allocation gate is the exception (Volcano lifts that gate
    itself once the queue has room, so it counts as inqueue).
    """
    gated = Resource()
    for task in job.tasks.values():
        if task.gated and not only_queue_allocation_gate(task):
            gated.add(task.request)
    if gated.is_empty():
        return res
    out = res.clone()
    out.milli_cpu = max(out.milli_cpu - gated.milli_cpu, 0.0)
    out.memory = max(out.memory - gated.memory, 0.0)
    if out.scalars and gated.scalars:
        for name, amount in out.scalars.items():
            if name in gated.scalars:
                out.scalars[name] = max(amount - gated.scalars[name], 0.0)
    return out


def record_fit_errors(job: Job, task: Task, errors: FitErrors) -> None:
    job.fit_errors[task.uid] = errors


def record_fit_error(job: Job, task: Task, message: str) -> None:
    job.fit_errors[task.uid] = FitErrors(message=message)


def job_evicting(session: Session, job: Job) -> list[Task]:
    """The job's tasks evicted in this session so far, in eviction order."""
    return [task for task in session.evicting.values() if task.job_id == job.uid]


def sub_job_of(session: Session, task: Task) -> SubJob | None:
    job = session.jobs.get(task.job_id)
    return None if job is None else job.task_to_sub_job.get(task.uid)


def set_condition(session: Session, job: Job, kind: str, status: str, reason: str) -> None:
    """UpdatePodGroupCondition; like framework/job_updater.go, a condition that keeps its status and
    reason keeps its lastTransitionTime (job.pending_since reads it), else it changes now."""
    old = next((c for c in job.conditions if c.get("type") == kind), None)
    unchanged = old is not None and old.get("status") == status and old.get("reason") == reason
    condition = {"type": kind, "status": status, "transitionID": session.uid, "reason": reason,
                 "lastTransitionTime": old.get("lastTransitionTime") if old is not None and unchanged else session.now}
    job.conditions = [c for c in job.conditions if c.get("type") != kind] + [condition]


def holding_jobs(session: Session, node: Node) -> list[Job]:
    """The session's jobs with Bound or Running tasks on the node, from the count the node keeps
    (``Node.holding_jobs``): preempt and reclaim ask for every node they try which jobs they could
    take from,
    again and again between the few evictions that change the answer, so the node keeps the
    list until its count changes (the session's jobs are fixed once it is open)."""
    known = node.holding_job_list
    if known is None:
        jobs = session.jobs
        known = node.holding_job_list = [job for uid in node.holding_jobs if (job := jobs.get(uid)) is not None]
    return list(known)


def _holding_groups(session: Session, node: Node) -> dict[str, tuple[Queue, list[Job]]]:
    """The node's holding jobs by the name of their queue, with the queue, kept like the list
    itself (a session's queues are fixed once it is open)."""
    groups = node.holding_groups
    if groups is None:
        groups = node.holding_groups = {}
        for job in holding_jobs(session, node):
            group = groups.get(job.queue)
            if group is None:
                group = groups[job.queue] = (queue_of(session, job), [])
            group[1].append(job)
    return groups


def holding_jobs_in(session: Session, node: Node, queue: Queue) -> list[Job]:
    """The node's holding jobs of one queue: preempt takes victims from the preemptor's queue
    only, and on most nodes most holding jobs belong to other queues."""
    group = _holding_groups(session, node).get(queue.name)
    return [] if group is None else list(group[1])


def holding_tasks_in(session: Session, node: Node, queue: Queue) -> list[Task]:
    """The node's Bound or Running tasks whose job is in the queue, in the node's task order:
    preempt gathers its victims among them on every node it tries, where most of a node's tasks
    belong to other queues.  Worked out for every queue at once and kept until one of the node's
    Bound or Running tasks comes, goes or changes status."""
    lists = node.holding_task_lists
    if lists is None:
        lists = node.holding_task_lists = {}
        jobs = session.jobs
        for task in node.tasks.values():
            if task.status != BOUND and task.status != RUNNING:
                continue
            job = jobs.get(task.job_id)
            if job is not None:
                lists.setdefault(job.queue, []).append(task)
    return list(lists.get(queue.name, ()))


def holding_queues(session: Session, node: Node) -> list[Queue]:
    """The queues of the node's holding jobs, each once: reclaim takes from other queues, and
    asks per queue (reclaimable, over its share) before it looks at their jobs."""
    return [queue for queue, _ in _holding_groups(session, node).values()]
