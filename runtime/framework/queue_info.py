"""A queue as the session sees it (Volcano's ``api/queue_info.go`` and the session's queue
lookups): the queue of a job or task, the queue's jobs, what it holds now and what it is
giving back, and the queue hierarchy.

Standard-library functions (runtime/schema.yaml); each takes the session first, where the
schema's template passes ``_rt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fumarole.runtime.api.model import Job, Queue, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.queue_tree import QueueTree, build_queue_tree

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def queue_of(session: Session, job: Job) -> Queue:
    """The job's queue; a queue the session does not have is a detached one of weight 0, made
    once per session so that every job naming it shares it."""
    queue = session.queues.get(job.queue)
    if queue is None:
        queue = session.detached_queues.get(job.queue)
        if queue is None:
            queue = Queue(uid=job.queue, name=job.queue, weight=0, capability=None, deserved=None,
                          guarantee=None, priority=0, parent="", reclaimable=True, state="",
                          annotations={}, labels={}, creation=0.0, raw={})
            session.detached_queues[job.queue] = queue
    return queue


def queue_of_task(session: Session, task: Task) -> Queue | None:
    job = session.jobs.get(task.job_id)
    return None if job is None else queue_of(session, job)


def queue_tree(session: Session, queues: list[Queue]) -> QueueTree:
    """The queue hierarchy; its problems are kept for whoever runs the session to show
    (``fumarole run`` prints them as warnings: lifecycle.open_session)."""
    tree = build_queue_tree(queues)
    session.problems.extend(p for p in tree.problems if p not in session.problems)
    return tree


# -- what victim rules read: the session as the evictions chosen so far leave it ----------
def queue_jobs(session: Session, queue: Queue) -> list[Job]:
    return [job for job in session.job_list if job.queue == queue.name]


def queue_allocated(session: Session, queue: Queue) -> Resource:
    total = Resource()
    for job in session.job_list:
        if job.queue == queue.name:
            total.add(job.allocated)
    return total


def queue_evicting(session: Session, queue: Queue) -> list[Task]:
    return [task for task in session.evicting.values()
            if (job := session.jobs.get(task.job_id)) is not None and job.queue == queue.name]
