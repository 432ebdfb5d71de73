"""Replay skips the idle sessions of the standard library's clock readers -- tdm's revocable-zone
window, rescheduling's interval, usage's metrics age, preempt's victims' start -- and decides and
measures as a session every period: differentially, on traces where only the clock changes anything,
on the example traces and on synthesized ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fumarole.runtime.bundles.bundle import bundle_from_conf_text
from fumarole.runtime.whatif.clock import ReplayOptions, clock_use, replay
from fumarole.runtime.whatif.clock_flow import LINEAR
from fumarole.runtime.whatif.synth import SHAPES, synth_trace
from fumarole.runtime.whatif.trace import load_trace, trace_from_document
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_whatif_skipping import _same_as_every_period

ROOT = Path(__file__).resolve().parent.parent
START = "2026-11-21T08:00:00Z"


@pytest.fixture(autouse=True)
def utc():
    """tdm's windows are local times: these traces are written for UTC."""
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if zone is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = zone
    time.tzset()


def _tiers(*plugins: str) -> str:
    return "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n" + "".join(plugins) + \
        "- plugins:\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n"


TDM = 'actions: "enqueue, allocate, backfill, shuffle"\n' + _tiers(
    "  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: \"09:00-10:00\"\n      tdm.evict.period: 10m\n")
RESCHEDULING = 'actions: "enqueue, allocate, backfill, shuffle"\n' + _tiers(
    "  - name: rescheduling\n    arguments:\n      interval: 5m\n      metricsPeriod: 10m\n      strategies:\n"
    "      - name: lowNodeUtilization\n        params:\n          thresholds: {cpu: 20, memory: 20}\n"
    "          targetThresholds: {cpu: 60, memory: 60}\n")
USAGE = 'actions: "enqueue, allocate, backfill"\n' + _tiers("  - name: usage\n")
PREEMPT = 'actions: "enqueue, allocate, backfill, preempt"\n' + _tiers("  - name: conformance\n")
ALL = 'actions: "enqueue, allocate, backfill, preempt, shuffle"\n' + _tiers(
    "  - name: tdm\n    arguments:\n      tdm.revocable-zone.rz1: \"09:00-10:00\"\n",
    "  - name: usage\n", "  - name: rescheduling\n    arguments:\n      strategies:\n"
    "      - name: lowNodeUtilization\n")
BUNDLES = {"tdm": TDM, "rescheduling": RESCHEDULING, "usage": USAGE, "preempt": PREEMPT, "all": ALL}


def _bundle(name: str):
    return bundle_from_conf_text(BUNDLES[name], f"{name}.conf")


def test_each_clock_reader_is_followed():
    assert {name: clock_use(_bundle(name)) for name in BUNDLES} == {name: LINEAR for name in BUNDLES}


def _node(name: str, cpu: str, labels: str = "", metrics: str = "") -> str:
    return (f"- {{apiVersion: v1, kind: Node, metadata: {{name: {name}{labels}}},"
            f" status: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '110'}}}}{metrics}}}\n")


def _job(at: str, name: str, replicas: int, cpu: str, annotations: str = "", run: str = "") -> str:
    return (f"- at: {at}\n  submit:\n    podGroup: {{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup,"
            f" metadata: {{name: {name}, namespace: d}}, spec: {{queue: default, minMember: 1}}}}\n"
            f"    tasks:\n    - replicas: {replicas}\n{run}      pod: {{metadata: {{name: {name}{annotations}}},"
            f" spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}}}\n")


def _trace(tmp_path: Path, nodes: str, events: str):
    path = tmp_path / "trace.yaml"
    path.write_text(f"apiVersion: fumarole/v1\nkind: Trace\nstart: \"{START}\"\ncluster:\n{nodes}"
                    "- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default},"
                    " spec: {weight: 1}, status: {state: Open}}\nevents:\n" + events)
    return load_trace(path)


def test_a_revocable_zone_is_replayed_from_window_edge_to_window_edge(tmp_path):
    """rz1 opens at 09:00 and closes at 10:00 (UTC; the trace starts at 08:00).  A revocable task
    waits for the window and binds at its opening; tdm looks for victims every 10m (keeping the time
    it last did in the process state) and evicts the task at its first look past the closing, 10:10.
    Between those instants nothing can change, so replay runs a fraction of the one-minute sessions."""
    trace = _trace(tmp_path, _node("n1", "4") + _node("n2", "4", labels=", labels: {volcano.sh/revocable-zone: rz1}"),
                   _job("0s", "steady", 1, "3") + _job("1m", "spare", 1, "3", ", annotations: {volcano.sh/revocable-zone: '*', volcano.sh/preemptable: 'true'}"))
    run, skipped = _same_as_every_period(trace, _bundle("tdm"), 60.0, until=3 * 3600.0)
    assert run < 45 and skipped > 135
    played = replay(trace, _bundle("tdm"), ReplayOptions(period=60.0, until=3 * 3600.0))
    assert [(e["t"], e["task"]) for e in played.evictions] == [(7800.0, "d/spare")]
    assert [(j["job"], j["started"]) for j in played.jobs] == [("d/steady", 0.0), ("d/spare", 3600.0)]


def test_rescheduling_is_replayed_from_interval_to_interval(tmp_path):
    """n1 is over its targets, n2 under its thresholds: every 5m (from the scheduler's first session)
    rescheduling moves tasks off n1, which bind again; between, nothing happens."""
    hot = ", metrics: {time: '2026-11-21T08:00:00Z', cpu: {10m: 90}, memory: {10m: 90}}"
    cold = ", metrics: {time: '2026-11-21T08:00:00Z', cpu: {10m: 5}, memory: {10m: 5}}"
    trace = _trace(tmp_path, _node("n1", "8", metrics=hot) + _node("n2", "8", metrics=cold),
                   _job("0s", "busy", 3, "2"))
    run, skipped = _same_as_every_period(trace, _bundle("rescheduling"), 30.0, until=3600.0)
    # Per interval: the evicting session, the one binding the task again, one that changes nothing.
    assert skipped > run
    played = replay(trace, _bundle("rescheduling"), ReplayOptions(period=30.0, until=3600.0))
    # Due once more than 5m have passed since the last run: the first session past each 5m.
    assert sorted({e["t"] for e in played.evictions})[:3] == [330.0, 660.0, 990.0]


def test_usage_is_replayed_to_the_instant_a_node_metrics_go_stale(tmp_path):
    """n1's metrics (95 % CPU at 08:00) refuse new pods until they are older than five minutes: the
    pending pod binds at the first session past 08:05, and replay skips the sessions before."""
    hot = ", metrics: {time: '2026-11-21T08:00:00Z', cpu: {10m: 95}, memory: {10m: 10}}"
    trace = _trace(tmp_path, _node("n1", "4", metrics=hot), _job("0s", "late", 1, "1", run="      runTime: 10m\n"))
    run, skipped = _same_as_every_period(trace, _bundle("usage"), 10.0, until=1800.0)
    assert run < 10 and skipped > 80
    played = replay(trace, _bundle("usage"), ReplayOptions(period=10.0, until=1800.0))
    assert [j["started"] for j in played.jobs] == [310.0]


@pytest.mark.parametrize("trace", ["two-queues", "ping-pong"])
def test_preempt_replays_the_example_traces_as_every_period(trace):
    run, skipped = _same_as_every_period(load_trace(ROOT / f"examples/traces/{trace}.yaml"), _bundle("preempt"), 300.0)
    assert skipped > run


@settings(max_examples=4, deadline=None)
@given(shape=st.sampled_from(SHAPES), seed=st.integers(1, 50), bundle=st.sampled_from(sorted(BUNDLES)))
def test_synthesized_traces_with_the_clock_readers_decide_as_every_period(shape, seed, bundle):
    doc = synth_trace(shape, seed, nodes=3, duration=3600.0)
    _same_as_every_period(trace_from_document(doc, Path(f"{shape}.yaml"), ""), _bundle(bundle), 300.0)
