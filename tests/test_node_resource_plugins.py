"""The node-resource plugins run from a volcano-scheduler.conf exactly as Volcano's
configuration names them, with their upstream (nested) arguments; their decisions are checked
by the scenarios under tests/conformance/cases/plugins.  Here: the configuration and its
diagnostics, the key paths the policies declare their arguments with, and the Go parsing they
rely on."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.framework.go_semantics import json_int_map

# resource-strategy-fit's arguments as its source documents them.
RSF_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu:
          type: MostAllocated
          weight: 2
        cpu:
          type: LeastAllocated
          weight: 1
      sra:
        enable: true
        resources: nvidia.com/gpu
        weight: 10
        resourceWeight:
          nvidia.com/gpu: 1
      proportional:
        enable: false
        resources: nvidia.com/gpu
        resourceProportion:
          nvidia.com/gpu.cpu: 4
          nvidia.com/gpu.memory: 8
"""


def test_a_conf_enabling_resource_strategy_fit_runs_unchanged(cli, tmp_path, root):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(RSF_CONF)
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert "binds" in json.loads(result.out)


def _run_json(cli, root, conf):
    """``fumarole run`` of the example cluster under ``conf``: it runs (warnings allowed)."""
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    return result


def test_an_unknown_nested_field_is_a_positioned_warning(cli, tmp_path, root):
    """A field no key path reads is ignored (mapstructure ignores unused keys): a positioned warning,
    and the session runs."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(RSF_CONF.replace("enable: true", "enabel: true"))
    result = _run_json(cli, root, conf)
    assert result.err.splitlines()[0] == f"{conf}:19:9: warning[C010]: plugin 'resource-strategy-fit' has no " \
                                         "argument 'sra/enabel'; it is ignored"
    assert "binds" in json.loads(result.out)
    check = cli("check", "--strict", str(conf))
    assert check.code == 1 and "did you mean 'enable'?" in check.out


def test_nested_arguments_framework_get_cannot_decode_are_positioned_errors(cli, tmp_path, root):
    """Volcano reads every resource-strategy-fit argument with framework.Get: a weight that is no number
    (``resources``' map decode fails) and a section that is not a mapping (``sra: 3``) stop the
    scheduler (klog.Fatalf), so fumarole refuses them, each once, at its place.  (They were warnings
    keeping the default; no Volcano decision exists for them.)"""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(RSF_CONF.replace("weight: 2\n", "weight: lots\n")
                    + "  - name: resource-strategy-fit\n    arguments:\n      sra: 3\n")
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err
    errors = [line for line in result.err.splitlines() if "error[" in line]
    assert errors == [
        f"{conf}:14:19: error[C012]: argument 'resources/nvidia.com/gpu/weight' of plugin 'resource-strategy-fit' "
        "must be an int, not 'lots'",
        f"{conf}:32:12: error[C012]: argument 'sra' of plugin 'resource-strategy-fit' must be a mapping, not 3"]
    assert result.err.count("hint: Volcano stops the scheduler on it") == 2


def test_struct_fields_match_in_any_case_as_go_decodes_them(cli, tmp_path, root):
    """mapstructure matches `resourceweight` to ResourceWeight: Volcano runs such a conf, so fumarole does."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(RSF_CONF.replace("resourceWeight:", "resourceweight:").replace("enable: false", "Enable: false"))
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf))
    assert result.code == 0, result.err


KEY_PATHS = """plugin paths

arg enabled: bool = false from "sra" / "enable"
arg types: map[string, string] = {} from "resources" / * / "type"
arg weights: map[string, int] = {} from "resources" / * / "weight"
arg extra: map[string, int] = {} from "sra" / "resourceWeight"

on node_order(task, node) = float(weights.get("cpu", -1) + len(types) + len(extra)) if enabled else -1.0
"""


def test_key_paths_format_and_check(cli, tmp_path):
    policy = tmp_path / "paths.policy"
    policy.write_text(KEY_PATHS.replace('"sra" / "enable"', '"sra"/"enable"'))
    assert cli("fmt", str(policy)).code == 0
    assert policy.read_text() == KEY_PATHS
    assert cli("check", "--strict", str(policy)).code == 0


def test_a_star_needs_a_map_argument(cli, tmp_path):
    policy = tmp_path / "star.policy"
    policy.write_text('plugin star\n\narg t: string = "" from "resources" / * / "type"\n\n'
                      'on node_order(task, node) = float(len(t))\n')
    result = cli("check", str(policy))
    assert result.code != 0
    assert f"{policy}:3:8: error[E140]: an argument read through `*` must have type map[string, T]" in result.out


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=5))
def test_json_weights_round_trip(weights):
    assert json_int_map(json.dumps(weights)) == weights


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_json_weights_never_raise(text):
    parsed = json_int_map(text)
    assert parsed is None or all(isinstance(v, int) for v in parsed.values())


def test_json_weights_follow_go():
    assert json_int_map('{"cpu": 2, "memory": 1}') == {"cpu": 2, "memory": 1}
    assert json_int_map("null") == {}
    assert json_int_map('{"cpu": null}') == {"cpu": 0}
    for text in ("invalid-json", '{"cpu": 1.5}', '{"cpu": 1e2}', '{"cpu": "2"}', '{"cpu": NaN}', "[1]",
                 '{"cpu": 9223372036854775808}', '{"cpu": 1} x', ""):
        assert json_int_map(text) is None, text


# usage's arguments and the scheduler's metrics block as the plugin's source documents them.
USAGE_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: usage
    enablePredicate: false
    arguments:
      usage.weight: 5
      cpu.weight: 1
      memory.weight: 1
      thresholds:
        cpu: 80
        mem: 80
      estimator:
        request_ratio: 0.7
        burst_ratio: 0
        risk_threshold: 0.6
        risk_factor: 1.2
        be_cpu: 250m
        be_mem: 200Mi
metrics:
  type: prometheus
  address: http://prometheus:9090
  interval: 30s
"""

METRICS_CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
metrics:
  time: yesterday
  cpu: {10m: high}
  memroy: {10m: 3}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: d}
spec:
  nodeName: n1
  containers:
  - resources: {requests: {cpu: "1"}, limits: {cpu: lots}}
status: {phase: Running}
"""


def test_a_conf_enabling_usage_runs_unchanged(cli, tmp_path, root):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(USAGE_CONF)
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert "binds" in json.loads(result.out)


def test_usage_weights_of_the_wrong_type_keep_their_defaults(cli, tmp_path, root):
    """usage_test.go TestUsageConfigKeepsDefaultForGenericStringValues: Volcano logs "7" and "85" and
    keeps the defaults; fumarole warns at each value and decides as with the defaults."""
    conf, default = tmp_path / "volcano-scheduler.conf", tmp_path / "default.conf"
    conf.write_text(USAGE_CONF.replace("usage.weight: 5", 'usage.weight: "7"').replace("cpu: 80", 'cpu: "85"'))
    default.write_text(USAGE_CONF)
    result = _run_json(cli, root, conf)
    assert f"{conf}:11:21: warning[C012]: argument 'usage.weight' of plugin 'usage' must be an int, not '7'; " \
           "the default 5 is used" in result.err
    assert f"{conf}:15:14: warning[C012]: argument 'thresholds/cpu' of plugin 'usage' must be an int, not '85'; " \
           "the default 80 is used" in result.err
    assert result.out == _run_json(cli, root, default).out


def test_node_metrics_that_do_not_fit_are_positioned(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(METRICS_CLUSTER)
    result = cli("run", str(cluster))
    assert result.code == 2
    assert f"{cluster}:6:9: error[K007]: metrics.time of Node n1 must be an RFC 3339 time, not 'yesterday'" in result.err
    assert f"{cluster}:7:14: error[K007]: metrics.cpu.10m of Node n1 must be a number, not 'high'" in result.err
    assert "Traceback" not in result.err
    cluster.write_text(METRICS_CLUSTER.replace("yesterday", '"2026-01-01T00:00:00Z"').replace("high", "30")
                       .replace("lots", '"2"'))
    result = cli("run", str(cluster))
    assert f"{cluster}:8:3: warning[K103]: unknown field 'metrics.memroy' in Node n1" in result.err


def test_a_limit_that_is_not_a_quantity_is_positioned(cli, tmp_path):
    """task.limit reads limits the cluster reader validated: a bad one is K003 where it is written."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(METRICS_CLUSTER.replace("yesterday", '"2026-01-01T00:00:00Z"').replace("high", "30")
                       .replace("memroy", "memory"))
    result = cli("run", str(cluster))
    assert result.code == 2
    assert f"{cluster}:16:53: error[K003]: bad quantity in Pod d/p" in result.err
