"""The server side of Volcano's ``extender`` plugin, answered by the active bundle.

Each verb evaluates the bundle's own session function (``predicate``,
``reclaimable``, ...: the tiered combination of its plugins) in a fumarole
session.  Which session: the one opened by the last ``onSessionOpen`` (its
snapshot is the whole cluster, so queue- and job-aware policies see what
they need) until ``onSessionClose``; without one, a session over just the
objects the request carries.  A Volcano session therefore pins one bundle
from open to close, like ``POST /v1/sessions`` does.

Nothing of it runs in the service's process: an open Volcano session lives in
a persistent, killable child (``extender_worker.SessionWorker``), a verb
without one in a contained child of its own (docs/serving.md, "Containment").

Answers follow the Go structs exactly (docs/volcano-extender.md):
victims are echoed as received, and ``jobEnqueueable`` never answers Permit,
because a Permit in an early tier would skip Volcano's proportion and
capacity checks in later tiers.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from fumarole.runtime.api.fit import ERROR, UNRESOLVABLE, UNSCHEDULABLE, FitError
from fumarole.runtime.api.model import Job, Node, Queue, Task
from fumarole.runtime.bundles.bundle import Bundle
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import job_from_pod_group, queue_from_object, task_from_pod
from fumarole.runtime.serve.extender_codec import (
    PayloadError,
    field,
    job_pod_group,
    job_pods,
    job_priority,
    node_object,
    node_pods,
    queue_object,
    session_objects,
    task_pod,
    unique,
)
from fumarole.runtime.serve.contained import Containment
from fumarole.runtime.serve.extender_worker import SessionWorker
from fumarole.runtime.serve.registry import BundleRegistry, Revision

PREFIX = "/v1/extender"
# api/types.go status codes; a fumarole status Volcano does not know counts as an error
_CODES = {ERROR: 1, UNSCHEDULABLE: 2, UNRESOLVABLE: 3, "Wait": 4, "Skip": 5}


def implements(bundle: Bundle, hook: str) -> bool:
    """Whether any enabled plugin of the bundle implements ``hook`` (else Volcano must hear Abstain)."""
    gate = bundle.hook_gates.get(hook)
    return any(hook in bundle.plugins[e.name].module.hooks and e.enabled(gate) for tier in bundle.tiers for e in tier)


def predicate_response(failure: FitError | None) -> dict[str, Any]:
    """``PredicateResponse``: the reason under ``status``; a preemption-blocking code wins over 2."""
    if failure is None:
        return {"status": "", "code": 0}
    codes = [_CODES.get(code, 1) for code, _ in failure.statuses] or [1]
    blocking = [c for c in codes if c != 2]
    return {"status": "; ".join(failure.reasons) or "rejected by fumarole", "code": blocking[0] if blocking else 2}


class _Context:
    """A fumarole session over Volcano's objects, and lookups by Volcano identity."""

    def __init__(self, revision: Revision, objects: list[dict], priorities: dict[str, int] | None = None,
                 timeout: float | None = None, source: str | None = None) -> None:
        """``source`` names the objects of an ``onSessionOpen`` (Volcano's whole session), whose
        problems are placed there as ``run`` places them; None: a verb's own partial objects."""
        self.revision = revision
        self.ssn = new_session(revision.bundle, cluster_from_objects(unique(objects), "extender"),
                               budget=StepBudget(timeout=timeout))
        for uid, priority in (priorities or {}).items():
            if uid in self.ssn.jobs:
                self.ssn.jobs[uid].priority = priority
        open_session(self.ssn, source)
        self.tasks: dict[str, Task] = {}
        for job in self.ssn.job_list:
            self.tasks.update(job.tasks)
        for node in self.ssn.node_list:
            for task in node.tasks.values():
                self.tasks.setdefault(task.uid, task)
        self.lock = threading.Lock()

    @contextmanager
    def request(self) -> Iterator[None]:
        """One verb at a time on the session, each with the whole budget: a fresh deadline, steps and memory."""
        with self.lock:
            self.ssn.budget.renew()
            yield

    @property
    def H(self) -> Any:  # noqa: N802 - the session's dispatcher namespace, as policies call it
        return self.ssn.H

    def task(self, info: Any, what: str) -> Task:
        found = self.tasks.get(field(info, "UID", str, what))
        if found is not None:
            return found
        pod = task_pod(info, what)
        cluster_from_objects([pod], "extender")  # validate quantities before building
        return task_from_pod(pod)

    def node(self, info: Any, what: str) -> Node:
        name = field(info, "Name", str, what)
        found = self.ssn.nodes.get(name)
        if found is not None:
            return found
        obj = node_object(info, what)
        snapshot = cluster_from_objects(unique([obj] + node_pods(info, what)), "extender").snapshot()
        built = snapshot.nodes.get(name)
        if built is None:  # NodeInfo.Name and the Node inside it disagree
            raise PayloadError(f"{what}.Name {name!r} is not the name of {what}.Node "
                               f"({obj['metadata']['name']!r})")
        return built

    def queue(self, info: Any, what: str) -> Queue:
        found = self.ssn.queues.get(field(info, "Name", str, what))
        if found is not None:
            return found
        obj = queue_object(info, what)
        cluster_from_objects([obj], "extender")
        return queue_from_object(obj)

    def job(self, info: Any, what: str) -> Job:
        found = self.ssn.jobs.get(field(info, "UID", str, what))
        if found is not None:
            return found
        pg, pods = job_pod_group(info, what), job_pods(info, what)
        cluster_from_objects(unique([pg] + pods), "extender")
        job = job_from_pod_group(pg, {}, None)
        job.priority = job_priority(info, what)
        for pod in unique(pods):
            job.add_task(task_from_pod(pod))
        return job


class _Answerer:
    """Answers verbs from one fumarole session (runs in a contained child): the session an
    ``onSessionOpen`` built, or, without one, a session per verb over the objects it carries."""

    def __init__(self, revision: Revision, timeout: float | None, opened: _Context | None = None) -> None:
        self.revision, self.timeout, self.opened = revision, timeout, opened

    def answer(self, verb: str, body: dict) -> tuple[str, Any]:
        """``("ok", answer)``, or the request's or the policy's failure as data for the parent."""
        try:
            return "ok", _VERBS[verb](self, body)
        except PayloadError as exc:
            return "payload", str(exc)
        except PolicyRuntimeError as exc:
            return "policy", exc.message

    def _context(self, objects: Callable[[], list[dict]]) -> _Context:
        opened = self.opened
        return opened if opened is not None else _Context(self.revision, objects(), timeout=self.timeout)

    def _predicate(self, body: dict) -> dict:
        task, node = field(body, "task", dict, "request"), field(body, "node", dict, "request")
        ctx = self._context(lambda: [task_pod(task), node_object(node)] + node_pods(node))
        with ctx.request():
            t, n = ctx.task(task, "task"), ctx.node(node, "node")
            failure = ctx.H.pre_predicate(t) or ctx.H.predicate(t, n)
        return predicate_response(failure)

    def _prioritize(self, body: dict) -> dict:
        task, nodes = field(body, "task", dict, "request"), field(body, "nodes", list, "request")
        ctx = self._context(lambda: [task_pod(task)] + [o for n in nodes for o in [node_object(n)] + node_pods(n)])
        with ctx.request():
            t = ctx.task(task, "task")
            candidates = [ctx.node(n, f"nodes[{i}]") for i, n in enumerate(nodes)]
            scores = {n.name: ctx.H.node_order(t, n) for n in candidates}
            batch = ctx.H.batch_node_order(t, candidates)
        if batch is None:
            return {"nodeScore": {}, "errorMessage": "a batch_node_order plugin failed"}
        for node, score in batch.items():
            scores[node.name] = scores.get(node.name, 0.0) + score
        return {"nodeScore": scores, "errorMessage": ""}

    def _victims(self, hook: str, body: dict) -> dict:
        evictor, evictees = field(body, "evictor", dict, "request"), field(body, "evictees", list, "request")
        ctx = self._context(lambda: [task_pod(evictor, "evictor")] +
                            [task_pod(e, f"evictees[{i}]") for i, e in enumerate(evictees)])
        if not implements(ctx.revision.bundle, hook):
            return {"status": 0}
        with ctx.request():
            actor = ctx.task(evictor, "evictor")
            candidates = [ctx.task(e, f"evictees[{i}]") for i, e in enumerate(evictees)]
            chosen = {id(t) for t in getattr(ctx.H, hook)(actor, candidates)}
        # Go may use the returned objects as they are, so they must be the evictees exactly as received
        return {"status": 1, "victims": [evictees[i] for i, t in enumerate(candidates) if id(t) in chosen]}

    def _queue_overused(self, body: dict) -> dict:
        queue = field(body, "queue", dict, "request")
        ctx = self._context(lambda: [queue_object(queue)])
        with ctx.request():
            overused = bool(ctx.H.overused(ctx.queue(queue, "queue")))
        return {"overused": overused}

    def _job_enqueueable(self, body: dict) -> dict:
        job = field(body, "job", dict, "request")
        ctx = self._context(lambda: [job_pod_group(job)] + job_pods(job))
        with ctx.request():
            allowed = ctx.H.job_enqueueable(ctx.job(job, "job"))
        return {"status": 0 if allowed else -1}

    def _job_ready(self, body: dict) -> dict:
        job = field(body, "job", dict, "request")
        ctx = self._context(lambda: [job_pod_group(job)] + job_pods(job))
        with ctx.request():
            ready = bool(ctx.H.job_ready(ctx.job(job, "job")))
        return {"status": ready}


def _unwrap(outcome: tuple[str, Any]) -> dict:
    kind, payload = outcome
    if kind == "payload":
        raise PayloadError(payload)
    if kind == "policy":
        raise PolicyRuntimeError(payload)
    return payload


class Extender:
    """Routes the verbs: a Volcano session's to its worker (extender_worker.SessionWorker) between
    onSessionOpen and onSessionClose, any other in a contained child of its own.  Nothing a policy
    does runs in the service's process, so none of it can hold the service up."""

    def __init__(self, registry: BundleRegistry, containment: Containment | None = None) -> None:
        self.registry = registry
        self.containment = containment if containment is not None else Containment(None)
        self._open: tuple[Revision, SessionWorker] | None = None
        self._open_lock = threading.Lock()

    @property
    def session_timeout(self) -> float | None:
        """Each verb's deadline (serve's --session-timeout)."""
        return self.containment.wall_seconds

    def handle(self, verb: str, body: Any) -> tuple[dict[str, Any], Revision]:
        """The response body and the revision that answered (``verb`` is one of VERBS).

        Raises PayloadError or FumaroleError for a body of the wrong shape (a FumaroleError
        for which ``extender_worker.worker_failure`` holds: the verb ran over, ran out of
        memory or failed), PolicyRuntimeError when the bundle fails.
        """
        if verb not in VERBS:
            raise PayloadError(f"unknown verb {verb!r}")
        if not isinstance(body, dict):
            raise PayloadError("the request body must be a JSON object")
        if verb == "onSessionOpen":
            return self._session_open(body)
        if verb == "onSessionClose":
            return self._session_close()
        opened = self._open
        if opened is not None:
            revision, worker = opened
            return _unwrap(worker.ask(verb, body)), revision
        revision = self.registry.active
        answerer = _Answerer(revision, self.session_timeout)
        return _unwrap(self.containment.run(lambda: answerer.answer(verb, body), f"extender {verb}")), revision

    def _session_open(self, body: dict) -> tuple[dict, Revision]:
        objects, priorities = session_objects(body)
        revision, timeout = self.registry.active, self.session_timeout

        def build() -> Callable[[str, dict], tuple[str, Any]]:
            context = _Context(revision, objects, priorities, timeout, "onSessionOpen")
            return _Answerer(revision, timeout, context).answer
        worker = SessionWorker(self.containment, build)
        worker.start()
        with self._open_lock:
            previous, self._open = self._open, (revision, worker)
        if previous is not None:
            previous[1].stop()
        return {}, revision

    def _session_close(self) -> tuple[dict, Revision]:
        with self._open_lock:
            opened, self._open = self._open, None
        if opened is None:
            return {}, self.registry.active
        opened[1].stop()
        return {}, opened[0]


_VERBS: dict[str, Callable[[_Answerer, dict], dict]] = {
    "predicate": _Answerer._predicate,
    "prioritize": _Answerer._prioritize,
    "preemptable": lambda self, body: self._victims("preemptable", body),
    "reclaimable": lambda self, body: self._victims("reclaimable", body),
    "queueOverused": _Answerer._queue_overused,
    "jobEnqueueable": _Answerer._job_enqueueable,
    "jobReady": _Answerer._job_ready,
}
VERBS = ("onSessionOpen", "onSessionClose", *_VERBS)
