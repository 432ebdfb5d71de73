"""Why a test failed: which rule of which plugin selected or excluded each victim in question.

When a scenario's evictions differ from what it expects, the case is run
again with instrumented policies (:mod:`fumarole.runtime.authoring.tracing`)
that keep every decision in order, and each victim hook's answer is traced back
to a rule: a candidate a plugin selected points at its ``victim`` statement
(and the guard that let it through); a candidate it left out points at the
last decision taken while the plugin looked at that candidate -- the ``when``
that was false, the ``continue when`` that was true.  A plugin that ruled a
task out before any victim hook saw it (``preempt_candidate`` /
``reclaim_candidate`` answering false) is named with its hook.  ``fumarole run
--explain`` words its evictions with the same functions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fumarole.runtime.authoring.probes import Probes, Site
from fumarole.runtime.authoring.scenario import Outcome, Scenario, run_file
from fumarole.runtime.authoring.tracing import CandidateCall, Tracer, VictimCall, last_probe
from fumarole.runtime.framework.eviction import Eviction

ROUNDS_SHOWN = 2


@dataclass(frozen=True)
class Verdict:
    """One plugin's part in a victim decision about one task."""

    plugin: str
    text: str  # "selected it at FILE:L:C: RULE", "excluded it at ...", "abstained ..."
    at: str = ""  # the rule's location, when one decided

    def __str__(self) -> str:
        return f"{self.plugin}: {self.text}"


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
    tracer = Tracer(probes)

    def instrumented(scenario: Scenario) -> Scenario:
        library = probes.instrument(scenario.bundle.library, tracer.watch)
        return replace(scenario, bundle=replace(scenario.bundle, library=library))

    run_file(path, prepare=instrumented)
    lines: list[str] = []
    for pod, evicted in pods:
        lines.append(f"{pod}: {'evicted, but not expected' if evicted else 'expected to be evicted, but was not'}")
        vetoes = last_vetoes(tracer, pod)
        lines.extend(f"  {veto_text(veto)}" for veto in vetoes)
        rounds = victim_rounds(tracer, pod)
        if not rounds:
            if not vetoes:
                lines.append("  no victim hook was asked about it: the action never offered it as a candidate")
            continue
        for round_ in rounds[-ROUNDS_SHOWN:]:
            lines.append(f"  {round_heading(round_)}:")
            lines.extend(f"    {verdict}" for verdict in round_verdicts(round_, pod, probes.sites))
            if not evicted and all_selected(round_, pod):
                lines.append("    every plugin that answered selected it: the action took other victims first "
                             "(victim order), or had made room before reaching it")
    return lines


def last_vetoes(tracer: Tracer, pod: str) -> list[CandidateCall]:
    """Each plugin's last "may not be a victim" answer about ``pod``."""
    return list({(v.plugin, v.hook): v for v in tracer.vetoes if v.task.key == pod}.values())


def veto_text(veto: CandidateCall) -> str:
    """A plugin's "may not be a victim", quoted where its hook decided it."""
    decision = veto.decision
    where = decision.location if decision is not None else veto.where.location
    if decision is not None:
        why = f": {decision.words('false')}"
    else:
        why = f": `{veto.where.expression}` is false" if veto.where.expression else ""
    return (f"{veto.plugin}: ruled it out at {where} "
            f"({veto.hook}({veto.actor.key}, {veto.task.key}) answered false){why}")


def victim_rounds(tracer: Tracer, pod: str) -> list[list[VictimCall]]:
    """The victim questions that offered ``pod``, each as the calls of one dispatch over the plugins."""
    rounds: list[list[VictimCall]] = []
    for call in tracer.victim_calls:
        if not any(t.key == pod for t in call.candidates):
            continue
        last = rounds[-1][-1] if rounds else None
        if last is not None and last.hook == call.hook and last.actor is call.actor and \
                [id(t) for t in last.candidates] == [id(t) for t in call.candidates]:
            rounds[-1].append(call)
        else:
            rounds.append([call])
    return rounds


def who_asks(actor: Any) -> str:
    """The task a victim question is asked for, or, for the gang actions' eviction context, its kind and job."""
    if isinstance(actor, Eviction):
        return f"{actor.kind} for {actor.job.uid}"
    return actor.key


def round_heading(round_: list[VictimCall]) -> str:
    first = round_[0]
    count = len(first.candidates)
    return f"{first.hook}({who_asks(first.actor)}, {count} candidate{'s' * (count != 1)})"


def round_verdicts(round_: list[VictimCall], pod: str, sites: list[Site]) -> list[Verdict]:
    task = next(t for t in round_[0].candidates if t.key == pod)
    return [_verdict(call, task, sites) for call in round_]


def all_selected(round_: list[VictimCall], pod: str) -> bool:
    """Every plugin that answered selected ``pod``."""
    answering = [c for c in round_ if c.vote != 0]
    return bool(answering) and all(any(t.key == pod for t in c.chosen) for c in answering)


def _verdict(call: VictimCall, task: Any, sites: list[Site]) -> Verdict:
    if call.vote == 0:
        return Verdict(call.plugin, "abstained (stays out of this decision)")
    start = _iteration_start(call, task)
    if any(t is task for t in call.chosen):
        for i, event in enumerate(call.events):
            if event[0] == "pick" and event[2] is task:
                guard = last_probe(call.events[start:i] if start is not None and start < i else [])
                site = sites[event[1]]
                if guard is not None and sites[guard[1]].line == site.line:  # `victim x when c`: name the whole rule
                    return Verdict(call.plugin, f"selected it at {site.location}: {sites[guard[1]].rule}",
                                   site.location)
                why = f" ({sites[guard[1]].rule} was true)" if guard is not None and guard[2] else ""
                return Verdict(call.plugin, f"selected it at {site.location}: {site.rule}{why}", site.location)
        return Verdict(call.plugin, "selected it")
    if start is not None:
        end = next((j for j in range(start + 1, len(call.events)) if call.events[j][0] == "iter"
                    and any(call.events[j][1] is c for c in call.candidates)), len(call.events))
        decider = last_probe(call.events[start:end])
        if decider is not None:
            site = sites[decider[1]]
            outcome = "true" if decider[2] else "false"
            subject = site.rule if site.kind in ("guard", "victim") else site.text
            return Verdict(call.plugin, f"excluded it at {site.location}: `{subject}` was {outcome}", site.location)
    return Verdict(call.plugin, f"did not select it ({len(call.chosen)} of {len(call.candidates)} candidates chosen)")


def _iteration_start(call: VictimCall, task: Any) -> int | None:
    starts = [i for i, event in enumerate(call.events) if event[0] == "iter" and event[1] is task]
    return starts[-1] if starts else None
