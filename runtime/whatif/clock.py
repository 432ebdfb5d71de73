"""The virtual clock: a session every period over the live cluster, until the trace is played out.

Each tick applies the trace's events that are due, lets tasks finish and
evicted pods terminate, runs one ordinary session (``Session.run``) and applies
its decisions: binds start tasks, evictions start terminations, pipelined tasks
get their nominated node and bind when it frees (allocate's nominated-node
path).  When no session can do anything -- nothing is waiting, or the last
session changed nothing and no policy reads the clock -- the clock jumps to the
next event or task end, which is what makes a replay orders of magnitude
faster than real time.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.framework.session import CompiledBundle, Decisions, Session
from fumarole.runtime.whatif.live import RESTART, LiveCluster
from fumarole.runtime.whatif.metrics import Recorder, Recording
from fumarole.runtime.whatif.trace import Trace

# Actions that do nothing unless a task or a PodGroup waits; a bundle of only these can skip idle time.
_NEEDS_PENDING = frozenset({"enqueue", "allocate", "backfill", "reclaim", "preempt"})


@dataclass(frozen=True)
class ReplayOptions:
    period: float = 1.0  # virtual seconds between sessions
    until: float | None = None  # stop after this many virtual seconds (default: when the trace is played out)
    on_evict: str = RESTART  # an evicted task starts again from zero (restart) or goes on (resume)
    grace: float = 0.0  # seconds an evicted pod takes to terminate
    pingpong_window: float = 600.0  # evictions back and forth within this many seconds are ping-pong


def reads_clock(bundle: CompiledBundle) -> bool:
    """Whether any policy of the bundle reads ``now``: then an unchanged cluster may still decide anew."""
    used = [bundle.plugins[entry.name] for tier in bundle.tiers for entry in tier]
    used += [bundle.actions[name] for name in bundle.config.actions]
    return any("_rt.now" in policy.module.source for policy in used)  # a module's definitions are inlined


def replay(trace: Trace, bundle: CompiledBundle, options: ReplayOptions = ReplayOptions(),
           progress: Callable[[float], None] | None = None) -> Recording:
    """Play the trace with the bundle; ``progress`` is told the virtual time after each step."""
    wall = time.perf_counter()
    live = LiveCluster(trace, options.on_evict, options.grace)
    recorder = Recorder(trace, live, bundle.name, options.pingpong_window)
    clocked = reads_clock(bundle)
    always = not set(bundle.config.actions) <= _NEEDS_PENDING
    events, due = trace.events, 0
    end = math.inf if options.until is None else options.until
    step, settled_at = 0, -1  # settled_at: live.version when a session last changed nothing
    while True:
        now = step * options.period
        while due < len(events) and events[due].at <= now:
            live.apply(events[due], now)
            due += 1
        recorder.completed(live.advance(now))
        waiting = always or live.has_pending_work()
        settled = settled_at == live.version and not clocked
        session = decisions = None
        if waiting and not settled:
            session, decisions = _session(bundle, live, trace, now)
            before = live.version
            _apply(decisions, live, now, recorder)
            settled_at = live.version if live.version == before else -1
            settled = settled_at == live.version and not clocked
        recorder.sample(now, session, decisions)
        if progress is not None:
            progress(now)
        if waiting and not settled:
            step += 1
        else:  # nothing can happen before the next event or task end
            upcoming = [t for t in (events[due].at if due < len(events) else None, live.next_change())
                        if t is not None]
            if not upcoming:
                break
            step = max(step + 1, math.ceil(min(upcoming) / options.period - 1e-9))
        if step * options.period > end:
            break
    return recorder.finish(step * options.period if options.until is None else min(end, step * options.period),
                           time.perf_counter() - wall, options)


def _session(bundle: CompiledBundle, live: LiveCluster, trace: Trace, now: float) -> tuple[Session, Decisions]:
    # Volcano's scheduler process keeps some state from one session to the next (issue 14: the
    # node scan's start index, tdm's last eviction).  Until the session takes a process state,
    # every replayed session starts from a fresh one, as `fumarole run` does; this is where the
    # replay will hand the previous session's state to the next.
    session = Session(bundle, live.cluster(), now=trace.start + now)
    decisions = session.run()
    if session.problems:  # e.g. a queue hierarchy with a cycle: nothing would ever be scheduled
        raise FumaroleError([p.diagnostic(trace.file) for p in session.problems])
    return session, decisions


def _apply(decisions: Decisions, live: LiveCluster, now: float, recorder: Recorder) -> None:
    """The decisions as the cluster sees them after the session: binds, evictions, nominations, phases."""
    recorder.session(now, decisions)
    for key, node in decisions.binds:
        live.bind(key, node, now)
    for key, _reason in decisions.evictions:
        live.evict(key, now)
    for tasks in decisions.pipelined.values():
        for key, node in tasks:
            live.nominate(key, node)
    for job, phase in decisions.phases.items():
        live.set_phase(job, phase)
