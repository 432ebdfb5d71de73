"""The extender functions of the standard library (docs/stdlib.md, ``Extender``, ``ExtenderReply``).

The extender plugin (policies/volcano/plugins/extender.policy) decides what
every answer means; this module only makes the calls Volcano's plugin makes
and reads the answers as Go reads them: ``extender(url_prefix, timeout)``
gives a handle whose methods each send one request struct of
``extender/argument.go`` and decode its response struct.  Every call is
bounded by its timeout and by the session's deadline, and charged to the
session's step budget by its size (``extender_http``), so a policy that calls
an extender still ends within its budget whatever the extender does.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from fumarole.runtime.api.fit import ERROR, UNRESOLVABLE, UNSCHEDULABLE, FitError
from fumarole.runtime.api.model import Job, Node, Queue, Task
from fumarole.runtime.framework import extender_wire as wire
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.extender_http import post, verb_url
from fumarole.runtime.framework.extender_replies import Reply, read_reply

_BYTES_PER_STEP = 256  # a request or answer costs one step per this many bytes (a copy and a parse)
# Volcano's api.Status codes (api/types.go) that fail a node, as fumarole's fit statuses.
_STATUS_NAMES = {1: ERROR, 2: UNSCHEDULABLE, 3: UNRESOLVABLE, 4: "Wait", 5: "Skip"}


class Extender:
    """One extender endpoint (``extender.urlPrefix``) with its ``extender.httpTimeout``, in seconds."""

    __slots__ = ("budget", "url_prefix", "timeout")

    def __init__(self, budget: StepBudget, url_prefix: str, timeout: float) -> None:
        self.budget, self.url_prefix, self.timeout = budget, url_prefix, timeout

    def _send(self, verb: str, request: dict[str, Any], response: str | None) -> Reply:
        """Post the request; decode the answer into the Go struct ``response`` (None: the body is not read)."""
        body = json.dumps(request, separators=(",", ":")).encode()
        self.budget.charge(len(body) // _BYTES_PER_STEP + 1)
        answer = post(verb_url(self.url_prefix, verb), verb, body, self.timeout, self.budget.deadline)
        # The call may have waited until the session's deadline.  Check the limits now: the watchdog
        # that would empty the budget there is a thread, and on a busy machine the session could
        # finish past its deadline before that thread runs.
        self.budget.spent()
        self.budget.charge(len(answer.body) // _BYTES_PER_STEP)
        if response is None:
            return Reply(error=answer.error)
        return read_reply(answer, response)

    # -- one method per request of extender/argument.go ----------------------------------------
    def session_open(self, verb: str, jobs: list[Job], nodes: list[Node], queues: list[Queue],
                     quotas: Iterable[Mapping[str, Any]] = ()) -> Reply:
        return self._send(verb, wire.session_open_request(jobs, nodes, queues, quotas), None)

    def session_close(self, verb: str) -> Reply:
        return self._send(verb, {}, None)

    def predicate(self, verb: str, task: Task, node: Node) -> Reply:
        return self._send(verb, {"task": wire.task_info(task), "node": wire.node_info(node)}, "PredicateResponse")

    def prioritize(self, verb: str, task: Task, nodes: Any) -> Reply:
        listed = list(getattr(nodes, "nodes", nodes))  # a node batch (the fast engine) or a list
        return self._send(verb, {"task": wire.task_info(task), "nodes": [wire.node_info(n) for n in listed]},
                          "PrioritizeResponse")

    def preemptable(self, verb: str, evictor: Task, evictees: list[Task]) -> Reply:
        return self._send(verb, _eviction(evictor, evictees), "PreemptableResponse")

    def reclaimable(self, verb: str, evictor: Task, evictees: list[Task]) -> Reply:
        return self._send(verb, _eviction(evictor, evictees), "ReclaimableResponse")

    def job_enqueueable(self, verb: str, job: Job) -> Reply:
        return self._send(verb, {"job": wire.job_info(job)}, "JobEnqueueableResponse")

    def job_enqueued(self, verb: str, job: Job) -> Reply:
        return self._send(verb, {"job": wire.job_info(job)}, "JobEnqueuedResponse")

    def job_ready(self, verb: str, job: Job) -> Reply:
        return self._send(verb, {"job": wire.job_info(job)}, "JobReadyResponse")

    def queue_overused(self, verb: str, queue: Queue) -> Reply:
        return self._send(verb, {"queue": wire.queue_info(queue)}, "QueueOverusedResponse")

    def task_event(self, verb: str, task: Task) -> Reply:
        return self._send(verb, {"task": wire.task_info(task)}, "EventHandlerResponse")


def _eviction(evictor: Task, evictees: list[Task]) -> dict[str, Any]:
    return {"evictor": wire.task_info(evictor), "evictees": [wire.task_info(t) for t in evictees]}


def client(budget: StepBudget) -> Callable[[str, float], Extender]:
    """``extender(url_prefix, timeout)`` as generated code calls it: with the session's budget."""
    def extender(url_prefix: str, timeout: float) -> Extender:
        return Extender(budget, url_prefix, timeout)
    return extender


def status_fit_error(code: int, reason: str) -> FitError | None:
    """A fit error with one of Volcano's status codes 1-5 (Error, Unschedulable,
    UnschedulableAndUnresolvable, Wait, Skip); None for any other code, which no Volcano action
    counts as a failure (PredicateForAllocateAction and PredicateForPreemptAction keep only those)."""
    name = _STATUS_NAMES.get(code)
    return None if name is None else FitError([(name, reason)])


def resource_names(task: Task) -> list[str]:
    """Every resource name in the requests or limits of the pod's containers and init containers
    (what Volcano's extender IsInterested looks at), in order, each once."""
    pod = task.pod if isinstance(task.pod, dict) else {}
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return []
    names: dict[str, None] = {}
    for group in ("containers", "initContainers"):
        for container in spec.get(group) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict):
                continue
            for part in ("requests", "limits"):
                listed = resources.get(part)
                if isinstance(listed, dict):
                    names.update(dict.fromkeys(str(k) for k in listed))
    return list(names)

