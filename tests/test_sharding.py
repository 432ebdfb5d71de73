"""Volcano's scheduler sharding (--scheduler-sharding-mode / -name and NodeShard objects): the nodes a
session takes as its shard, the decisions of hard and soft mode on both engines, and the refusal of
bad modes and bad NodeShards with one positioned message each."""

from __future__ import annotations

import json

import pytest
from clusters import queue
from process_helpers import as_yaml, node, pod, pod_group

from fumarole.runtime.bundles.bundle import default_bundle
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions


def node_shard(name: str, desired: list[str], in_use: list[str] | None = None) -> dict:
    shard: dict = {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": name},
                   "spec": {"nodesDesired": desired}}
    if in_use is not None:
        shard["status"] = {"nodesInUse": in_use}
    return shard


def binds(objects: list[dict], engine: str, **options) -> dict[str, str]:
    session = new_session(default_bundle(), cluster_from_objects(objects), now=0.0,
                          options=SchedulerOptions(**options), engine=engine)
    return dict(run_session(session).binds)


def test_nodes_in_shard_are_the_desired_nodes_less_those_other_shards_still_use():
    cluster = cluster_from_objects([node("a"), node("b"), node("c"),
                                    node_shard("volcano", ["a", "b", "c"], in_use=["a", "b", "c"]),
                                    node_shard("other", ["b", "x"], in_use=["b"]),
                                    node_shard("third", [], in_use=["c", "a"])])
    assert cluster.nodes_in_shard(SchedulerOptions(sharding_mode="hard")) == frozenset()  # all used elsewhere
    cluster = cluster_from_objects([node("a"), node("b"), node("c"), node_shard("volcano", ["a", "b", "c"]),
                                    node_shard("other", ["b"], in_use=["b"])])
    assert cluster.nodes_in_shard(SchedulerOptions(sharding_mode="soft")) == {"a", "c"}
    assert cluster.nodes_in_shard(SchedulerOptions(sharding_mode="hard", sharding_name="other")) == {"b"}
    assert cluster.nodes_in_shard(SchedulerOptions()) == frozenset()  # no sharding: no shard is read


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_hard_mode_only_takes_the_shard_and_soft_mode_takes_it_first(engine):
    """n-a comes first in node order and ties with n-b; the shard (Volcano's default name) holds n-b."""
    base = [queue(), node("n-a"), node("n-b"), pod_group("job"), pod("job", "1", group="job")]
    shard = [node_shard("volcano", ["n-b"])]
    assert binds(base + shard, engine) == {"ns/job": "n-a"}
    assert binds(base + shard, engine, sharding_mode="hard") == {"ns/job": "n-b"}
    assert binds(base + shard, engine, sharding_mode="soft") == {"ns/job": "n-b"}
    full = [pod("hog", "4", node_name="n-b")]  # the shard's node has no room left
    assert binds(base + shard + full, engine, sharding_mode="hard") == {}
    assert binds(base + shard + full, engine, sharding_mode="soft") == {"ns/job": "n-a"}


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_without_its_node_shard_a_sharded_scheduler_has_no_shard_and_is_warned(engine):
    objects = [queue(), node("n-a"), pod_group("job"), pod("job", "1", group="job"), node_shard("other", ["n-a"])]
    assert binds(objects, engine, sharding_mode="hard") == {}
    assert binds(objects, engine, sharding_mode="soft") == {"ns/job": "n-a"}
    assert binds(objects, engine, sharding_mode="soft", sharding_name="other") == {"ns/job": "n-a"}
    cluster = cluster_from_objects(objects)
    [warning] = cluster.warnings_for(SchedulerOptions(sharding_mode="hard"))
    assert (warning.code, warning.message) == (
        "K107", "--scheduler-sharding-mode hard names NodeShard 'volcano', which the cluster does not have: "
                "Volcano keeps no node in its shard and schedules onto no node")
    assert cluster.warnings_for(SchedulerOptions(sharding_mode="hard", sharding_name="other")) == ()
    assert cluster.warnings_for(SchedulerOptions()) == ()


@pytest.fixture
def cluster_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(as_yaml([queue(), node("n-a"), node("n-b"), pod_group("job"), pod("job", "1", group="job"),
                             node_shard("train", ["n-b"])]))
    return str(path)


def test_run_takes_the_sharding_flags(cli, cluster_file):
    plain = cli("run", cluster_file, "--format", "json")
    sharded = cli("run", cluster_file, "--format", "json", "--scheduler-sharding-mode", "hard",
                  "--scheduler-sharding-name=train")
    assert json.loads(plain.out)["binds"] == {"ns/job": "n-a"}
    assert json.loads(sharded.out)["binds"] == {"ns/job": "n-b"}
    missing = cli("run", cluster_file, "--format", "json", "--scheduler-sharding-mode", "hard")
    assert missing.code == 0 and json.loads(missing.out)["binds"] == {}
    assert "warning[K107]: --scheduler-sharding-mode hard names NodeShard 'volcano'" in missing.err


def test_an_unknown_sharding_mode_is_refused_at_its_column(cli, cluster_file):
    result = cli("run", cluster_file, "--scheduler-sharding-mode", "Hard")
    assert result.code == 2
    col = len(f"fumarole run {cluster_file} ") + 1
    assert result.err.splitlines()[0] == (
        f"command line:1:{col}: error[O002]: scheduler-sharding-mode takes none, hard or soft, not 'Hard' "
        "(Volcano would take it as none)")
    assert result.err.count("error[") == 1 and "Traceback" not in result.err


SCENARIO = """name: sharded
scheduler: {{actions: allocate, tiers: [{{plugins: [{{name: predicates}}]}}]}}
schedulerOptions:
  scheduler-sharding-mode: {mode}
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: '2', pods: '10'}}}}}}
- apiVersion: shard.volcano.sh/v1alpha1
  kind: NodeShard
  metadata: {{name: volcano}}
  spec: {{nodesDesired: {desired}}}
expect: {{binds: {{}}}}
"""


def test_a_scenario_with_an_unknown_mode_is_one_positioned_error(cli, tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(SCENARIO.format(mode="hardd", desired="[n1]"))
    result = cli("test", str(case))
    assert result.code == 2
    assert f"cannot run: {case}:4:28: error[O002]: scheduler-sharding-mode takes none, hard or soft, not " \
        "'hardd' (Volcano would take it as none)" in result.out
    assert (result.out + result.err).count("error[") == 1 and "Traceback" not in result.out + result.err


@pytest.mark.parametrize("desired, at, message", [
    ("n1", "10:24", "spec.nodesDesired of NodeShard volcano must be a list, not 'n1'"),
    ("[n1, [n2]]", "10:29", "spec.nodesDesired[1] of NodeShard volcano must be a string or a number, not ['n2']"),
])
def test_a_bad_node_shard_is_one_positioned_error(cli, tmp_path, desired, at, message):
    case = tmp_path / "case.yaml"
    case.write_text(SCENARIO.format(mode="hard", desired=desired))
    result = cli("test", str(case))
    assert result.code == 2
    assert f"cannot run: {case}:{at}: error[K007]: {message}" in result.out
    assert (result.out + result.err).count("error[") == 1 and "Traceback" not in result.out + result.err


def test_a_misspelt_node_shard_field_is_warned_at_its_key(tmp_path):
    cluster = cluster_from_objects([node("n1"), {**node_shard("volcano", ["n1"]),
                                                 "status": {"nodesInuse": ["n1"]}}])
    [warning] = cluster.warnings
    assert warning.code == "K103" and warning.message == (
        "unknown field 'status.nodesInuse' in NodeShard volcano: fumarole ignores it")
    assert warning.hint == "did you mean 'nodesInUse'?"
