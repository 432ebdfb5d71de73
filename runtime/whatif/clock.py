"""The virtual clock: a session every period over the live cluster, until the trace is played out.

Each tick applies the trace's events that are due, lets tasks finish and
evicted pods terminate, runs one ordinary session (``Session.run``) and applies
its decisions: binds start tasks, evictions start terminations, a task pipelined
where an eviction made room gets that node as its nominated node, as Volcano
writes it at the session's close, and binds when it frees (allocate's
nominated-node path).  When no session can do anything -- nothing is waiting, or the last
session changed nothing and the clock cannot change its mind before some
instant (runtime/whatif/clock_flow.py, clock_reads.py) -- the clock jumps to the next event,
task end or that instant, which is what makes a replay orders of magnitude
faster than real time.  The sessions are one scheduler process's cycles: one
``ProcessState`` goes from each to the next.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Callable

from fumarole.runtime.authoring.explanations import Explainer
from fumarole.runtime.bundles.bundle import Bundle
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.framework.session import CompiledBundle, Decisions, Session, policies_in_use
from fumarole.runtime.whatif.clock_flow import LINEAR, NONE, sources_use
from fumarole.runtime.whatif.clock_reads import ClockWatch
from fumarole.runtime.whatif.live import RESTART, LiveCluster
from fumarole.runtime.whatif.metrics import Recorder, Recording
from fumarole.runtime.whatif.trace import Trace

# Actions that do nothing unless a task or a PodGroup waits; a bundle of only these can skip idle time.
_NEEDS_PENDING = frozenset({"enqueue", "allocate", "backfill", "reclaim", "preempt"})
# Evicting sessions whose evictions the report explains (each is run a second time, explained):
# the first ones, so that a replay evicting every session costs at most this many sessions more.
EXPLAINED_SESSIONS = 40


@dataclass(frozen=True)
class ReplayOptions:
    period: float = 1.0  # virtual seconds between sessions
    until: float | None = None  # stop after this many virtual seconds (default: when the trace is played out)
    on_evict: str = RESTART  # an evicted task starts again from zero (restart) or goes on (resume)
    grace: float = 0.0  # seconds an evicted pod takes to terminate
    pingpong_window: float = 600.0  # evictions back and forth within this many seconds are ping-pong
    session_timeout: float | None = None  # wall seconds each session may run its policies (R001 past it)
    # A bundle that reads the clock in a way replay cannot follow may decide anew on an unchanged
    # cluster, so its idle sessions all run; with no event or task end ahead, it stops once its
    # sessions have changed nothing for this long.
    settle: float = 6 * 3600.0
    max_wall: float | None = 3600.0  # stop after this many wall-clock seconds (None: no bound)
    skip_idle: bool = True  # False runs a session every period, idle or not (to check the skipping against)


# Why a replay's clock stopped (Recording.stopped).
PLAYED_OUT, UNTIL, SETTLED, WALL = "played out", "until", "settled", "wall-time bound"


def clock_use(bundle: CompiledBundle) -> str:
    """How the bundle's policies read ``now`` (clock_flow: NONE, LINEAR or OPAQUE)."""
    tables = {"plugin": bundle.plugins, "action": bundle.actions}
    return sources_use(tables[kind][name].module.source for kind, name in policies_in_use(bundle))


def replay(trace: Trace, bundle: Bundle, options: ReplayOptions = ReplayOptions(),
           progress: Callable[[float], None] | None = None) -> Recording:
    """Play the trace with the bundle; ``progress`` is told the virtual time after each step.

    A session is skipped only where running it could not change anything: nothing waits, every
    action needs a waiting task and a session already ran on this cluster, or the sessions since the
    cluster last changed have come back to a scheduler state one of them started from (sessions are
    deterministic in the cluster, that state and the outcomes of their clock comparisons; one that
    keeps the clock in the process state starts the count again) and no comparison they made has
    flipped since.  The clock then jumps to the next event, task end or flip, rounded up to a
    tick of the period, so decisions and metrics are those of a session every period."""
    wall = time.perf_counter()
    live = LiveCluster(trace, options.on_evict, options.grace)
    recorder = Recorder(trace, live, bundle.name, options.pingpong_window)
    use = clock_use(bundle)
    always = not set(bundle.config.actions) <= _NEEDS_PENDING
    events, due = trace.events, 0
    end = math.inf if options.until is None else options.until
    process = ProcessState()  # a freshly started scheduler, carried through every session
    step = 0
    # The process states sessions started from while the cluster stayed at one version, and the
    # instant until which none of their clock comparisons flips: sessions are deterministic, so once
    # the state is one of those again (the node scan's index cycles) the sessions from it repeat
    # theirs, which changed nothing, and nothing new can happen before that instant.
    unchanged: tuple[int, set[str], float] = (-1, set(), math.inf)
    seen_version, last_change = live.version, 0.0
    last_session = -1  # the cluster's version when the last session ended
    stopped = PLAYED_OUT
    explainer: Explainer | None = None  # built at the first eviction: instrumenting compiles the bundle again
    explained = 0
    while True:
        now = step * options.period
        while due < len(events) and events[due].at <= now:
            live.apply(events[due], now)
            due += 1
        recorder.completed(live.advance(now))
        waiting = always or live.has_pending_work()
        # Idle: nothing waits and the last session already saw this cluster (its figures, proportion's
        # deserved shares, are current), or the sessions on this cluster came back to a state one started from.
        idle = (not waiting and live.version == last_session) or \
            (unchanged[0] == live.version and _key(process) in unchanged[1] and now < unchanged[2])
        session = decisions = None
        if not idle or not options.skip_idle:
            version, before = live.version, _key(process)
            at_start = process.copy()
            watch = ClockWatch(trace.start + now) if use == LINEAR else None
            session, decisions = _session(bundle, live, trace, now, process, options.session_timeout, watch)
            why: dict[str, list[str]] = {}
            if decisions.evictions and explained < EXPLAINED_SESSIONS:
                explained += 1
                explainer = explainer or Explainer(bundle)
                why = _why_evicted(explainer, live, trace, now, at_start, decisions, options.session_timeout)
            _apply(decisions, live, now, recorder, why)
            last_session = live.version
            if live.version != version or (watch is not None and watch.kept):
                # A changed cluster, or a process state that depends on this session's instant: the
                # sessions seen so far no longer tell what the next ones do.
                unchanged = (-1, set(), math.inf)
            else:
                steady = math.inf if use == NONE else watch.steady_until() - trace.start if watch else now
                if unchanged[0] != version or now >= unchanged[2]:
                    unchanged = (version, set(), steady)
                else:
                    unchanged = (version, unchanged[1], min(unchanged[2], steady))
                unchanged[1].add(before)
                idle = idle or not waiting or (_key(process) in unchanged[1] and now < unchanged[2])
        recorder.sample(now, session, decisions)
        if progress is not None:
            progress(now)
        if live.version != seen_version:
            seen_version, last_change = live.version, now
        flip = unchanged[2] if unchanged[0] == live.version and now < unchanged[2] < math.inf else None
        ahead = [t for t in (events[due].at if due < len(events) else None, live.next_change(), flip)
                 if t is not None]
        if idle and not ahead:  # nothing can happen any more
            break
        if not ahead and now - last_change >= options.settle:
            stopped = SETTLED  # only the clock moves, and it has moved this long without changing anything
            break
        if not idle or not options.skip_idle:
            step += 1
        else:  # nothing can happen before the next event or task end
            step = max(step + 1, math.ceil(min(ahead) / options.period - 1e-9))
        if step * options.period > end:
            stopped = UNTIL
            break
        if options.max_wall is not None and time.perf_counter() - wall > options.max_wall:
            stopped = WALL
            break
    played = now if stopped in (SETTLED, WALL) else min(end, step * options.period)
    return recorder.finish(played, time.perf_counter() - wall, options, stopped)


def _key(process: ProcessState) -> str:
    return json.dumps(process.to_dict(), sort_keys=True)


def _session(bundle: CompiledBundle, live: LiveCluster, trace: Trace, now: float,
             process: ProcessState, timeout: float | None, watch: ClockWatch | None) -> tuple[Session, Decisions]:
    """One session of the one scheduler process the replay plays: ``process`` (the node scan's
    start index, tdm's last eviction, ...) goes from each session to the next.  Each session has
    the whole budget of a `run` (runtime/framework/budget.py).  With a ``watch``, the session's
    clock records until when its comparisons hold."""
    session = new_session(bundle, live.cluster(), now=watch.now() if watch else trace.start + now, process_state=process,
                          budget=StepBudget(timeout=timeout))
    return session, run_session(session, trace.file)


def _why_evicted(explainer: Explainer, live: LiveCluster, trace: Trace, now: float, process: ProcessState,
                 decisions: Decisions, timeout: float | None) -> dict[str, list[str]]:
    """Each evicted pod's explanation (as ``run --explain`` words it), from the same session run again
    explained: same cluster, clock and process state, so the same decisions (none if they differ)."""
    session = explainer.session(live.cluster(), trace.start + now, process_state=process,
                                budget=StepBudget(timeout=timeout))
    again = run_session(session, trace.file)
    if again.evictions != decisions.evictions:
        return {}
    return {e.subject: [e.summary, *(r.line() for r in e.because)]
            for e in explainer.explain(session, again) if e.kind == "evict"}


def _apply(decisions: Decisions, live: LiveCluster, now: float, recorder: Recorder,
           why: dict[str, list[str]] | None = None) -> None:
    """The decisions as the cluster sees them after the session: binds, evictions, nominations, phases."""
    recorder.session(now, decisions, why or {})
    for key, node in decisions.binds:
        live.bind(key, node, now, decisions.bind_annotations.get(key))
    for key, _reason in decisions.evictions:
        live.evict(key, now)
    for key, node in decisions.nominations.items():
        live.nominate(key, node)
    for job, phase in decisions.phases.items():
        live.set_phase(job, phase)
