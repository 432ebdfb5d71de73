"""Misspelt fields of the objects fumarole reads: a warning at the field (K103), an error under check --strict."""

from __future__ import annotations

import json

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatabel: {cpu: '4', memory: 4Gi, pods: '10'}
"""
POD = """---
apiVersion: v1
kind: Pod
metadata:
  name: p1
  namespce: ml
spec:
  containers:
  - name: c
    resources: {requets: {cpu: '1'}}
status: {phase: Pending}
"""


def test_run_warns_at_each_misspelt_field_and_still_decides(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE + POD)
    result = cli("run", str(cluster), "-o", "json")
    assert result.code == 0 and json.loads(result.out)["binds"] == {}
    warnings = [line for line in result.err.splitlines() if "[K103]" in line]
    assert warnings == [
        f"{cluster}:5:3: warning[K103]: unknown field 'status.allocatabel' in Node n1: fumarole ignores it",
        f"{cluster}:11:3: warning[K103]: unknown field 'metadata.namespce' in Pod p1: fumarole ignores it",
        f"{cluster}:15:17: warning[K103]: unknown field 'spec.containers.resources.requets' in Pod p1: "
        "fumarole ignores it",
    ]


def test_check_hints_the_right_name_and_strict_makes_it_an_error(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(POD)
    relaxed = cli("check", "-o", "json", str(cluster))
    found = [d for d in json.loads(relaxed.out)["diagnostics"] if d["code"] == "K103"]
    assert relaxed.code == 0
    assert [(d["line"], d["column"], d["severity"], d["hint"]) for d in found] == [
        (6, 3, "warning", "did you mean 'namespace'?"), (10, 17, "warning", "did you mean 'requests'?")]
    strict = cli("check", "--strict", str(cluster))
    assert strict.code == 1 and "error[K103]: unknown field 'metadata.namespce'" in strict.out


def test_fields_of_the_api_are_not_reported(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE.replace("allocatabel", "allocatable") + POD.replace("namespce", "namespace")
                       .replace("requets", "requests").replace("status: {phase: Pending}",
                       "  serviceAccountName: x\n  volumes: []\nstatus: {phase: Pending, qosClass: Burstable}"))
    result = cli("check", "--strict", str(cluster))
    assert "K103" not in result.out, result.out


QUEUE = """apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: dev}
spec: {weight: 1, preemptable: false, wieght: 2}
"""


def test_an_extra_queue_spec_field_is_told_apart_from_a_misspelling(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(QUEUE)
    result = cli("check", "--strict", str(cluster))
    assert result.code == 1
    assert (f"{cluster}:4:19: warning[K105]: field 'spec.preemptable' of Queue dev is not in Volcano's Queue "
            "API: Volcano's plugins ignore it, a policy reads it as queue.spec['preemptable']") in result.out
    assert f"{cluster}:4:39: error[K103]: unknown field 'spec.wieght' in Queue dev: fumarole ignores it" in result.out


def test_a_queue_spec_field_a_checked_policy_reads_is_not_reported(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(QUEUE.replace(", wieght: 2", ""))
    policy = tmp_path / "mark.policy"
    policy.write_text('plugin mark\n\non preempt_candidate(preemptor, task) = '
                      'task.queue.spec.get("preemptable", "") != "false"\n')
    alone = cli("check", "--strict", str(cluster))
    assert alone.code == 0 and "K105" in alone.out
    together = cli("check", "--strict", str(cluster), str(policy))
    assert together.code == 0 and "K105" not in together.out, together.out
