"""One session lifecycle (runtime/framework/lifecycle.py): every front door opens a cluster whose
queue hierarchy has a cycle and decides what Volcano would (capacity's updateAncestors never
reports a cycle, so the plugin stays ready: the job in root binds), with the problem placed as
``run``'s K110 warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fumarole.runtime.authoring.scenario import run_file
from fumarole.runtime.bundles.bundle import build_bundle, bundle_from_volcano_conf
from fumarole.runtime.framework.lifecycle import new_session, open_session, run_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from fumarole.runtime.ingest.yamlpos import load_all
from fumarole.runtime.serve.extender import Extender
from fumarole.runtime.whatif.clock import replay
from fumarole.runtime.whatif.trace import load_trace

from clusters import NODE, POD, pod_group, queue, small_cluster
from serving_helpers import archive, make_service

CONF = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "capacity", "enableHierarchy": True}]}]}
CYCLE = ("queue 'a' is its own ancestor (spec.parent links a -> b -> a): with enableHierarchy these queues and "
         "those below them get no capacity, and a job in the cycle leaves the capacity plugin not ready")
BOUND = {"ns/p1": "n1"}


OBJECTS = small_cluster([queue("root"), queue("a", "b"), queue("b", "a")], "root")


def cluster_text() -> str:
    return yaml.safe_dump_all(OBJECTS, sort_keys=False)


def session(source: str = "c.yaml") -> Session:
    text = cluster_text()
    return new_session(build_bundle(config_from_document(CONF)), cluster_from_objects(load_all(text), source, text))


def test_open_session_places_the_problem_in_the_cluster_file():
    opened = session()
    open_session(opened, "c.yaml")
    [diagnostic] = opened.warnings
    assert (diagnostic.code, diagnostic.severity, diagnostic.message) == ("K110", "warning", CYCLE)
    assert diagnostic.location == "c.yaml:26:3"


def test_a_session_over_partial_objects_opens_whatever_its_plugins_found():
    opened = session()
    open_session(opened, None)
    assert [p.queue.name for p in opened.problems] == ["a"] and opened.warnings == []


def test_run_session_decides_and_warns():
    ran = session()
    decisions = run_session(ran)  # placed in the cluster's own file by default
    assert dict(decisions.binds) == BOUND
    assert [d.location for d in ran.warnings] == ["c.yaml:26:3"]


def scenario(tmp_path: Path, expectation: dict) -> Path:
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"name": "cycle", "scheduler": CONF, "cluster": "cluster.yaml", **expectation}))
    (tmp_path / "cluster.yaml").write_text(cluster_text())
    return case


@pytest.mark.parametrize("expectation", [
    {"expect": {"binds": BOUND}},
    {"expectHooks": [{"hook": "jobOrderCompare", "left": "ns/pg1", "right": "ns/pg1", "result": 0}]},
])
def test_a_scenario_runs_as_volcano_would(tmp_path, expectation):
    outcome = run_file(scenario(tmp_path, expectation))
    assert (outcome.passed, outcome.bad_input) == (True, False), outcome.difference


def test_fumarole_test_passes_and_exits_0(cli, tmp_path):
    result = cli("test", str(scenario(tmp_path, {"expect": {"binds": BOUND}})))
    assert result.code == 0 and "1 passed, 0 failed" in result.out
    assert "Traceback" not in result.err


def test_replay_starts_the_job(tmp_path):
    trace = tmp_path / "t.yaml"
    trace.write_text(yaml.safe_dump({
        "apiVersion": "fumarole/v1", "kind": "Trace", "start": "2026-11-21T08:00:00Z",
        "cluster": [NODE, queue("root"), queue("a", "b"), queue("b", "a")],
        "events": [{"at": "0s", "submit": {"podGroup": pod_group("root"),
                                           "tasks": [{"replicas": 1, "runTime": "1m", "pod": {
                                               "metadata": {"name": "p"},
                                               "spec": POD["spec"]}}]}}]}, sort_keys=False))
    conf = tmp_path / "scheduler.conf"
    conf.write_text(json.dumps(CONF))
    [job] = replay(load_trace(trace), bundle_from_volcano_conf(conf)).jobs
    assert job["started"] == 0.0


def test_diff_warns_once_and_runs(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(cluster_text())
    conf = tmp_path / "scheduler.conf"
    conf.write_text(json.dumps(CONF))
    result = cli("diff", str(cluster), "--base", str(conf), "--candidate", str(conf))
    assert result.code == 0
    assert [line for line in result.err.splitlines() if "K110" in line] == [f"{cluster}:26:3: warning[K110]: {CYCLE}"]


def hierarchy_bundle(tmp_path: Path) -> bytes:
    """The archive of a bundle running CONF's hierarchical capacity plugin."""
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "bundle.yaml").write_text(yaml.safe_dump({
        "apiVersion": "fumarole/v1", "kind": "PolicyBundle", "metadata": {"name": "hierarchy", "revision": "1"},
        "uses": ["volcano"], "actions": ["enqueue", "allocate"], "tiers": CONF["tiers"]}))
    return archive(folder)


def test_serve_reports_the_session_warning_in_its_entry(tmp_path):
    """A served session decides as ``run`` does and says what ``run`` would print as a warning."""
    entry = make_service(hierarchy_bundle(tmp_path)).run_session(cluster_text().encode())
    assert entry["decisions"]["binds"] == BOUND
    assert [(w["code"], w["severity"], w["message"], w["file"], w["line"]) for w in entry["warnings"]] == [
        ("K110", "warning", CYCLE, "request", 26)]


def extender_queue(name: str, parent: str) -> dict:
    return {"UID": name, "Name": name, "Weight": 1, "Queue": queue(name, parent)}


def test_the_extender_opens_the_session_volcano_opened(tmp_path):
    extender = Extender(make_service(hierarchy_bundle(tmp_path)).registry)
    body = {"Jobs": {}, "Nodes": {}, "Queues": {"root": extender_queue("root", ""), "a": extender_queue("a", "b"),
                                                "b": extender_queue("b", "a")}}
    extender.handle("onSessionOpen", body)
    # a verb's own objects are not Volcano's session: a lone child queue has no parent to find
    assert extender.handle("queueOverused", {"queue": extender_queue("a", "b")})[0] == {"overused": False}
