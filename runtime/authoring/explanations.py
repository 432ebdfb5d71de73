"""Why a session decided what it did: one explanation per bind, pipeline, eviction and pending job.

:class:`Explainer` runs sessions of one bundle on an instrumented copy of its
policies with a :class:`~fumarole.runtime.authoring.tracing.Tracer` attached,
then words what the tracer saw: the policy line that placed, evicted or
committed each task; the node scores that chose a node; each plugin's verdict
on each victim; for what stayed pending, the enqueue votes that rejected it,
the queue found overused, the gang that was not ready, and Volcano's predicate
summary (``0/3 nodes are unavailable: 1 Insufficient cpu, 2 ...``) with the
rule behind each reason.  Decisions are the same as a plain run's; the cost
(instrumented code, hook wrappers) is paid only by explained runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from fumarole.runtime.api.model import PENDING, Job, SubJob, Task
from fumarole.runtime.authoring.explain import round_heading, round_verdicts, veto_text, victim_rounds
from fumarole.runtime.framework.eviction import Eviction
from fumarole.runtime.authoring.probes import HookSite, Probes
from fumarole.runtime.authoring.tracing import Answer, Move, Tracer, Where
from fumarole.runtime.bundles.bundle import Bundle
from fumarole.runtime.bundles.library import Library
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.framework.session import Decisions, Session, policies_in_use
from fumarole.runtime.ingest.kube import Cluster

SCORES_SHOWN = 3  # nodes named when a bind's node was chosen by score
TASKS_SHOWN = 5  # tasks named in one pending group


@dataclass(frozen=True)
class Reason:
    """One step of an explanation, with the policy rule behind it when there is one."""

    text: str
    at: str = ""  # FILE:LINE:COL of the rule
    by: str = ""  # the plugin or action whose rule it is

    def as_json(self) -> dict[str, str]:
        return {"text": self.text, "at": self.at, "by": self.by}

    def line(self) -> str:
        """The reason and, unless its text already names it, the rule's place: how people read it."""
        return f"{self.text}  [{self.at}]" if self.at and self.at not in self.text else self.text


@dataclass(frozen=True)
class Explanation:
    """Why one decision was made (bind, pipeline, evict) or one job left tasks pending (pending)."""

    kind: str
    job: str
    subject: str  # the pod, or for `pending` the PodGroup
    node: str
    summary: str
    because: tuple[Reason, ...]

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "job": self.job, "subject": self.subject, "node": self.node,
                "summary": self.summary, "because": [r.as_json() for r in self.because]}


INSTRUMENTED_KEPT = 8  # instrumented libraries kept per process (compiling one takes about a second)
_instrumented: dict[tuple[frozenset, frozenset], tuple[Probes, Library]] = {}


def _instrument(library: Library, used: frozenset[tuple[str, str]]) -> tuple[Probes, Library]:
    """The library compiled with probes in the ``used`` plugins and actions, hook wrappers made by
    each session's own tracer; cached by sources and what is used."""
    key = (frozenset(library.sources.items()), used)
    if key not in _instrumented:
        if len(_instrumented) >= INSTRUMENTED_KEPT:
            del _instrumented[next(iter(_instrumented))]
        probes = Probes(keep_events=True)
        _instrumented[key] = (probes, probes.instrument(library, _by_session_tracer, used))
    return _instrumented[key]


def _by_session_tracer(kind: str, name: str, builder: Callable, where: dict[str, HookSite]) -> Callable:
    """Hook wrappers are made when a session opens (``builder(session, H, args)``), by its tracer."""
    def build(session: Session, *rest: Any) -> Any:
        tracer = session.observer
        assert isinstance(tracer, Tracer), "an instrumented library runs only in an Explainer's sessions"
        return tracer.watch(kind, name, builder, where)(session, *rest)
    return build


class Explainer:
    """Runs explained sessions of one bundle (make one per bundle and reuse it)."""

    def __init__(self, bundle: Bundle) -> None:
        self.probes, library = _instrument(bundle.library, frozenset(policies_in_use(bundle)))
        self.bundle = replace(bundle, library=library)

    def session(self, cluster: Cluster, now: float | None = None, **session_args: Any) -> Session:
        """A session that records what it decides (run it as usual, then :meth:`explain`);
        ``session_args`` go to :class:`Session` (scheduler options, process state)."""
        session = new_session(self.bundle, cluster, now=now, **session_args)
        Tracer(self.probes).attach(session)
        return session

    def explain(self, session: Session, decisions: Decisions) -> list[Explanation]:
        """Binds, pipelines and evictions in decision order, then each job that left tasks pending."""
        tracer = session.observer
        if not isinstance(tracer, Tracer):
            raise ValueError("the session was not made by this Explainer")
        return _Wording(session, tracer, self.probes).all(decisions)


def run_explained(bundle: Bundle, cluster: Cluster, now: float | None = None) -> tuple[Decisions, list[Explanation]]:
    """One session with explanations (the same decisions a plain ``run_session`` makes)."""
    explainer = Explainer(bundle)
    session = explainer.session(cluster, now)
    decisions = run_session(session)
    return decisions, explainer.explain(session, decisions)


def relabel(explanations: list[Explanation], label: Callable[[str], str]) -> list[Explanation]:
    """The explanations with policy file names as ``label`` shows them (an archive's as ``ARCHIVE!/path``)."""
    files = {r.at.rsplit(":", 2)[0] for e in explanations for r in e.because if r.at}
    names = {file: label(file) for file in files if label(file) != file}
    if not names:
        return explanations

    def rename(text: str) -> str:
        for file, name in names.items():
            text = text.replace(file, name)
        return text
    return [replace(e, because=tuple(replace(r, text=rename(r.text), at=rename(r.at)) for r in e.because))
            for e in explanations]


class _Wording:
    """Turns one tracer's records into explanations."""

    def __init__(self, session: Session, tracer: Tracer, probes: Probes) -> None:
        self.session = session
        self.tracer = tracer
        self.probes = probes
        self.tasks: dict[str, Task] = {t.key: t for job in session.job_list for t in job.tasks.values()}

    def all(self, decisions: Decisions) -> list[Explanation]:
        out = [self.bind(pod, node) for pod, node in decisions.binds]
        out += [self.pipeline(pod, node) for _job, tasks in decisions.pipelined.items() for pod, node in tasks]
        out += [self.eviction(pod, reason) for pod, reason in decisions.evictions]
        out += [self.pending(job, decisions.phases.get(job.uid, job.phase)) for job in self.session.job_list
                if job.count(PENDING) or decisions.phases.get(job.uid) == "Pending"]
        return out

    # -- decisions ---------------------------------------------------------------------------
    def _last_move(self, pod: str, kind: str) -> Move | None:
        return next((m for m in reversed(self.tracer.moves.get(pod, [])) if m.kind == kind), None)

    def _job_of(self, pod: str) -> str:
        task = self.tasks.get(pod)
        return task.job_id if task is not None else ""

    def bind(self, pod: str, node: str) -> Explanation:
        move = self._last_move(pod, "Allocated")
        because: list[Reason] = []
        action = move.action if move is not None else ""
        if move is not None:
            because.append(_made("placed it", move.at, action))
            because.extend(self._node_choice(move))
            if move.committed_at is not None and move.committed_at != move.at:
                because.append(_made("bound it (statement committed)", move.committed_at, action))
        return Explanation("bind", self._job_of(pod), pod, node, f"{pod} bound to {node}" + _by(action),
                           tuple(because))

    def pipeline(self, pod: str, node: str) -> Explanation:
        move = self._last_move(pod, "Pipelined")
        because: list[Reason] = []
        action = move.action if move is not None else ""
        if move is not None:
            because.append(_made("pipelined it", move.at, action))
            if move.victims:
                names = ", ".join(v.task.key for v in move.victims)
                because.append(Reason(f"{node} has room once its evicted tasks leave: {names}", by=action))
            else:
                because.append(Reason(f"{node} has room once its releasing or pipelined resources are freed",
                                      by=action))
            because.extend(self._node_choice(move))
        return Explanation("pipeline", self._job_of(pod), pod, node, f"{pod} pipelined on {node}" + _by(action),
                           tuple(because))

    def eviction(self, pod: str, reason: str) -> Explanation:
        move = self._last_move(pod, "evict")
        action = move.action if move is not None else reason
        because: list[Reason] = []
        node = move.node if move is not None else ""
        if move is not None:
            beneficiary = self._beneficiary(move)
            because.append(_made(f"evicted it to make room for {beneficiary}" if beneficiary else "evicted it",
                                 move.at, action))
        rounds = victim_rounds(self.tracer, pod)
        if rounds:
            round_ = rounds[-1]
            because.append(Reason(f"victims chosen by {round_heading(round_)}", by=action))
            because.extend(Reason(str(v), v.at, v.plugin) for v in round_verdicts(round_, pod, self.probes.sites))
        because.extend(self._victim_order(pod))
        if move is not None and move.committed_at is not None:
            because.append(_made("evicted for good (statement committed)", move.committed_at, action))
        return Explanation("evict", self._job_of(pod), pod, node, f"{pod} evicted from {node}" + _by(action),
                           tuple(because))

    def _victim_order(self, pod: str) -> list[Reason]:
        """The plugin whose order hook told this victim (or its job) apart from another one."""
        out = []
        for subject in (pod, self._job_of(pod)):
            if subject not in self.tracer.orderings:
                continue
            found = self.tracer.orderings[subject]
            if found is None:
                out.append(Reason(f"victim order: no plugin's order hook told {subject} apart from the other "
                                  "victims; the action's default order decided"))
                continue
            plugin, hook, other = found
            site = self.tracer.hook_sites.get((plugin, hook))
            out.append(Reason(f"victims ordered by {plugin}'s {hook} (it told {subject} and {other} apart)",
                              site.location if site else "", plugin))
        return out

    def _beneficiary(self, eviction: Move) -> str:
        for moves in self.tracer.moves.values():
            for move in moves:
                if any(v is eviction for v in move.victims):
                    return move.task.key
        return ""

    def _node_choice(self, move: Move) -> list[Reason]:
        """The totals the action chose the node by, as it summed them, and each scorer's part."""
        totals = move.totals
        if not totals or move.node not in totals:
            return []
        ranked = sorted(totals, key=lambda n: (-totals[n], n != move.node))
        shown = ", ".join(f"{n} {_num(totals[n])}" for n in ranked[:SCORES_SHOWN])
        more = f", ... ({len(ranked)} nodes scored)" if len(ranked) > SCORES_SHOWN else ""
        tied = [n for n in ranked if totals[n] == totals[move.node]]
        if totals[move.node] < totals[ranked[0]]:
            choice = f"{move.node} was chosen among the nodes the action scored"
        elif len(tied) > 1:
            choice = f"{len(tied)} nodes tied for the highest node score, {move.node} was scanned first"
        else:
            choice = f"{move.node} had the highest node score"
        out = [Reason(f"{choice}: {shown}{more}", by=move.action)]
        for plugin, hook in sorted({part for parts in move.scores.values() for part in parts}):
            parts = ", ".join(f"{n} {_num(move.scores.get(n, {}).get((plugin, hook), 0.0))}"
                              for n in ranked[:SCORES_SHOWN])
            site = self.tracer.hook_sites.get((plugin, hook))
            out.append(Reason(f"{plugin} {hook} scored {parts}", site.location if site else "", plugin))
        return out

    # -- what stayed pending --------------------------------------------------------------------
    def pending(self, job: Job, phase: str) -> Explanation:
        waiting = sorted(job.tasks_in(PENDING), key=lambda t: t.key)
        because: list[Reason] = []
        because += self._answers("job_valid", job.uid, lambda r: r is not None, "job not valid: {result}")
        if phase == "Pending":
            because += self._answers("job_enqueueable", job.uid, lambda r: r < 0, "rejected the enqueue")
            if not because:
                because.append(Reason("not enqueued" + ("" if "enqueue" in self.session.action_names
                                                         else ": no enqueue action in this configuration")))
        because += self._answers("overused", job.queue, bool, f"queue {job.queue} is overused")
        because += self._taken_back(job)
        for task in waiting:
            because += self._answers("allocatable", task.key, lambda r: not r,
                                     f"queue {job.queue} may not take {task.key}")
        because += self._fit_errors(job, waiting)
        because += self._no_victims(job)
        asked = {v.actor.key for v in self.tracer.vetoes} | {k for c in self.tracer.victim_calls for k in _asked_for(c.actor)}
        untried = [t for t in waiting if t.uid not in job.fit_errors and t.key not in asked]
        if untried and phase != "Pending":
            offered_none = self._offered_none(job, untried)
            for reason, tasks in offered_none:
                because.append(replace(reason, text=f"{_names(tasks)}: {reason.text}"))
            refused = {t.uid for _reason, tasks in offered_none for t in tasks}
            untried = [t for t in untried if t.uid not in refused]
        if untried and phase != "Pending":
            because.append(Reason(_untried(untried)))
        summary = f"{job.uid} {phase}: {len(waiting)} of {len(job.tasks)} tasks pending"
        return Explanation("pending", job.uid, job.uid, "", summary, tuple(because))

    def _offered_none(self, job: Job, tasks: list[Task]) -> list[tuple[Reason, list[Task]]]:
        """Why tasks no node was scanned for were not: the plugin giving HyperNode gradients offered
        allocate none for their sub-job or their job (a hard network topology no HyperNode met), with
        the limit the job or sub-job set; each reason with the tasks it covers."""
        grouped: dict[Any, tuple[Reason, list[Task]]] = {}
        for task in tasks:
            sub_job = job.task_to_sub_job.get(task.uid)
            for hook, subject in (("hyper_node_gradient_for_sub_job", sub_job), ("hyper_node_gradient_for_job", job)):
                answers = self.tracer.answers.get((hook, subject.uid), {}) if subject is not None else {}
                answer = next((a for a in answers.values() if a.result == []), None)
                if answer is not None and subject is not None:
                    if subject.uid not in grouped:
                        grouped[subject.uid] = (self._no_hyper_node(answer, subject), [])
                    grouped[subject.uid][1].append(task)
                    break
        return list(grouped.values())

    def _no_hyper_node(self, answer: Answer, subject: Job | SubJob) -> Reason:
        """The hook that offered nothing, and the limit it applied: the highest tier, and the room the
        minimum resources need (a job already running somewhere must stay around it instead)."""
        what = "the job" if isinstance(subject, Job) else f"sub-job {subject.uid}"
        topology = subject.network_topology
        named = topology.highest_tier_name if topology is not None else ""
        limit = f"one HyperNode of tier {subject.highest_tier_allowed} or lower" + (
            f" (highestTierName {named})" if named else " (highestTierAllowed)")
        where = subject.allocated_hyper_node
        if where is not None:
            need = f", around hyperNode {where.name} where it already runs"
        else:
            minimum = subject.min_resources  # a job's spec.minResources, a sub-job's pending requests
            need = f" with room for its minimum resources ({_amounts(minimum)})" \
                if minimum is not None and not minimum.is_empty() else ""
        at = answer.decision.location if answer.decision is not None else answer.where.location
        return Reason(f"{answer.plugin} offered no HyperNode to search ({answer.hook} answered none): "
                      f"{what} must fit in {limit}{need}", at, answer.plugin)

    def _answers(self, hook: str, subject: Any, deciding: Callable[[Any], bool], what: str) -> list[Reason]:
        answers = self.tracer.answers.get((hook, subject), {})
        return [self._answer(a, what) for a in answers.values() if deciding(a.result)]

    def _answer(self, answer: Answer, what: str) -> Reason:
        result = answer.result
        text = f"{answer.plugin}: " + what.format(result="; ".join(result.reasons) if hasattr(result, "reasons")
                                                  else result)
        decision = answer.decision
        if decision is not None:
            said = "true" if result is True else "false" if result is False else _num(result) \
                if isinstance(result, (int, float)) else "none" if result is None else "a failure"
            return Reason(f"{text} ({decision.words(said)})", decision.location, answer.plugin)
        where = answer.where
        return Reason(f"{text} (`{where.expression}`)" if where.expression else text, where.location, answer.plugin)

    def _taken_back(self, job: Job) -> list[Reason]:
        """Placements of the job's tasks that a statement undid: the gang was not ready (or pipelined)."""
        undone = [m for t in sorted(job.tasks.values(), key=lambda t: t.key)
                  for m in self.tracer.moves.get(t.key, [])[-1:] if m.kind != "evict" and m.undone_at is not None]
        out = []
        for move in undone:
            victims = f" after evicting {', '.join(v.task.key for v in move.victims)}" if move.victims else ""
            status = "allocated" if move.kind == "Allocated" else "pipelined"
            out.append(_made(f"{status} {move.task.key} on {move.node}{victims}, then took it back",
                             move.undone_at, move.action))
        if undone:
            out.append(Reason(f"the job needs {job.min_available} task(s) placed together (minAvailable)"))
            out += self._answers("job_ready", job.uid, lambda r: not r, "job not ready")
            out += self._answers("job_pipelined", job.uid, lambda r: r < 0, "job not pipelined")
        return out

    def _no_victims(self, job: Job) -> list[Reason]:
        """Plugins that ruled tasks out as victims for this job's tasks (preempt_candidate / reclaim_candidate)."""
        ruled: dict[tuple[str, str, str], list] = {}
        for veto in self.tracer.vetoes:
            if veto.actor.job_id == job.uid:
                ruled.setdefault((veto.plugin, veto.hook, veto.actor.key), []).append(veto)
        out = []
        for (plugin, hook, actor), vetoes in ruled.items():
            victims = sorted({v.task.key for v in vetoes})
            last = vetoes[-1]
            why = veto_text(last).split(" answered false)", 1)[-1]
            at = last.decision.location if last.decision is not None else last.where.location
            out.append(Reason(f"{plugin} ruled out {len(victims)} victim(s) for {actor} ({hook}): "
                              f"{', '.join(victims[:TASKS_SHOWN])}{'...' if len(victims) > TASKS_SHOWN else ''}"
                              f"{why}", at, plugin))
        return out

    def _fit_errors(self, job: Job, waiting: list[Task]) -> list[Reason]:
        groups: dict[str, list[Task]] = {}
        for task in waiting:
            errors = job.fit_errors.get(task.uid)
            if errors is not None:
                groups.setdefault(errors.summary(), []).append(task)
        out: list[Reason] = []
        for summary, tasks in groups.items():
            out.append(Reason(f"{_names(tasks)}: {summary}"))
            errors = job.fit_errors[tasks[0].uid]
            reasons = sorted({r for e in errors.nodes.values() for r in e.reasons})
            for reason in reasons:
                origin = self.tracer.reason_origins.get(reason)
                if origin is not None:
                    by, at = origin
                    out.append(Reason(f"{reason}: {by} at `{at.code}`", at.location, by))
        return out


def _made(what: str, at: Where | None, action: str) -> Reason:
    if at is None:
        return Reason(f"{action} {what}".strip(), by=action)
    return Reason(f"{action} {what}: `{at.code}`".strip(), at.location, action)


def _by(action: str) -> str:
    return f" by {action}" if action else ""


def _names(tasks: list[Task]) -> str:
    names = ", ".join(t.key for t in tasks[:TASKS_SHOWN])
    return names + (f" and {len(tasks) - TASKS_SHOWN} more" if len(tasks) > TASKS_SHOWN else "")


def _untried(tasks: list[Task]) -> str:
    kinds = {"gated (scheduling gates)": [t for t in tasks if t.gated],
             "best-effort (left to backfill)": [t for t in tasks if t.best_effort and not t.gated]}
    rest = [t for t in tasks if not t.gated and not t.best_effort]
    parts = [f"{_names(ts)}: {what}" for what, ts in kinds.items() if ts]
    if rest:
        parts.append(f"{_names(rest)}: no node was checked for it this session")
    return "; ".join(parts)


def _amounts(resource: Any) -> str:
    """A resource as the amounts it holds: ``cpu 40000m, memory 1073741824``."""
    parts = [f"cpu {_num(resource.milli_cpu)}m"] if resource.milli_cpu else []
    parts += [f"memory {_num(resource.memory)}"] if resource.memory else []
    parts += [f"{name} {_num(value)}" for name, value in sorted((resource.scalars or {}).items()) if value]
    return ", ".join(parts) or "none"


def _num(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def _asked_for(actor: Any) -> list[str]:
    """The tasks a victim question was asked for: one task, or every task of the job a gang action asked for."""
    if isinstance(actor, Eviction):
        return [task.key for task in actor.job.tasks.values()]
    return [actor.key]
