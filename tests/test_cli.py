"""The command line: decisions on the shipped examples, and one clear error (exit 2) for bad input."""

from __future__ import annotations

import json

import pytest
import yaml

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '2', memory: 1Gi, pods: '10'}\n"


def test_run_example_table(cli, root):
    result = cli("run", str(root / "examples/cluster.yaml"))
    assert result.code == 0, result.err
    assert "ml/train-master-0  node-a" in result.out
    assert "batch/huge     default  Pending" in result.out


def test_run_example_json_is_an_expect_block(cli, root):
    result = cli("run", str(root / "examples/cluster.yaml"), "--format", "json")
    decisions = json.loads(result.out)
    assert set(decisions) == {"binds", "evicted", "pipelined", "podGroupPhase", "taskStatusCount"}
    assert decisions["binds"]["ml/train-worker-1"] == "node-b"
    assert decisions["podGroupPhase"]["batch/huge"] == "Pending"


def test_run_two_queue_example_reclaims(cli, root):
    result = cli("run", str(root / "examples/two-queues/cluster.yaml"), "--config",
                 str(root / "examples/two-queues/volcano-scheduler.conf"), "--format", "json")
    decisions = json.loads(result.out)
    assert sorted(decisions["evicted"]) == ["research/sweep-1", "research/sweep-2"]
    assert decisions["pipelined"] == {"prod/serving": ["node-1"]}


def test_pasted_json_output_is_a_passing_test(cli, root, tmp_path):
    result = cli("run", str(root / "examples/cluster.yaml"), "--format", "json")
    scenario = {"name": "pasted", "cluster": str(root / "examples/cluster.yaml"),
                "scheduler": {"actions": "enqueue, allocate, backfill", "tiers": [
                    {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                    {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                                 {"name": "proportion"}, {"name": "nodeorder"}]}]},
                "expect": json.loads(result.out)}
    path = tmp_path / "pasted.yaml"
    path.write_text(json.dumps(scenario))
    outcome = cli("test", str(path))
    assert outcome.code == 0 and outcome.out.strip() == "1 passed, 0 failed"


@pytest.mark.parametrize("text, code, where, message", [
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n1\nstatus: {}\n", "K001", ":4:7:", "malformed YAML"),
    ("apiVersion: v1\nkind: Nod\nmetadata: {name: n1}\n", "K002", ":2:7:", "unknown kind 'Nod'"),
    (NODE.replace("'2'", "'2x'"), "K003", ":5:22:", "'2x' is not a Kubernetes quantity"),
    (NODE.replace("'2'", "'-2'"), "K003", ":5:22:", "negative quantity"),
    ("apiVersion: v1\nkind: Node\nmetadata: {labels: {}}\n", "K004", ":3:11:", "Node has no metadata.name"),
    ("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: x}\n",
     "K007", ":4:19:", "spec.minMember of PodGroup pg must be an integer, not 'x'"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: '2026-13-45T00:00:00Z'}\n",
     "K007", ":3:40:", "metadata.creationTimestamp of Pod p must be an RFC 3339 time"),
])
def test_bad_cluster_input(cli, tmp_path, text, code, where, message):
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = cli("run", str(path))
    assert result.code == 2
    assert f"cluster.yaml{where} error[{code}]" in result.err and message in result.err
    assert "Traceback" not in result.err and result.out == ""


def test_bad_configuration_reports_every_problem(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(NODE)
    conf = tmp_path / "bad.conf"
    conf.write_text('actions: "enqueue, alocate"\ntiers:\n- plugins:\n  - name: priorty\n'
                    '  - name: binpack\n    arguments: {binpack.weight: "ten"}\n')
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 2
    assert "bad.conf:1:10: error[C020]: unknown action 'alocate'" in result.err
    assert "hint: did you mean 'allocate'?" in result.err
    assert "bad.conf:4:5: error[C021]: unknown plugin 'priorty'" in result.err
    assert "bad.conf:6:33: warning[C012]: argument 'binpack.weight' of plugin 'binpack' must be an int, not " \
           "'ten'; the default 1 is used" in result.err


def test_misspelt_switch(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(NODE)
    conf = tmp_path / "bad.conf"
    conf.write_text('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    enabledReclaimable: true\n')
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 2
    assert "bad.conf:5:5: error[C004]: unknown plugin switch 'enabledReclaimable'" in result.err
    assert "did you mean 'enableReclaimable'?" in result.err


def test_bundle_with_policy_error_is_never_activated(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(NODE)
    bundle = tmp_path / "b"
    (bundle / "plugins").mkdir(parents=True)
    (bundle / "bundle.yaml").write_text("apiVersion: fumarole/v1\nkind: PolicyBundle\nmetadata: {name: b}\n"
                                        "sources: [plugins/*.policy]\nactions: [allocate]\n"
                                        "tiers:\n- plugins: [{name: x}]\n")
    (bundle / "plugins/x.policy").write_text("plugin x\n\non overused(queue) = queue.reclaimble\n")
    result = cli("run", str(cluster), "--bundle", str(bundle))
    assert result.code == 2
    assert "x.policy:3:28: error[E101]: unknown attribute 'reclaimble' of Queue" in result.err
    assert "did you mean 'reclaimable'?" in result.err and "Traceback" not in result.err


def test_missing_file(cli, tmp_path):
    result = cli("run", str(tmp_path / "nope.yaml"))
    assert result.code == 2 and "cannot read" in result.err


def test_test_command_counts_and_exit_code(cli, tmp_path, root):
    good = root / "tests/conformance/cases/backfill"
    bad = tmp_path / "bad.yaml"
    bad.write_text((root / "tests/conformance/cases/allocate/TestAllocate-004-two-jobs-on-one-node.yaml")
                   .read_text().replace("c1/pg1-p-1: n1", "c1/pg1-p-1: n9"))
    result = cli("test", str(good), str(bad))
    lines = result.out.strip().splitlines()
    assert result.code == 1
    assert lines[-1] == f"{len(list(good.glob('*.yaml')))} passed, 1 failed"
    assert lines[0].startswith("FAIL allocate/TestAllocate-004") and "binds: expected" in lines[0]


def test_a_case_that_cannot_load_is_reported_and_is_bad_input(cli, tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text("name: x\nscheduler: {actions: 'nosuch', tiers: []}\nobjects: []\nexpect: {}\n")
    result = cli("test", str(case))
    assert result.code == 2
    assert f"{case}:2:22: error[C020]: unknown action 'nosuch'" in result.out
    assert result.out.strip().endswith("0 passed, 1 failed")


def test_an_empty_scenario_file_is_bad_input_not_a_failing_case(cli, tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    result = cli("test", str(tmp_path / "empty.yaml"))
    assert result.code == 2 and "error[S002]: a scenario must be a mapping" in result.out


def test_a_failing_case_beside_a_bad_file_still_exits_2(cli, tmp_path, root):
    (tmp_path / "empty.yaml").write_text("")
    result = cli("test", str(tmp_path / "empty.yaml"), str(root / "examples" / "site-min-runtime" / "tests"))
    assert result.code == 2


def test_version_command_and_flag(cli):
    from fumarole.runtime.authoring.reporting import tool_version

    assert cli("version").out.strip().startswith(f"fumarole {tool_version()} (Python ")
    assert json.loads(cli("version", "-o", "json").out)["fumarole"] == tool_version()
    flag = cli("--version")
    assert flag.code == 0 and flag.out.strip() == f"fumarole {tool_version()}"


def test_now_must_be_an_rfc3339_time(cli, root):
    result = cli("run", str(root / "examples" / "cluster.yaml"), "--now", "yesterday")
    assert result.code == 2 and "argument --now: not an RFC 3339 time: 'yesterday'" in result.err


def test_run_output_formats_agree(cli, root):
    cluster = str(root / "examples" / "cluster.yaml")
    as_json = json.loads(cli("run", cluster, "-o", "json").out)
    assert yaml.safe_load(cli("run", cluster, "--output", "yaml").out) == as_json
    assert json.loads(cli("run", cluster, "--format", "json").out) == as_json
    assert cli("run", cluster, "-o", "text").out == cli("run", cluster).out


def test_run_takes_a_bundle_archive_verified_as_serve_does(cli, root, tmp_path):
    archive = tmp_path / "site.tar.gz"
    assert cli("bundle", "build", str(root / "examples" / "site-min-runtime"), "--out", str(archive)).code == 0
    cluster = str(root / "examples" / "two-queues" / "cluster.yaml")
    from_folder = cli("run", cluster, "--bundle", str(root / "examples" / "site-min-runtime"), "-o", "json")
    from_archive = cli("run", cluster, "--bundle", str(archive), "-o", "json")
    assert from_archive.code == 0 and json.loads(from_archive.out) == json.loads(from_folder.out)
    archive.write_bytes(archive.read_bytes()[:-20])
    broken = cli("run", cluster, "--bundle", str(archive))
    assert broken.code == 2 and "error[A0" in broken.err


def test_errors_about_a_path_name_the_path_without_a_position(cli, tmp_path):
    missing = tmp_path / "nothere.yaml"
    result = cli("run", str(missing))
    assert result.code == 2
    assert result.err.startswith(f"{missing}: error[F001]: cannot read {missing}: No such file or directory")


def test_test_command_skips_cluster_dumps_and_manifests_in_folders(cli, root):
    result = cli("test", str(root / "examples"))
    assert result.code == 0, result.out
    assert "cluster" not in result.out and result.out.strip().endswith(" passed, 0 failed")


def test_every_volcano_plugin_runs_the_extender_included(cli, tmp_path, root):
    """The last Volcano plugin fumarole lacked was the extender: a configuration naming it (with no
    verb it asks nothing) runs like Volcano's, where it was C021."""
    conf = tmp_path / "v.conf"
    conf.write_text('actions: "enqueue, allocate, gangpreempt"\ntiers:\n- plugins:\n  - name: gang\n  - name: extender\n')
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf))
    assert result.code == 0, result.err


GANG_CONF = """actions: "enqueue, allocate, gangpreempt, gangreclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
configurations:
- name: gangpreempt
  arguments:
    allowWholeBundle: false
    maxDomains: 4
- name: gangreclaim
  arguments:
    allowWholeBundle: {whole}
"""


def test_check_accepts_the_gang_actions_and_their_arguments(cli, tmp_path, root):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(GANG_CONF.format(whole="true"))
    assert cli("check", str(conf)).code == 0
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf))
    assert result.code == 0, result.err


def test_gang_action_argument_of_the_wrong_type_warns_at_its_place_and_keeps_the_default(cli, tmp_path, root):
    """Volcano's GetBool logs 'maybe' and keeps allowWholeBundle's default (true): a warning, and
    the same decisions as a configuration that sets the default."""
    conf, default = tmp_path / "volcano-scheduler.conf", tmp_path / "default.conf"
    conf.write_text(GANG_CONF.format(whole="maybe"))
    default.write_text(GANG_CONF.format(whole="true"))
    result = cli("check", str(conf))
    assert result.code == 0
    assert ("volcano-scheduler.conf:18:23: warning[C012]: argument 'allowWholeBundle' of action 'gangreclaim' "
            "must be a bool, not 'maybe'; the default true is used") in result.out
    assert cli("check", "--strict", str(conf)).code == 1
    run = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert run.code == 0 and "warning[C012]" in run.err
    assert run.out == cli("run", str(root / "examples/cluster.yaml"), "--config", str(default), "-o", "json").out
