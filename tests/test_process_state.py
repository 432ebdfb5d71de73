"""One scheduler process across sessions: the node scan's start index and tdm's eviction window carry over."""

from __future__ import annotations

import datetime as dt

import httpx
import pytest
import yaml
from process_helpers import as_yaml, sampled_cluster
from serving_helpers import archive, make_service, running, write_bundle
from test_sla_tdm_support import _revocable_cluster, _tdm, _today
from tests.helpers import errors

from fumarole.policy_lang.fmt import format_source
from fumarole.runtime.authoring.scenario import load_scenario, run_scenario
from fumarole.runtime.bundles.bundle import build_bundle, default_bundle
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document


def bind_of(state: ProcessState, objects: list[dict]) -> str:
    decisions = run_session(new_session(default_bundle(), cluster_from_objects(objects), now=0.0, process_state=state))
    return dict(decisions.binds)["ns/want"]


# -- the node scan ---------------------------------------------------------------------------------

def test_a_session_starts_where_the_previous_one_left_the_scan():
    objects = sampled_cluster(120, idle=110)
    state = ProcessState()
    assert bind_of(state, objects) == "n000"          # found n000..n099: at least 100 feasible nodes
    assert state.predicate_start_index == 101         # n100, the first feasible past them, ends the scan
    assert bind_of(state, objects) == "n110"          # found n101..n119, n000..n080; n081 ends the scan
    assert state.predicate_start_index == 82
    assert bind_of(ProcessState(), objects) == "n000"  # a freshly started scheduler starts again at n000


def test_a_small_cluster_is_scanned_whole_and_keeps_the_index():
    state = ProcessState(predicate_start_index=7)
    assert bind_of(state, sampled_cluster(50, idle=3)) == "n003"
    assert state.predicate_start_index == 7  # every node processed: (7 + 50) % 50


def test_process_state_round_trips_through_json():
    state = ProcessState(12, {"tdm": {"last_eviction": 5.0}})
    assert ProcessState.from_dict(state.to_dict()) == state
    copy = state.copy()
    copy.plugins["tdm"]["last_eviction"] = 9.0
    assert state.plugins["tdm"]["last_eviction"] == 5.0


# -- tdm's eviction window ------------------------------------------------------------------------

def tdm_session(state: ProcessState, now: float) -> list[str]:
    config = config_from_document({"actions": "shuffle", "tiers": [{"plugins": [_tdm("10:00-11:00", "1m")]}]})
    session = new_session(build_bundle(config), cluster_from_objects(_revocable_cluster()), now=now,
                          process_state=state)
    return [pod for pod, _ in run_session(session).evictions]


def test_tdm_eviction_window_holds_across_sessions():
    noon = _today(12)
    state = ProcessState()
    assert len(tdm_session(state, noon)) == 3
    assert state.plugins["tdm"] == {"last_eviction": noon}
    assert tdm_session(state, noon + 30) == []            # within the evict period of the last round
    assert tdm_session(ProcessState(), noon + 30) != []   # a fresh process has no last round
    assert len(tdm_session(state, noon + 61)) == 3
    assert state.plugins["tdm"] == {"last_eviction": noon + 61}


# -- fumarole serve -------------------------------------------------------------------------------

@pytest.fixture
def sampled_service(tmp_path):
    folder = write_bundle(tmp_path / "b1", "1", ["ns"])
    return make_service(archive(folder)), tmp_path


def test_serve_decides_the_next_session_from_where_the_last_left_the_scan(sampled_service):
    service, tmp_path = sampled_service
    cluster = cluster_from_objects(sampled_cluster(120, idle=110))
    assert service.run_session(cluster)["decisions"]["binds"] == {"ns/want": "n000"}
    assert service.status()["processState"] == {"predicateStartIndex": 101, "plugins": {}}
    # A bundle swap is a configuration reload, not a restart: the scan goes on.
    service.registry.activate(archive(write_bundle(tmp_path / "b2", "2", ["ns"])), "upload", origin="upload")
    assert service.run_session(cluster)["decisions"]["binds"] == {"ns/want": "n110"}
    assert service.status()["processState"]["predicateStartIndex"] == 82


def test_serve_holds_tdm_eviction_window_across_sessions(tmp_path):
    folder = write_bundle(tmp_path / "tdm", "1", [], actions=("shuffle",),
                          tiers=[{"plugins": [_tdm("10:00-11:00", "1m")]}])
    service = make_service(archive(folder))
    cluster = cluster_from_objects(_revocable_cluster())
    noon = dt.datetime.fromtimestamp(_today(12), dt.timezone.utc)

    def evicted(seconds: int) -> list[str]:
        return service.run_session(cluster, (noon + dt.timedelta(seconds=seconds)).isoformat())["decisions"]["evicted"]

    assert len(evicted(0)) == 3
    assert evicted(30) == []
    assert len(evicted(61)) == 3
    assert service.status()["processState"]["plugins"] == {"tdm": {"last_eviction": _today(12) + 61}}


def test_serve_status_shows_options_and_process_state(sampled_service):
    service, _ = sampled_service
    service.option_flags = {"percentage_nodes_to_find": 100}
    with running(service) as url, httpx.Client(base_url=url) as client:
        answer = client.post("/v1/sessions", content=as_yaml(sampled_cluster(120, idle=110)),
                             headers={"content-type": "application/yaml"}).json()
        status = client.get("/v1/status").json()
    assert answer["decisions"]["binds"] == {"ns/want": "n110"}
    assert status["schedulerOptions"]["percentage-nodes-to-find"] == 100
    assert status["schedulerOptions"]["scheduler-name"] == ["volcano"]
    assert status["processState"] == {"predicateStartIndex": 0, "plugins": {}}  # all 120 scanned


def test_serve_refuses_a_bad_option_flag_before_starting(cli):
    result = cli("serve", "--bundle", "nowhere", "--minimum-feasible-nodes", "many")
    assert result.code == 2
    assert result.err.startswith("command line:1:33: error[O002]: --minimum-feasible-nodes takes a 32-bit integer")


# -- scenarios ------------------------------------------------------------------------------------

def write_scenario(tmp_path, extra: str, objects: list[dict], expect: dict) -> None:
    doc = yaml.dump({"name": "later-cycle", "scheduler": {"actions": "enqueue, allocate", "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}]},
        {"plugins": [{"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]}]},
        "objects": objects, "expect": expect}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    (tmp_path / "case.yaml").write_text(extra + doc)


def test_a_scenario_restates_a_later_cycle(tmp_path):
    objects = sampled_cluster(120, idle=110)
    write_scenario(tmp_path, "processState: {predicateStartIndex: 100}\n", objects, {"binds": {"ns/want": "n110"}})
    scenario = load_scenario(tmp_path / "case.yaml")
    assert run_scenario(scenario).passed
    assert run_scenario(scenario).passed  # the scenario's own state is not changed by running it
    write_scenario(tmp_path, "schedulerOptions: {percentage-nodes-to-find: 100}\n", objects,
                   {"binds": {"ns/want": "n110"}})
    assert run_scenario(load_scenario(tmp_path / "case.yaml")).passed


def test_a_scenario_restates_tdm_last_eviction(tmp_path):
    noon = _today(12)
    now = dt.datetime.fromtimestamp(noon, dt.timezone.utc).isoformat()
    doc = {"name": "tdm-later", "now": now, "scheduler": {"actions": "shuffle", "tiers": [
        {"plugins": [_tdm("10:00-11:00", "1m")]}]}, "objects": _revocable_cluster(), "expect": {"evicted": []},
        "processState": {"plugins": {"tdm": {"last_eviction": noon - 30}}}}
    (tmp_path / "case.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert run_scenario(load_scenario(tmp_path / "case.yaml")).passed


@pytest.mark.parametrize("block, message", [
    ("processState: {predicateStartIndex: -1}\n",
     "case.yaml:1:37: error[S030]: predicateStartIndex must be a non-negative integer, not -1"),
    ("processState: {startIndex: 3}\n",
     "case.yaml:1:16: error[S030]: unknown processState key 'startIndex'"),
    ("processState:\n  plugins:\n    predicates: {last_evict: 1}\n",
     "case.yaml:3:18: error[S030]: plugin 'predicates' declares no process state 'last_evict'"),
    ("processState:\n  plugins: {tmd: {}}\n",
     "case.yaml:2:13: error[S030]: plugin 'tmd' is not in the bundle"),
    ("schedulerOptions: {percentage-nodes-to-find: all}\n",
     "case.yaml:1:46: error[O002]: percentage-nodes-to-find takes a 32-bit integer, not 'all'"),
    ("schedulerOptions: {node-selectors: [a:b]}\n",
     "case.yaml:1:20: error[O001]: unknown scheduler option node-selectors"),
])
def test_scenario_process_inputs_are_validated_with_positions(cli, tmp_path, block, message):
    write_scenario(tmp_path, block, sampled_cluster(3, idle=1), {"bindCount": 1})
    result = cli("test", str(tmp_path / "case.yaml"))
    assert result.code == 2
    assert message.replace("case.yaml", str(tmp_path / "case.yaml")) in result.out + result.err


# -- the language ---------------------------------------------------------------------------------

def test_process_state_is_a_plugins_and_holds_scalars():
    assert errors("plugin p\n\nprocess state last: float?\n") == []
    assert errors("action a\n\nprocess state last: float?\n\non execute():\n    pass\n") == \
        [("E120", 3, 1, "only a plugin can declare process state, not an action")]
    assert errors("plugin p\n\nprocess state seen: list[string]\n") == \
        [("E103", 3, 21, "process state 'seen' must be an int, float, duration, string or bool "
                         "(optional or not), not list[string]")]
    assert format_source("plugin p\n\nprocess  state last : float?\n", "p.policy").endswith(
        "process state last: float?\n")
