"""fumarole replay: the trace format, the virtual clock, the metrics and the self-contained report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fumarole.runtime.bundles.bundle import bundle_from_volcano_conf, load_bundle
from fumarole.runtime.whatif.clock import ReplayOptions, replay
from fumarole.runtime.whatif.metrics import jain_index, percentile, ping_pong, summarise
from fumarole.runtime.whatif.report import PLOTS
from fumarole.runtime.whatif.trace import load_trace
from tests.report_helpers import assert_self_contained, drawn_charts

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "examples" / "traces" / "two-queues.yaml"
RECLAIM = ROOT / "examples" / "two-queues" / "volcano-scheduler.conf"


@pytest.fixture(scope="module")
def reclaim_run():
    return replay(load_trace(TRACE), bundle_from_volcano_conf(RECLAIM))


def _jobs(run):
    return {j["job"]: j for j in run.jobs}


def test_reclaim_evicts_two_research_pods_and_they_start_again_from_zero(reclaim_run):
    assert [(e["t"], e["task"], e["for_queues"]) for e in reclaim_run.evictions] == [
        (600.0, "research/sweep-2", ["prod"]), (600.0, "research/sweep-1", ["prod"])]
    jobs = _jobs(reclaim_run)
    # prod is pipelined at 600 s and binds in the next session, once the victims are gone.
    assert (jobs["prod/serving"]["started"], jobs["prod/serving"]["finished"]) == (601.0, 2401.0)
    # The two victims wait for prod to finish, then run their full hour again.
    assert jobs["research/sweep"]["finished"] == 2401.0 + 3600.0
    summary = summarise(reclaim_run)
    assert summary["overall"]["lostTaskSeconds"] == 1200.0
    assert summary["queues"]["research"]["evictions"] == 2
    assert summary["overall"]["jobsCompleted"] == 2


def test_idle_time_is_skipped_not_simulated(reclaim_run):
    # Sessions only where something can change: submissions, the bind after the eviction, task ends
    # (one session sees the cluster after each, so proportion's deserved shares stay current).
    assert reclaim_run.sessions == [0.0, 600.0, 601.0, 602.0, 603.0, 2401.0, 3600.0, 6001.0]
    assert reclaim_run.end == 6001.0
    assert (reclaim_run.skipped, reclaim_run.stopped) == (6002 - 8, "played out")


def test_resume_keeps_the_work_an_evicted_task_did():
    run = replay(load_trace(TRACE), bundle_from_volcano_conf(RECLAIM), ReplayOptions(on_evict="resume"))
    assert _jobs(run)["research/sweep"]["finished"] == 2401.0 + 3000.0


def test_a_pipelined_task_binds_when_its_node_frees_after_the_grace_period():
    run = replay(load_trace(TRACE), bundle_from_volcano_conf(RECLAIM), ReplayOptions(grace=30.0))
    assert _jobs(run)["prod/serving"]["started"] == 630.0
    assert len(run.evictions) == 2  # the victims are not evicted again while they terminate


def test_a_site_policy_changes_the_outcome_on_the_same_trace():
    run = replay(load_trace(TRACE), load_bundle(ROOT / "examples" / "site-min-runtime"), ReplayOptions(period=60.0))
    assert run.evictions == []
    assert _jobs(run)["prod/serving"]["started"] == 3600.0  # the sweep's end, not a reclaim


def test_until_stops_the_clock():
    run = replay(load_trace(TRACE), bundle_from_volcano_conf(RECLAIM), ReplayOptions(until=1000.0))
    assert run.end == 1000.0 and _jobs(run)["research/sweep"]["finished"] is None


def test_figures():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5 and percentile([], 95) is None
    assert jain_index([1.0, 1.0]) == 1.0 and jain_index([1.0, 0.0]) == 0.5
    evictions = [{"t": 10.0, "session": 1, "queue": "a", "job": "a/x", "for_queues": ["b"], "for_jobs": ["b/y"]},
                 {"t": 70.0, "session": 7, "queue": "b", "job": "b/y", "for_queues": ["a"], "for_jobs": ["a/x"]},
                 {"t": 999.0, "session": 9, "queue": "a", "job": "a/x", "for_queues": ["b"], "for_jobs": ["b/y"]}]
    found = ping_pong(evictions, "queue", window=100.0)
    assert found == [{"between": ["a", "b"], "reversals": 1, "episodes": [
        {"from": {"t": 10.0, "session": 1, "evicted": "a"}, "to": {"t": 70.0, "session": 7, "evicted": "b"}}]}]
    assert ping_pong(evictions, "queue", window=30.0) == []


def test_replay_command_writes_the_bundle_of_outputs_and_a_self_contained_report(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("replay", str(TRACE), "--bundle", str(RECLAIM), "--compare", str(ROOT / "examples/site-min-runtime"),
                 "--period", "60s", "--out", str(out))
    assert result.code == 0, result.err
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv", "metrics.json", "nodes.csv", "queues.csv",
                                                     "report.html"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["overall"]["evictions"] == 2 and metrics["compare"]["overall"]["evictions"] == 0
    report = (out / "report.html").read_text()
    assert sorted(drawn_charts(report)) == sorted(f"plot-{plot}" for plot in PLOTS)
    assert_self_contained(report)
    assert report.count(str(RECLAIM)) >= 3 and report.count("examples/site-min-runtime") >= 3
    jobs_csv = (out / "jobs.csv").read_text().splitlines()
    assert jobs_csv[0] == "bundle,job,queue,tasks,submitted,started,finished,deleted,evictions"
    assert len(jobs_csv) == 5  # two jobs per bundle


@pytest.mark.parametrize("text, expected", [
    ("kind: Trace\nevents: [\n", "t.yaml:3:1: error[T001]: malformed YAML"),
    ("kind: Trace\nevents:\n- at: 10s\n  launch: {}\n",
     "t.yaml:3:3: error[T002]: event 0 needs `at` and exactly one of submit, delete, addNode, removeNode"),
    ("kind: Trace\nevents:\n- at: 10 minutes\n  delete: research/sweep\n",
     "t.yaml:3:7: error[T003]: event 0: at must be a duration"),
    ("kind: Trace\nfoo: 1\n", "t.yaml:2:1: error[T002]: unknown trace key 'foo'"),
    ("kind: Trace\nevents:\n- at: 1s\n  submit:\n    podGroup: {kind: PodGroup, metadata: {name: g}, spec: {minMember: x}}\n"
     "    tasks: []\n", "t.yaml:5:71: error[K007]: spec.minMember of PodGroup g must be an integer"),
])
def test_bad_traces_are_reported_with_their_place(cli, tmp_path, monkeypatch, text, expected):
    monkeypatch.chdir(tmp_path)
    Path("t.yaml").write_text(text)
    result = cli("replay", "t.yaml", "--out", "out")
    assert result.code == 2
    assert result.err.startswith(expected), result.err
    assert "Traceback" not in result.err


def test_fumarole_run_does_not_import_the_report_dependencies():
    import subprocess
    import sys

    code = ("import sys; from fumarole.runtime.cli.main import main; main(['run', 'examples/cluster.yaml']); "
            "print(sorted(m for m in ('matplotlib', 'plotly', 'dask', 'kubernetes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]")


def test_a_shipped_site_policy_removes_the_reclaim_ping_pong_volcano_shows():
    trace = load_trace(ROOT / "examples" / "traces" / "ping-pong.yaml")
    volcano = summarise(replay(trace, bundle_from_volcano_conf(RECLAIM)))
    # training reclaims from analytics at 60 s; analytics reclaims from training at 300 s.
    assert volcano["pingPong"]["queues"] == [{"between": ["analytics", "training"], "reversals": 1, "episodes": [
        {"from": {"t": 60.0, "session": 1, "evicted": "analytics"},
         "to": {"t": 300.0, "session": 6, "evicted": "training"}}]}]
    site = summarise(replay(trace, load_bundle(ROOT / "examples" / "site-min-runtime"), ReplayOptions(period=60.0)))
    assert site["pingPong"] == {"queues": [], "jobs": []}
    assert site["overall"]["evictions"] == 0


def test_disruption_budgets_stay_in_the_cluster_from_session_to_session(tmp_path):
    """The replay's cluster between sessions dropped the trace's PodDisruptionBudgets, so the pdb plugin
    never saw the budget that covers the research pods."""
    import yaml

    doc = yaml.safe_load(TRACE.read_text())
    sweep = doc["events"][0]["submit"]["tasks"][0]["pod"]
    sweep["metadata"]["labels"] = {"app": "sweep"}
    doc["cluster"].append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                           "metadata": {"name": "sweep", "namespace": "research"},
                           "spec": {"selector": {"matchLabels": {"app": "sweep"}}, "maxUnavailable": 0},
                           "status": {"disruptionsAllowed": 0}})
    trace = tmp_path / "trace.yaml"
    trace.write_text(yaml.safe_dump(doc))
    conf = yaml.safe_load(RECLAIM.read_text())
    conf["tiers"][0]["plugins"].append({"name": "pdb"})
    config = tmp_path / "volcano-scheduler.conf"
    config.write_text(yaml.safe_dump(conf))
    run = replay(load_trace(trace), bundle_from_volcano_conf(config))
    # The budget allows no disruption: pdb's tier answers no victims and the next tier's choose (as in
    # `fumarole run` on this cluster); without the budget the first tier chose sweep-2 and sweep-1.
    assert [(e["t"], e["task"]) for e in run.evictions] == [(600.0, "research/sweep-1"), (600.0, "research/sweep-0")]
