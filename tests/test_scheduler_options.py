"""Volcano's scheduler options change decisions as upstream's code says, and bad ones are refused with a place."""

from __future__ import annotations

import json

import pytest
from clusters import queue
from process_helpers import as_yaml, node, pod, pod_group, sampled_cluster

from fumarole.runtime.bundles.bundle import default_bundle, load_bundle_dir
from fumarole.runtime.framework.predicate_helper import num_feasible_nodes_to_find
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_options import OPTIONS, OptionError, SchedulerOptions, flag_value


def binds(objects: list[dict], **options) -> dict[str, str]:
    session = new_session(default_bundle(), cluster_from_objects(objects), now=0.0, options=SchedulerOptions(**options))
    return dict(run_session(session).binds)


# -- node sampling (CalculateNumOfFeasibleNodesToFind) ---------------------------------------------------

def test_sampling_counts_follow_upstream_formula():
    assert num_feasible_nodes_to_find(100) == 100                      # small clusters are scanned whole
    assert num_feasible_nodes_to_find(300) == 144                      # adaptive: 50 - 300/125 = 48 %
    assert num_feasible_nodes_to_find(6000) == 300                     # adaptive floor: 5 %
    assert num_feasible_nodes_to_find(300, SchedulerOptions(percentage_nodes_to_find=100)) == 300
    assert num_feasible_nodes_to_find(300, SchedulerOptions(percentage_nodes_to_find=10)) == 100
    assert num_feasible_nodes_to_find(300, SchedulerOptions(percentage_nodes_to_find=10,
                                                            minimum_feasible_nodes=20)) == 30
    assert num_feasible_nodes_to_find(300, SchedulerOptions(minimum_feasible_nodes=300)) == 300
    assert num_feasible_nodes_to_find(6000, SchedulerOptions(minimum_percentage_nodes_to_find=10)) == 600


@pytest.mark.parametrize("percentage, nodes, wanted", [
    (0, 10, 10), (40, 10, 10), (0, 1000, 420), (40, 1000, 400), (0, 6000, 300), (40, 6000, 2400)])
def test_upstream_num_feasible_nodes_to_find(percentage, nodes, wanted):
    """scheduler_helper_test.go TestNumFeasibleNodesToFind, its six cases with its options
    (minimum 100 nodes, minimum percentage 5)."""
    options = SchedulerOptions(percentage_nodes_to_find=percentage, minimum_feasible_nodes=100,
                               minimum_percentage_nodes_to_find=5)
    assert num_feasible_nodes_to_find(nodes, options) == wanted


def test_the_sample_size_is_worked_out_in_int32():
    """The node count times a large minimum percentage wraps around as Go's int32 product does;
    a negative result is raised to the minimum node count."""
    def wanted(nodes: int, percentage: int) -> int:
        return num_feasible_nodes_to_find(nodes, SchedulerOptions(minimum_feasible_nodes=1,
                                                                  minimum_percentage_nodes_to_find=percentage))
    assert wanted(4, 2**30 + 75) == 3            # 4 * (2^30 + 75) = 2^32 + 300 -> 300
    assert wanted(4, 2**29 + 1) == 1             # 2^31 + 4 -> -2^31 + 4, below the minimum of 1
    assert wanted(200, 10_000_000) == 20_000_000  # no wrap: far more than the nodes (all are scanned)


def test_idle_node_past_the_sampled_window_is_only_found_when_every_node_is_scanned():
    objects = sampled_cluster(300, idle=250)
    assert binds(objects) == {"ns/want": "n000"}  # 144 feasible nodes found before n250
    assert binds(objects, percentage_nodes_to_find=100) == {"ns/want": "n250"}
    assert binds(objects, minimum_feasible_nodes=300) == {"ns/want": "n250"}


def test_idle_node_inside_a_smaller_window_is_lost_when_the_window_shrinks():
    objects = sampled_cluster(300, idle=120)
    assert binds(objects) == {"ns/want": "n120"}  # inside the adaptive 144
    assert binds(objects, percentage_nodes_to_find=10) == {"ns/want": "n000"}  # 100 nodes: n000..n099


# -- what Volcano's cache holds ----------------------------------------------------------------------

def test_scheduler_name_selects_the_pods_volcano_schedules():
    objects = [queue(), node("a"), pod_group("mine"), pod("mine", "1", group="mine", scheduler="volcano"),
               pod_group("theirs"), pod("theirs", "1", group="theirs", scheduler="other")]
    assert binds(objects) == {"ns/mine": "a"}
    assert binds(objects, scheduler_names=("volcano", "other")) == {"ns/mine": "a", "ns/theirs": "a"}
    assert binds(objects, scheduler_names=("other",)) == {"ns/theirs": "a"}


def test_pods_of_other_schedulers_still_use_their_node():
    objects = [queue(), node("a"), pod("foreign", "4", node_name="a", scheduler="default-scheduler"),
               pod_group("mine"), pod("mine", "1", group="mine", scheduler="volcano")]
    assert binds(objects) == {}


def test_default_queue_takes_podgroups_that_name_none():
    objects = [queue("batch"), node("a"), pod_group("job", queue_name=None), pod("job", "1", group="job")]
    assert binds(objects) == {}  # queue "default" does not exist: the job is left out
    assert binds(objects, default_queue="batch") == {"ns/job": "a"}


def test_the_missing_queue_warning_follows_the_default_queue():
    objects = [queue("batch"), pod_group("job", queue_name=None)]
    cluster = cluster_from_objects(objects)
    assert [w.message for w in cluster.warnings_for(SchedulerOptions())] == \
        ["PodGroup job names queue 'default', which does not exist: Volcano leaves the group out of the session"]
    assert cluster.warnings_for(SchedulerOptions(default_queue="batch")) == ()
    assert [w.message for w in cluster.warnings_for(SchedulerOptions(default_queue="none"))] == \
        ["PodGroup job names queue 'none', which does not exist: Volcano leaves the group out of the session"]


def test_node_selector_restricts_the_nodes():
    objects = [queue(), node("a", {"role": "serving"}), node("b", {"role": "train"}),
               pod_group("job"), pod("job", "1", group="job")]
    assert binds(objects) == {"ns/job": "a"}
    assert binds(objects, node_selector=("role:train",)) == {"ns/job": "b"}
    assert binds(objects, node_selector=("role:none", " role : train ")) == {"ns/job": "b"}
    assert binds(objects, node_selector=("role:none",)) == {}


def test_priority_class_false_gives_every_podgroup_priority_zero():
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000}
    objects = [queue(), high, node("a"), pod_group("a-low"), pod("a-low", "4", group="a-low"),
               pod_group("b-high", priority_class="high"), pod("b-high", "4", group="b-high")]
    assert binds(objects) == {"ns/b-high": "a"}
    assert binds(objects, priority_class=False) == {"ns/a-low": "a"}  # equal priority: creation, then UID


# -- the command line -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sampled") / "c.yaml"
    path.write_text(as_yaml(sampled_cluster(120, idle=110)))  # samples 100 nodes: n000..n099
    return str(path)


def test_run_flags_change_the_decision(cli, cluster_file):
    plain = cli("run", cluster_file, "--format", "json")
    full = cli("run", cluster_file, "--format", "json", "--percentage-nodes-to-find", "100")
    assert json.loads(plain.out)["binds"] == {"ns/want": "n000"}
    assert json.loads(full.out)["binds"] == {"ns/want": "n110"}


@pytest.mark.parametrize("text, value", [("100", 100), ("0x12c", 300), ("0o17", 15), ("017", 15), ("-5", -5),
                                         ("+7", 7), ("1_000", 1000)])
def test_integer_flags_parse_as_pflag_does(text, value):
    assert flag_value(OPTIONS["minimum-feasible-nodes"], [text]) == value


@pytest.mark.parametrize("text", ["", "1.5", "ten", "2147483648", "0x"])
def test_integer_flags_refuse_what_pflag_refuses(text):
    with pytest.raises(OptionError):
        flag_value(OPTIONS["minimum-feasible-nodes"], [text])


def test_run_flag_errors_name_their_column(cli, cluster_file):
    typo = cli("run", cluster_file, "--percentage-node-to-find", "100")
    assert typo.code == 2
    col = len(f"fumarole run {cluster_file} ") + 1
    assert typo.err.splitlines()[0] == f"command line:1:{col}: error[O001]: unknown option --percentage-node-to-find"
    assert "hint: did you mean '--percentage-nodes-to-find'?" in typo.err
    bad = cli("run", cluster_file, "--format", "json", "--percentage-nodes-to-find", "all")
    assert bad.code == 2
    col = len(f"fumarole run {cluster_file} --format json ") + 1
    assert bad.err.splitlines()[0] == \
        f"command line:1:{col}: error[O002]: --percentage-nodes-to-find takes a 32-bit integer, not 'all'"
    unmodelled = cli("run", cluster_file, "--schedule-period=2s")
    assert unmodelled.code == 2 and "error[O003]: Volcano's --schedule-period is not modelled" in unmodelled.err
    selector = cli("run", cluster_file, "--node-selector", "role")
    assert selector.code == 2 and "error[O002]: node-selector entry 'role' is not name:value" in selector.err
    assert "Traceback" not in typo.err + bad.err + unmodelled.err + selector.err


# -- bundle manifests -------------------------------------------------------------------------------

MANIFEST = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: sampled}
actions: [enqueue, allocate, backfill]
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
schedulerOptions:
  percentage-nodes-to-find: 100
  node-selector: [kubernetes.io/os:linux]
"""


def test_bundle_manifest_options_are_the_sessions_defaults_and_flags_override_them(cli, tmp_path, cluster_file):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "bundle.yaml").write_text(MANIFEST.split("schedulerOptions:")[0])
    (tmp_path / "bundle.yaml").write_text(MANIFEST.replace("  node-selector: [kubernetes.io/os:linux]\n", ""))
    bundle = load_bundle_dir(tmp_path)
    assert bundle.scheduler_options.percentage_nodes_to_find == 100
    assert bundle.digest != load_bundle_dir(tmp_path / "plain").digest  # options change decisions
    out = cli("run", cluster_file, "--bundle", str(tmp_path), "--format", "json")
    assert json.loads(out.out)["binds"] == {"ns/want": "n110"}
    out = cli("run", cluster_file, "--bundle", str(tmp_path), "--format", "json", "--percentage-nodes-to-find", "0")
    assert json.loads(out.out)["binds"] == {"ns/want": "n000"}


def test_bundle_manifest_option_errors_have_positions(cli, tmp_path):
    (tmp_path / "bundle.yaml").write_text(MANIFEST.replace("percentage-nodes-to-find: 100",
                                                           "percentage-node-to-find: 100"))
    result = cli("run", "-", "--bundle", str(tmp_path))
    assert result.code == 2
    assert "bundle.yaml:9:3: error[B001]: unknown key 'percentage-node-to-find' at schedulerOptions" in result.err
    assert "did you mean 'percentage-nodes-to-find'?" in result.err
    (tmp_path / "bundle.yaml").write_text(MANIFEST.replace("kubernetes.io/os:linux", "a:b, linux"))
    result = cli("run", "-", "--bundle", str(tmp_path))
    assert result.code == 2
    assert "bundle.yaml:10:24: error[O002]: node-selector entry 'linux' is not name:value" in result.err
