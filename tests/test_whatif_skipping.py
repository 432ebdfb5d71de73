"""Replay skips the sessions where nothing can change: the same decisions and figures as a session
every period (differentially, on the example traces and synthesized ones), and an end when only the
clock moves."""

from __future__ import annotations

from pathlib import Path

import pytest
from fumarole.runtime.bundles.bundle import bundle_from_volcano_conf, default_bundle, load_bundle
from fumarole.runtime.whatif.clock import SETTLED, ReplayOptions, replay
from fumarole.runtime.whatif.metrics import summarise
from fumarole.runtime.whatif.synth import SHAPES, synth_trace
from fumarole.runtime.whatif.trace import load_trace, trace_from_document

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = {"reclaim": lambda: bundle_from_volcano_conf(ROOT / "examples/two-queues/volcano-scheduler.conf"),
           "default": default_bundle,
           "site-min-runtime": lambda: load_bundle(ROOT / "examples/site-min-runtime")}


def _without_session_numbers(value):
    """Evictions and ping-pong episodes name the session by its index, which skipping renumbers."""
    if isinstance(value, dict):
        return {k: _without_session_numbers(v) for k, v in value.items() if k != "session"}
    if isinstance(value, list):
        return [_without_session_numbers(v) for v in value]
    return value


def _same_as_every_period(trace, bundle, period: float) -> tuple[int, int]:
    skipping = replay(trace, bundle, ReplayOptions(period=period))
    every = replay(trace, bundle, ReplayOptions(period=period, skip_idle=False))
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
    # Most periods have nothing to do; a bundle reading the clock runs every period while work waits.
    assert skipped > (run if bundle != "site-min-runtime" else 0)


@pytest.mark.parametrize("shape", SHAPES)
def test_synthesized_traces_decide_and_measure_as_a_session_every_period(shape):
    doc = synth_trace(shape, 1, nodes=3, duration=2 * 3600.0)
    trace = trace_from_document(doc, Path(f"{shape}.yaml"), "")
    for bundle in ("reclaim", "default"):
        _same_as_every_period(trace, BUNDLES[bundle](), 300.0)


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
    run = replay(load_trace(trace), load_bundle(ROOT / "examples/site-min-runtime"),
                 ReplayOptions(period=300.0, settle=3600.0))
    assert (run.stopped, run.end, len(run.sessions)) == (SETTLED, 3600.0, 13)
    # Volcano's configuration reads no clock: it ends once a session comes back to a scheduler state seen.
    run = replay(load_trace(trace), default_bundle(), ReplayOptions(period=300.0))
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
