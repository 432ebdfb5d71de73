"""Recording one session for explanations: every plugin answer that can decide something,
and the policy line where each placement, eviction and fit error was made.

An explaining run compiles the bundle's policies once more with probes
(:mod:`fumarole.runtime.authoring.probes`), wraps the plugin hooks whose
answers decide (victims, candidates, votes, checks, predicates, scores), and
attaches a :class:`Tracer` to the session as its observer.  A plain session has
no observer and runs the uninstrumented code: none of this costs it anything.

The probes' event list is cleared whenever a traced hook is entered from
outside any other, so memory stays bounded by one hook call however long the
session runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable

from fumarole.runtime.api.model import PENDING, Job, Node, Queue, SubJob, Task
from fumarole.runtime.authoring.probes import HookSite, Probes, Site

VICTIM_HOOKS = ("preemptable", "reclaimable", "unified_evictable")
CANDIDATE_HOOKS = ("preempt_candidate", "reclaim_candidate")
# Hooks whose last answer per plugin and subject is kept (a vote, a yes/no, a failure).
ANSWER_HOOKS = ("job_valid", "job_enqueueable", "overused", "allocatable", "job_ready", "job_pipelined",
                "job_starving", "preemptive")
# The HyperNodes a hard network-topology job (or sub-job) may be placed in: the answer for allocate is
# kept, so that a job none was offered to is told apart from one no node was scanned for.
GRADIENT_HOOKS = ("hyper_node_gradient_for_job", "hyper_node_gradient_for_sub_job")
PREDICATE_HOOKS = ("predicate", "pre_predicate")
SCORE_HOOKS = ("node_order", "batch_node_order")
# Comparisons that order victims (among other things): the plugin that told two victims apart is named.
ORDER_HOOKS = ("job_order", "task_order", "victim_order")


@dataclass(frozen=True)
class Where:
    """A place in a policy file and the code written there."""

    file: str
    line: int
    col: int
    code: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class VictimCall:
    """One plugin's answer to one victim question."""

    plugin: str
    hook: str
    actor: Any
    candidates: list
    chosen: list
    vote: int
    events: list = field(repr=False)


@dataclass(frozen=True)
class Decision:
    """Where a plugin's hook decided its answer, in the hook's own body (a helper's branches never
    stand for the hook): the expression a one-line hook is, the guarded statement whose condition
    was true (`return false when c`, `fail "..." when c`), or the statement the hook ended at."""

    ended: Where
    condition: Site | None = None
    expression: bool = False  # `ended` is the expression of a one-line hook

    @property
    def location(self) -> str:
        return self.condition.location if self.condition is not None else self.ended.location

    def words(self, answer: str) -> str:
        """How an explanation quotes it."""
        if self.condition is not None:
            return f"`{self.condition.rule}`: `{self.condition.text}` was true"
        if self.expression:
            return f"`{self.ended.code}` is {answer}"
        return f"`{self.ended.code}` decided it"


@dataclass
class CandidateCall:
    """A plugin answering no to "may this task be a victim at all?"."""

    plugin: str
    hook: str
    where: HookSite
    actor: Any
    task: Any
    events: list = field(repr=False)
    decision: Decision | None = None


@dataclass(frozen=True)
class Answer:
    """A plugin's last answer to a hook about one subject, and where its hook decided it."""

    plugin: str
    hook: str
    result: Any
    where: HookSite
    decision: Decision | None


@dataclass(eq=False)
class Move:
    """One operation on a task: placed (Allocated / Pipelined) or evicted, and what became of it."""

    kind: str  # Allocated, Pipelined, evict
    task: Task
    node: str
    action: str
    at: Where | None
    scores: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)  # node -> (plugin, hook) -> score
    totals: dict[str, float] | None = None  # node -> the score the action chose by, as it summed them
    victims: list["Move"] = field(default_factory=list)  # evictions made room for a pipelined task
    undone_at: Where | None = None
    committed_at: Where | None = None


def ident(value: Any) -> Any:
    """How a subject is keyed: tasks by namespace/name, jobs and sub-jobs by UID, queues and nodes by name."""
    if isinstance(value, Task):
        return value.key
    if isinstance(value, (Job, SubJob)):
        return value.uid
    if isinstance(value, (Queue, Node)):
        return value.name
    if isinstance(value, list):
        return tuple(ident(v) for v in value)
    return id(value)


class Tracer:
    """Wraps plugin hooks (:meth:`watch`, for :meth:`Probes.instrument`) and observes a session."""

    def __init__(self, probes: Probes) -> None:
        self.probes = probes
        self.victim_calls: list[VictimCall] = []
        self.vetoes: list[CandidateCall] = []
        self.answers: dict[tuple[str, Any], dict[str, Answer]] = {}  # (hook, subject) -> plugin -> answer
        self.reason_origins: dict[str, tuple[str, Where]] = {}  # fit-error reason -> (plugin or action, where)
        self.scores: dict[str, dict[str, dict[tuple[str, str], float]]] = {}  # task -> node -> (plugin, hook) -> score
        self.totals: dict[str, dict[str, float]] = {}  # task -> node -> total, as the action last chose by
        self._round: dict[str, Any] = {}  # task -> the node list its current scoring round started with
        self._scoring = ""  # the task whose nodes a plugin scored last
        self.moves: dict[str, list[Move]] = {}  # task key -> its operations in order
        self.hook_sites: dict[tuple[str, str], HookSite] = {}  # (plugin, hook) -> where it is implemented
        # victim (task key or job UID) -> (plugin, hook, other) of the last plugin that told it apart from
        # another, or None while every plugin asked answered "equal"
        self.orderings: dict[str, tuple[str, str, str] | None] = {}
        self._unclaimed: list[Move] = []  # evictions no placement has claimed yet (nor undone)
        self._depth = 0
        self._modules: dict[str, Any] = {}
        self._actions: dict[str, str] = {}  # action policy file -> action name

    # -- wiring ---------------------------------------------------------------------------
    def attach(self, session: Any) -> None:
        """Observe ``session`` (built on the instrumented library this tracer watched)."""
        library = session.bundle.library
        self._modules = dict(library.modules_by_filename)
        self._actions = {p.module.file: name for name, p in library.actions.items()}
        self._sources = library.sources
        session.observer = self

    def watch(self, kind: str, name: str, builder: Callable, where: dict[str, HookSite]) -> Callable:
        if kind != "plugin":
            return builder

        def build(*args: Any) -> dict:
            hooks = builder(*args)
            return {hook: self._wrap(name, hook, fn, where.get(hook, HookSite("?"))) for hook, fn in hooks.items()}
        return build

    def _wrap(self, plugin: str, hook: str, fn: Callable, where: HookSite) -> Callable:
        self.hook_sites[(plugin, hook)] = where
        if hook in VICTIM_HOOKS:
            return self._traced_victims(plugin, hook, fn)
        if hook in CANDIDATE_HOOKS:
            return self._asked(plugin, hook, where, fn)
        if hook in ANSWER_HOOKS:
            return self._answered(plugin, hook, where, fn)
        if hook in GRADIENT_HOOKS:
            return self._offered(plugin, hook, where, fn)
        if hook in PREDICATE_HOOKS:
            return self._predicated(plugin, where, fn)
        if hook in SCORE_HOOKS:
            return self._scored(plugin, hook, fn)
        if hook in ORDER_HOOKS:
            return self._ordered(plugin, hook, fn)
        return fn

    def _ordered(self, plugin: str, hook: str, fn: Callable) -> Callable:
        """The last plugin that told two running tasks (or two jobs with nothing pending) apart: those
        are compared to order victims, pending ones to order what is placed."""
        def ordered(*args: Any) -> Any:
            result = fn(*args)
            if len(args) == 2 and all(_running(a) for a in args):
                left, right = ident(args[0]), ident(args[1])
                if result:
                    self.orderings[left] = (plugin, hook, right)
                    self.orderings[right] = (plugin, hook, left)
                else:
                    self.orderings.setdefault(left, None)
                    self.orderings.setdefault(right, None)
            return result
        return ordered

    def _call(self, fn: Callable, args: tuple) -> tuple[Any, list]:
        """Run a plugin function; its result and the probe events it produced."""
        events = self.probes.events
        assert events is not None
        if self._depth == 0:
            events.clear()
        mark = len(events)
        self._depth += 1
        try:
            result = fn(*args)
        finally:
            self._depth -= 1
        return result, events[mark:]

    def _decided(self, fn: Callable, args: tuple, hook: HookSite) -> tuple[Any, list, Decision | None]:
        """As :meth:`_call`, and where the hook's own body decided (:class:`Decision`): for a one-line
        hook its expression; else the line its frame returned from (a profile function sees that
        return), with the true guard of that statement; else its last true guard."""
        code = getattr(fn, "__code__", None)
        returned: list[int] = []

        def profile(frame: Any, event: str, _arg: Any) -> None:
            if event == "return" and frame.f_code is code:
                returned.append(frame.f_lineno)
        previous = sys.getprofile()
        sys.setprofile(profile)
        try:
            result, events = self._call(fn, args)
        finally:
            sys.setprofile(previous)
        file, line, col = _split_location(hook.location)
        if hook.expression and file:
            return result, events, Decision(Where(file, line, col, hook.expression), expression=True)
        guards = [site for site in (self.probes.sites[e[1]] for e in events if e[0] == "probe" and e[2])
                  if site.kind == "guard" and hook.holds(site)]
        module = self._modules.get(code.co_filename) if code is not None else None
        if returned and module is not None:
            line, col = module.policy_position(returned[-1])
            if line:
                file = module.policy_file(returned[-1])
                condition = next((site for site in reversed(guards) if site.line == line), None)
                return result, events, Decision(Where(file, line, col, self._line(file, line)), condition)
        if guards:
            last = guards[-1]
            return result, events, Decision(Where(last.file, last.line, last.col, last.rule), last)
        return result, events, None

    def _traced_victims(self, plugin: str, hook: str, fn: Callable) -> Callable:
        def traced(actor: Any, candidates: list) -> tuple:
            (chosen, vote), events = self._call(fn, (actor, candidates))
            self.victim_calls.append(VictimCall(plugin, hook, actor, list(candidates), list(chosen), vote, events))
            return chosen, vote
        return traced

    def _asked(self, plugin: str, hook: str, where: HookSite, fn: Callable) -> Callable:
        def asked(actor: Any, task: Any) -> bool:
            result, events, decision = self._decided(fn, (actor, task), where)
            if not result:
                self.vetoes.append(CandidateCall(plugin, hook, where, actor, task, events, decision))
            return result
        return asked

    def _answered(self, plugin: str, hook: str, where: HookSite, fn: Callable) -> Callable:
        subject_at = 1 if hook in ("allocatable", "preemptive") else 0

        def answered(*args: Any) -> Any:
            result, _events, decision = self._decided(fn, args, where)
            key = (hook, ident(args[subject_at]))
            self.answers.setdefault(key, {})[plugin] = Answer(plugin, hook, result, where, decision)
            return result
        return answered

    def _offered(self, plugin: str, hook: str, where: HookSite, fn: Callable) -> Callable:
        """The gradients offered to allocate (``purpose`` "allocate"; the gang actions' "evict" ones
        are theirs), kept per job or sub-job with where the hook decided them."""
        def offered(subject: Any, hyper_node: Any, purpose: str) -> Any:
            if purpose != "allocate":
                return fn(subject, hyper_node, purpose)
            result, _events, decision = self._decided(fn, (subject, hyper_node, purpose), where)
            self.answers.setdefault((hook, ident(subject)), {})[plugin] = Answer(plugin, hook, result, where, decision)
            return result
        return offered

    def _predicated(self, plugin: str, where: HookSite, fn: Callable) -> Callable:
        """Each reason of a failure tied to the `fail` that gave it: the true `fail ... when` guards of the
        hook's own body, in the order their reasons were added (else where the hook decided)."""
        def predicated(*args: Any) -> Any:
            failure, events, decision = self._decided(fn, args, where)
            if failure is not None:
                fails = [site for site in (self.probes.sites[e[1]] for e in events if e[0] == "probe" and e[2])
                         if site.kind == "guard" and site.rule.startswith("fail") and where.holds(site)]
                reasons = failure.reasons
                if len(fails) == len(reasons):
                    for reason, site in zip(reasons, fails):
                        self.reason_origins.setdefault(reason, (plugin, self._site_where(site)))
                elif decision is not None:
                    at = self._site_where(decision.condition) if decision.condition is not None else decision.ended
                    for reason in reasons:
                        self.reason_origins.setdefault(reason, (plugin, at))
            return failure
        return predicated

    def _scored(self, plugin: str, hook: str, fn: Callable) -> Callable:
        """Each plugin's part of a task's node scores in the current round; a round starts when the
        batch scorers are asked about a new list of nodes (PrioritizeNodes asks them first)."""
        def scored(task: Any, nodes: Any) -> Any:
            result, _events = self._call(fn, (task, nodes))
            self._scoring = task.key
            if hook == "batch_node_order" and self._round.get(task.key) is not nodes:
                self._round[task.key] = nodes
                self.scores[task.key] = {}
            per_node = self.scores.setdefault(task.key, {})
            if hook == "node_order":
                if result is not None:
                    per_node.setdefault(nodes.name, {})[(plugin, hook)] = float(result)
            elif result is not None:
                for node, score in result.items():
                    per_node.setdefault(node.name, {})[(plugin, hook)] = float(score)
            return result
        return scored

    # -- where a decision is made -----------------------------------------------------------
    def _site_where(self, site: Site) -> Where:
        return Where(site.file, site.line, site.col, site.rule)

    def _policy_frame(self) -> tuple[str, Where | None]:
        """The action running and the innermost policy line on the stack (the caller of the session)."""
        frame: FrameType | None = sys._getframe(2)
        innermost: Where | None = None
        action = ""
        while frame is not None:
            module = self._modules.get(frame.f_code.co_filename)
            if module is not None:
                if innermost is None:
                    line, col = module.policy_position(frame.f_lineno)
                    file = module.policy_file(frame.f_lineno)
                    innermost = Where(file, line, col, self._line(file, line))
                action = self._actions.get(module.file, action)
            frame = frame.f_back
        return action, innermost

    def _line(self, file: str, line: int) -> str:
        lines = self._sources.get(file, "").splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    # -- the session's observer (framework.session.SessionObserver) --------------------------
    def nodes_scored(self, scores: dict) -> None:
        """An action chose a node by these totals (select_best / sort_by_score): they belong to the task
        whose nodes the plugins scored last, when they are that round's nodes."""
        names = {node.name: float(score) for node, score in scores.items()}
        parts = self.scores.get(self._scoring)
        if parts is not None and names.keys() <= parts.keys():
            self.totals[self._scoring] = names

    def placed(self, task: Task, node: Node, status: str) -> None:
        action, at = self._policy_frame()
        history = self.moves.setdefault(task.key, [])
        scores = self.scores.pop(task.key, {})
        totals = self.totals.pop(task.key, None)
        self._round.pop(task.key, None)
        victims = [m for m in self._unclaimed if m.node == node.name and m.action == action]
        self._unclaimed = [m for m in self._unclaimed if m not in victims]
        history.append(Move(status, task, node.name, action, at, scores if totals else {}, totals=totals, victims=victims))

    def evicting(self, task: Task) -> None:
        action, at = self._policy_frame()
        move = Move("evict", task, task.node_name, action, at)
        self.moves.setdefault(task.key, []).append(move)
        self._unclaimed.append(move)

    def undone(self, task: Task) -> None:
        history = self.moves.get(task.key)
        if history and history[-1].undone_at is None and history[-1].committed_at is None:
            history[-1].undone_at = self._policy_frame()[1]
            self._unclaimed = [m for m in self._unclaimed if m is not history[-1]]

    def bound(self, task: Task) -> None:
        self._committed(task, "Allocated")

    def eviction_recorded(self, task: Task, reason: str) -> None:
        self._committed(task, "evict")

    def _committed(self, task: Task, kind: str) -> None:
        history = self.moves.get(task.key) or []
        move = next((m for m in reversed(history) if m.kind == kind), None)
        if move is not None:
            move.committed_at = self._policy_frame()[1]

    def fit_error_made(self, reason: str) -> None:
        if reason not in self.reason_origins:
            action, at = self._policy_frame()
            if at is not None:
                self.reason_origins[reason] = (action, at)


def _running(subject: Any) -> bool:
    if isinstance(subject, Task):
        return subject.status != PENDING and bool(subject.node_name)
    if isinstance(subject, Job):
        return not subject.count(PENDING) and bool(subject.tasks)
    return False


def _split_location(location: str) -> tuple[str, int, int]:
    """FILE:LINE:COL apart; ("", 0, 0) for a hook whose place is unknown ("?")."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return "", 0, 0
    return parts[0], int(parts[1]), int(parts[2])


def last_probe(events: list) -> tuple | None:
    """The last condition evaluated in ``events``: ("probe", site number, outcome)."""
    return next((e for e in reversed(events) if e[0] == "probe"), None)
