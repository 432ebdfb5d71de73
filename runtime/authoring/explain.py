"""Why a test failed: which rule of which plugin selected or excluded each victim in question.

When a scenario's evictions differ from what it expects, the case is run
again with instrumented policies (:mod:`fumarole.runtime.authoring.probes`) that keep every
decision in order, and each victim hook's answer is traced back to a rule: a
candidate a plugin selected points at its ``victim`` statement (and the guard
that let it through); a candidate it left out points at the last decision
taken while the plugin looked at that candidate -- the ``when`` that was false,
the ``continue when`` that was true.  A plugin that ruled a task out before
any victim hook saw it (``preempt_candidate`` / ``reclaim_candidate``
answering false) is named with its hook.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from fumarole.runtime.authoring.probes import HookSite, Probes, Site
from fumarole.runtime.authoring.scenario import Outcome, Scenario, run_file

VICTIM_HOOKS = ("preemptable", "reclaimable")
CANDIDATE_HOOKS = ("preempt_candidate", "reclaim_candidate")
ROUNDS_SHOWN = 2


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


@dataclass
class CandidateCall:
    """A plugin answering no to "may this task be a victim at all?"."""

    plugin: str
    hook: str
    where: HookSite
    actor: Any
    task: Any
    events: list = field(repr=False)


class _Recorder:
    """Wraps the victim hooks of instrumented plugins to keep each call and the decisions inside it."""

    def __init__(self, probes: Probes) -> None:
        self.probes = probes
        self.calls: list[VictimCall] = []
        self.vetoes: list[CandidateCall] = []

    def watch(self, kind: str, name: str, builder: Callable, where: dict[str, HookSite]) -> Callable:
        if kind != "plugin":
            return builder

        def build(*args: Any) -> dict:
            hooks = builder(*args)
            return {hook: self._traced(name, hook, fn) if hook in VICTIM_HOOKS else
                    self._asked(name, hook, where.get(hook, HookSite("?")), fn) if hook in CANDIDATE_HOOKS else fn
                    for hook, fn in hooks.items()}
        return build

    def _asked(self, plugin: str, hook: str, where: HookSite, fn: Callable) -> Callable:
        def asked(actor: Any, task: Any) -> bool:
            events = self.probes.events
            assert events is not None
            mark = len(events)
            result = fn(actor, task)
            if not result:
                self.vetoes.append(CandidateCall(plugin, hook, where, actor, task, events[mark:]))
            return result
        return asked

    def _traced(self, plugin: str, hook: str, fn: Callable) -> Callable:
        def traced(actor: Any, candidates: list) -> tuple:
            events = self.probes.events
            assert events is not None
            mark = len(events)
            chosen, vote = fn(actor, candidates)
            self.calls.append(VictimCall(plugin, hook, actor, list(candidates), list(chosen), vote, events[mark:]))
            return chosen, vote
        return traced


def eviction_differences(scenario_doc: dict, outcome: Outcome) -> list[tuple[str, bool]]:
    """Pods evicted but not expected (True) or expected but not evicted (False)."""
    if outcome.decisions is None:
        return []
    expect = (scenario_doc.get("expect") or {}) if isinstance(scenario_doc, dict) else {}
    want = Counter(expect.get("evicted") or [])
    got = Counter(pod for pod, _reason in outcome.decisions.evictions)
    return [(pod, pod in got) for pod in sorted(set(want) ^ set(got))]


def explain(path: Path, outcome: Outcome, scenario_doc: dict) -> list[str]:
    """Lines explaining each eviction that differs from the expectation (empty if none does)."""
    pods = eviction_differences(scenario_doc, outcome)
    if not pods:
        return []
    probes = Probes(keep_events=True)
    recorder = _Recorder(probes)

    def instrumented(scenario: Scenario) -> Scenario:
        library = probes.instrument(scenario.bundle.library, recorder.watch)
        return replace(scenario, bundle=replace(scenario.bundle, library=library))

    run_file(path, prepare=instrumented)
    lines: list[str] = []
    for pod, evicted in pods:
        lines.append(f"{pod}: {'evicted, but not expected' if evicted else 'expected to be evicted, but was not'}")
        vetoes = {(v.plugin, v.hook): v for v in recorder.vetoes if v.task.key == pod}  # the last per plugin
        lines.extend(f"  {_veto(veto, probes.sites)}" for veto in vetoes.values())
        calls = [c for c in recorder.calls if any(t.key == pod for t in c.candidates)]
        if not calls:
            if not vetoes:
                lines.append("  no victim hook was asked about it: the action never offered it as a candidate")
            continue
        for round_ in _rounds(calls)[-ROUNDS_SHOWN:]:
            first = round_[0]
            task = next(t for t in first.candidates if t.key == pod)
            count = len(first.candidates)
            lines.append(f"  {first.hook}({first.actor.key}, {count} candidate{'s' * (count != 1)}):")
            lines.extend(f"    {_verdict(call, task, probes.sites)}" for call in round_)
            answering = [c for c in round_ if c.vote != 0]
            if not evicted and answering and all(any(t is task for t in c.chosen) for c in answering):
                lines.append("    every plugin that answered selected it: the action took other victims first "
                             "(victim order), or had made room before reaching it")
    return lines


def _veto(veto: CandidateCall, sites: list[Site]) -> str:
    decider = _last_probe(veto.events)
    if decider is not None:
        why = f": `{sites[decider[1]].text}` was {'true' if decider[2] else 'false'}"
    else:
        why = f": `{veto.where.expression}` is false" if veto.where.expression else ""
    return (f"{veto.plugin}: ruled it out at {veto.where.location} "
            f"({veto.hook}({veto.actor.key}, {veto.task.key}) answered false){why}")


def _rounds(calls: list[VictimCall]) -> list[list[VictimCall]]:
    """Consecutive calls that answer the same question (one dispatch over the plugins)."""
    rounds: list[list[VictimCall]] = []
    for call in calls:
        last = rounds[-1][-1] if rounds else None
        if last is not None and last.hook == call.hook and last.actor is call.actor and \
                [id(t) for t in last.candidates] == [id(t) for t in call.candidates]:
            rounds[-1].append(call)
        else:
            rounds.append([call])
    return rounds


def _verdict(call: VictimCall, task: Any, sites: list[Site]) -> str:
    if call.vote == 0:
        return f"{call.plugin}: abstained (stays out of this decision)"
    start = _iteration_start(call, task)
    if any(t is task for t in call.chosen):
        for i, event in enumerate(call.events):
            if event[0] == "pick" and event[2] is task:
                guard = _last_probe(call.events[start:i] if start is not None and start < i else [])
                site = sites[event[1]]
                if guard is not None and sites[guard[1]].line == site.line:  # `victim x when c`: name the whole rule
                    return f"{call.plugin}: selected it at {site.location}: {sites[guard[1]].rule}"
                why = f" ({sites[guard[1]].rule} was true)" if guard is not None and guard[2] else ""
                return f"{call.plugin}: selected it at {site.location}: {site.rule}{why}"
        return f"{call.plugin}: selected it"
    if start is not None:
        end = next((j for j in range(start + 1, len(call.events)) if call.events[j][0] == "iter"
                    and any(call.events[j][1] is c for c in call.candidates)), len(call.events))
        decider = _last_probe(call.events[start:end])
        if decider is not None:
            site = sites[decider[1]]
            outcome = "true" if decider[2] else "false"
            subject = site.rule if site.kind in ("guard", "victim") else site.text
            return f"{call.plugin}: excluded it at {site.location}: `{subject}` was {outcome}"
    return f"{call.plugin}: did not select it ({len(call.chosen)} of {len(call.candidates)} candidates chosen)"


def _iteration_start(call: VictimCall, task: Any) -> int | None:
    starts = [i for i, event in enumerate(call.events) if event[0] == "iter" and event[1] is task]
    return starts[-1] if starts else None


def _last_probe(events: list) -> tuple | None:
    return next((e for e in reversed(events) if e[0] == "probe"), None)
