"""Cluster input is as strict as the API server where the API server is strict: an empty input and a
pod without containers are errors (exit 2) with the place and a hint, never a silent session."""

from __future__ import annotations

import pytest

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}
---
"""


@pytest.mark.parametrize("text", ["", "# nothing here yet\n", "---\n---\n", "apiVersion: v1\nkind: List\nitems: []\n",
                                  '{"apiVersion": "v1", "kind": "List", "items": []}'])
def test_a_cluster_with_no_object_is_refused(cli, tmp_path, text):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(text)
    result = cli("run", str(cluster))
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == f"{cluster}: error[K008]: the cluster holds no objects"


def test_a_misspelt_containers_key_is_an_error_at_the_misspelling(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
                       "  containerz: [{name: c, resources: {requests: {cpu: '1'}}}]\nstatus: {phase: Pending}\n")
    result = cli("run", str(cluster))
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.splitlines()[0] == (f"{cluster}:10:3: error[K004]: Pod ml/p has no spec.containers: "
                                          "Kubernetes requires at least one container")
    assert "hint: did you mean 'containers' for 'containerz'?" in result.err


@pytest.mark.parametrize("spec, where, message", [
    ("spec: {containers: []}", "9:20", "spec.containers of Pod default/p is empty: Kubernetes requires at "
                                       "least one container"),
    ("spec: {nodeName: n1}", "9:7", "Pod default/p has no spec.containers: Kubernetes requires at least one "
                                    "container"),
])
def test_a_pod_without_a_container_is_an_error(cli, tmp_path, spec, where, message):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE + f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\n{spec}\nstatus: {{phase: Running}}\n")
    result = cli("run", str(cluster))
    assert result.code == 2
    assert result.err.splitlines()[0] == f"{cluster}:{where}: error[K004]: {message}"


def test_check_reports_it_too(cli, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n")
    result = cli("check", str(cluster))
    assert result.code == 1 and "error[K004]: spec.containers of Pod default/p is empty" in result.out
