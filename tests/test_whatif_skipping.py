"""Replay skips the sessions where nothing can change: the same decisions and figures as a session
every period (differentially, on the example traces and synthesized ones), and an end when only the
clock moves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fumarole.runtime.bundles.bundle import bundle_from_conf_text, bundle_from_volcano_conf, default_bundle, load_bundle
from fumarole.runtime.whatif.clock import SETTLED, ReplayOptions, clock_use, replay
from fumarole.runtime.whatif.clock_flow import LINEAR, OPAQUE
from fumarole.runtime.whatif.metrics import summarise
from fumarole.runtime.whatif.synth import SHAPES, synth_trace
from fumarole.runtime.whatif.trace import load_trace, trace_from_document

ROOT = Path(__file__).resolve().parent.parent
# A job that has waited its SLA is enqueued past proportion and sla's clock comparison flips as it waits.
SLA = """actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
    arguments: {sla-waiting-time: 25m}
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
# Reads the clock in a way replay does not follow (a remainder of it).
OPAQUE_CLOCK = """plugin opaque_clock

on node_order(task, node) = float(floor(now) % 2)
"""
# Orders preempt's victims by their start (a lambda to keep_best): followed.
PREEMPT = """actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
"""
BUNDLES = {"reclaim": lambda: bundle_from_volcano_conf(ROOT / "examples/two-queues/volcano-scheduler.conf"),
           "default": default_bundle,
           "site-min-runtime": lambda: load_bundle(ROOT / "examples/site-min-runtime"),
           "sla": lambda: bundle_from_conf_text(SLA, "sla.conf")}


def _without_session_numbers(value):
    """Evictions and ping-pong episodes name the session by its index, which skipping renumbers."""
    if isinstance(value, dict):
        return {k: _without_session_numbers(v) for k, v in value.items() if k != "session"}
    if isinstance(value, list):
        return [_without_session_numbers(v) for v in value]
    return value


def _same_as_every_period(trace, bundle, period: float, until: float | None = None) -> tuple[int, int]:
    skipping = replay(trace, bundle, ReplayOptions(period=period, until=until))
    every = replay(trace, bundle, ReplayOptions(period=period, until=until, skip_idle=False))
    assert (skipping.end, skipping.stopped) == (every.end, every.stopped)
    assert skipping.jobs == every.jobs
    assert _without_session_numbers(skipping.evictions) == _without_session_numbers(every.evictions)
    figures, every_figures = summarise(skipping), summarise(every)
    for key in ("overall", "queues", "pingPong", "nodeLosses"):
        assert _without_session_numbers(figures[key]) == _without_session_numbers(every_figures[key]), key
    assert skipping.skipped + len(skipping.sessions) == len(every.sessions) and every.skipped == 0
    return len(skipping.sessions), skipping.skipped


@pytest.mark.parametrize("bundle", sorted(BUNDLES))
@pytest.mark.parametrize("trace", ["two-queues", "ping-pong"])
def test_the_example_traces_decide_and_measure_as_a_session_every_period(trace, bundle):
    run, skipped = _same_as_every_period(load_trace(ROOT / f"examples/traces/{trace}.yaml"), BUNDLES[bundle](), 300.0)
    # Most periods have nothing to do, also for a bundle that compares the clock with a bound.
    assert skipped > run


@pytest.mark.parametrize("shape", SHAPES)
def test_synthesized_traces_decide_and_measure_as_a_session_every_period(shape):
    doc = synth_trace(shape, 1, nodes=3, duration=2 * 3600.0)
    trace = trace_from_document(doc, Path(f"{shape}.yaml"), "")
    for bundle in sorted(BUNDLES):
        _same_as_every_period(trace, BUNDLES[bundle](), 300.0)


def test_a_minimum_run_time_is_replayed_from_flip_to_flip(tmp_path):
    """research's sweep fills the node at 0s and prod's gang arrives at 5m; research's tasks may be
    evicted once they have run 20m.  Nothing happens at 20m but a clock comparison flipping: replay
    runs the session there (the first 10s tick past it) and skips the ticks in between."""
    bundle = tmp_path / "min-runtime"
    shutil.copytree(ROOT / "examples/site-min-runtime", bundle)
    (bundle / "bundle.yaml").write_text((bundle / "bundle.yaml").read_text().replace("minRuntime: 3h", "minRuntime: 20m"))
    trace = tmp_path / "two-queues.yaml"
    trace.write_text((ROOT / "examples/traces/two-queues.yaml").read_text().replace("- at: 10m", "- at: 5m"))
    played = load_trace(trace)
    run, skipped = _same_as_every_period(played, load_bundle(bundle), 10.0)
    assert run < 20 and skipped > 300
    skipping = replay(played, load_bundle(bundle), ReplayOptions(period=10.0))
    assert [(e["t"], e["queue"]) for e in skipping.evictions] == [(1200.0, "research")] * 2


NEVER_FITS = """apiVersion: fumarole/v1
kind: Trace
cluster:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}}
events:
- at: 0s
  submit:
    podGroup: {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: big, namespace: d},
               spec: {queue: default, minMember: 1}}
    tasks:
    - pod: {metadata: {name: p}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '64'}}}]}}
"""


def test_a_pod_that_never_fits_ends_the_replay_of_a_bundle_that_reads_the_clock(tmp_path):
    trace = tmp_path / "never.yaml"
    trace.write_text(NEVER_FITS)
    opaque = _authored(tmp_path, "opaque_clock", OPAQUE_CLOCK)
    assert clock_use(opaque) == OPAQUE
    run = replay(load_trace(trace), opaque, ReplayOptions(period=300.0, settle=3600.0))
    assert (run.stopped, run.end, len(run.sessions)) == (SETTLED, 3600.0, 13)
    # Volcano's configuration reads no clock, site-min-runtime compares it only where there are
    # victims to weigh, and preempt only to order victims: each ends once a session comes back to a
    # scheduler state seen.
    for bundle in (default_bundle(), load_bundle(ROOT / "examples/site-min-runtime"),
                   bundle_from_conf_text(PREEMPT, "preempt.conf")):
        run = replay(load_trace(trace), bundle, ReplayOptions(period=300.0))
        assert (run.stopped, run.end, run.sessions) == ("played out", 300.0, [0.0, 300.0])


def test_the_wall_time_bound_stops_the_clock(tmp_path):
    trace = tmp_path / "never.yaml"
    trace.write_text(NEVER_FITS)
    run = replay(load_trace(trace), load_bundle(ROOT / "examples/site-min-runtime"),
                 ReplayOptions(period=1.0, max_wall=1e-9))
    assert (run.stopped, run.end, len(run.sessions)) == ("wall-time bound", 0.0, 1)


def test_the_replay_command_reports_sessions_run_and_skipped(cli, tmp_path):
    result = cli("replay", str(ROOT / "examples/traces/two-queues.yaml"), "--bundle",
                 str(ROOT / "examples/two-queues/volcano-scheduler.conf"), "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    assert "6001 virtual s in" in result.out and "8 sessions run and 5,994 skipped" in result.out


ODD_CLOCK = """plugin odd_clock

# Authored: the clock through a division, max and min, a conditional and a function's result.
def age(task: Task) -> float = max(now - task.start_time, 0.0) / 60.0 if task.started else -now

on preempt_candidate, reclaim_candidate(preemptor, task) = age(task) >= 20.0 and min(now, 1e18) == now
"""


def _authored(tmp_path: Path, name: str, source: str):
    """site-min-runtime with the plugin ``name`` (``source``) in min_runtime's place."""
    bundle = tmp_path / name
    shutil.copytree(ROOT / "examples/site-min-runtime", bundle, ignore=shutil.ignore_patterns("tests", "*.policy"))
    (bundle / "plugins" / f"{name}.policy").write_text(source)
    (bundle / "bundle.yaml").write_text((bundle / "bundle.yaml").read_text()
                                        .replace("- name: min_runtime\n    arguments: {minRuntime: 3h}", f"- name: {name}"))
    return load_bundle(bundle)


def test_a_clock_through_division_min_and_max_is_followed_from_flip_to_flip(tmp_path):
    trace = tmp_path / "two-queues.yaml"
    trace.write_text((ROOT / "examples/traces/two-queues.yaml").read_text().replace("- at: 10m", "- at: 5m"))
    loaded = _authored(tmp_path, "odd_clock", ODD_CLOCK)
    assert clock_use(loaded) == LINEAR
    run, skipped = _same_as_every_period(load_trace(trace), loaded, 10.0)
    assert run < 20 and skipped > 300
