"""One session lifecycle (runtime/framework/lifecycle.py): every front door refuses a cluster
Volcano could never schedule (a queue hierarchy with a cycle) with ``run``'s positioned K110,
before any action decides anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fumarole.policy_lang.diagnostics import FumaroleError
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
CYCLE = "queue 'a' is its own ancestor: spec.parent links a -> b -> a"


OBJECTS = small_cluster([queue("root"), queue("a", "b"), queue("b", "a")], "root")


def cluster_text() -> str:
    return yaml.safe_dump_all(OBJECTS, sort_keys=False)


@pytest.fixture
def no_action_runs(monkeypatch):
    """Any action the refused session ran would fail the test: the refusal comes first."""
    def forbidden(self: Session) -> None:
        raise AssertionError("an action ran on a session that should have been refused")
    monkeypatch.setattr(Session, "run_actions", forbidden)


def session(source: str = "c.yaml") -> Session:
    text = cluster_text()
    return new_session(build_bundle(config_from_document(CONF)), cluster_from_objects(load_all(text), source, text))


def test_open_session_places_the_problem_in_the_cluster_file():
    with pytest.raises(FumaroleError) as caught:
        open_session(session(), "c.yaml")
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.code, diagnostic.message) == ("K110", CYCLE)
    assert diagnostic.location == "c.yaml:26:3"


def test_a_session_over_partial_objects_opens_whatever_its_plugins_found():
    opened = session()
    open_session(opened, None)
    assert [p.queue.name for p in opened.problems] == ["a"]


def test_run_session_refuses_before_any_action(no_action_runs):
    with pytest.raises(FumaroleError) as caught:
        run_session(session())  # placed in the cluster's own file by default
    assert caught.value.diagnostics[0].location == "c.yaml:26:3"


def scenario(tmp_path: Path, expectation: dict) -> Path:
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"name": "cycle", "scheduler": CONF, "cluster": "cluster.yaml", **expectation}))
    (tmp_path / "cluster.yaml").write_text(cluster_text())
    return case


def case_line(path: Path, key: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(key))


@pytest.mark.parametrize("expectation", [
    {"expect": {"binds": {}}},
    {"expectHooks": [{"hook": "jobOrderCompare", "left": "ns/pg1", "right": "ns/pg1", "result": 0}]},
])
def test_a_scenario_is_refused_as_run_refuses_it(tmp_path, expectation, no_action_runs):
    outcome = run_file(scenario(tmp_path, expectation))  # before: run and compared, or a hook called
    assert (outcome.passed, outcome.bad_input) == (False, True)
    assert outcome.difference == f"cannot run: {tmp_path / 'cluster.yaml'}:26:3: error[K110]: {CYCLE}"
    assert outcome.line == case_line(tmp_path / "case.yaml", "cluster:")  # where the scenario names the file


def test_fumarole_test_exits_2_on_a_refused_scenario(cli, tmp_path):
    case = scenario(tmp_path, {"expect": {"binds": {}}})
    result = cli("test", str(case))
    assert result.code == 2
    assert f"cluster.yaml:26:3: error[K110]: {CYCLE}" in result.out + result.err
    assert "Traceback" not in result.err


def test_replay_refuses_the_first_session_before_it_decides(tmp_path, no_action_runs):
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
    with pytest.raises(FumaroleError) as caught:
        replay(load_trace(trace), bundle_from_volcano_conf(conf))
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.code, diagnostic.message, diagnostic.file) == ("K110", CYCLE, str(trace))


def test_diff_refuses_as_run_does(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(cluster_text())
    conf = tmp_path / "scheduler.conf"
    conf.write_text(json.dumps(CONF))
    result = cli("diff", str(cluster), "--base", str(conf), "--candidate", str(conf))
    assert result.code == 2
    assert f"{cluster}:26:3: error[K110]: {CYCLE}" in result.err


def extender_queue(name: str, parent: str) -> dict:
    return {"UID": name, "Name": name, "Weight": 1, "Queue": queue(name, parent)}


def test_the_extender_refuses_a_volcano_session_it_could_not_schedule(tmp_path, no_action_runs):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "bundle.yaml").write_text(yaml.safe_dump({
        "apiVersion": "fumarole/v1", "kind": "PolicyBundle", "metadata": {"name": "hierarchy", "revision": "1"},
        "uses": ["volcano"], "actions": ["enqueue", "allocate"], "tiers": CONF["tiers"]}))
    extender = Extender(make_service(archive(folder)).registry)
    body = {"Jobs": {}, "Nodes": {}, "Queues": {"root": extender_queue("root", ""), "a": extender_queue("a", "b"),
                                                "b": extender_queue("b", "a")}}
    with pytest.raises(FumaroleError) as caught:
        extender.handle("onSessionOpen", body)
    assert [(d.code, d.message) for d in caught.value.diagnostics] == [("K110", CYCLE)]
    # a verb's own objects are not Volcano's session: a lone child queue has no parent to find
    assert extender.handle("queueOverused", {"queue": extender_queue("a", "b")})[0] == {"overused": False}
