"""What an admitted job books in its queue (lib/quota.policy `inqueue_part`, Volcano's
GetInqueueResource): beyond cpu, memory and pods only scalar resource names, so an Inqueue job's
ephemeral-storage minimum is not booked while an extended resource's is.  Seen through the enqueue
of a second job under each quota plugin that books it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

CAPACITY = {"cpu": "16", "memory": "16Gi", "ephemeral-storage": "10Gi", "example.com/foo": "10"}


def scenario(plugin: str, resource: str) -> dict:
    """pg-a is Inqueue with 8 of `resource` in its minResources and nothing allocated; pg-b asks 4."""
    def group(name: str, phase: str, amount: str) -> dict:
        return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"queue": "q1", "minMember": 1, "minResources": {"cpu": "1", resource: amount}},
                "status": {"phase": phase}}

    def pod(name: str, group_name: str, amount: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "ns",
                             "annotations": {"scheduling.k8s.io/group-name": group_name}},
                "spec": {"containers": [{"resources": {"requests": {"cpu": "1", resource: amount}}}]},
                "status": {"phase": "Pending"}}

    amounts = ("8Gi", "4Gi") if resource == "ephemeral-storage" else ("8", "4")
    node_resources = {"cpu": "16", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi",
                      "example.com/foo": "100"}
    return {
        "name": f"{plugin}-{resource}",
        "scheduler": {"actions": "enqueue", "tiers": [{"plugins": [{"name": plugin}]}]},
        "objects": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": node_resources, "capacity": node_resources}},
            pod("a-0", "pg-a", amounts[0]), pod("b-0", "pg-b", amounts[1]),
            group("pg-a", "Inqueue", amounts[0]), group("pg-b", "Pending", amounts[1]),
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
             "spec": {"weight": 1, "capability": CAPACITY}, "status": {"state": "Open"}},
        ],
        # 8 booked + 4 asked exceeds the capability of 10; 4 alone does not.
        "expect": {"podGroupPhase": {"ns/pg-b": "Inqueue" if resource == "ephemeral-storage" else "Pending"}},
    }


@pytest.mark.parametrize("plugin", ["proportion", "capacity"])
@pytest.mark.parametrize("resource", ["ephemeral-storage", "example.com/foo"])
def test_an_inqueue_job_books_scalar_resources_only(cli, tmp_path: Path, plugin: str, resource: str):
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump(scenario(plugin, resource)))
    result = cli("test", str(case))
    assert result.code == 0, result.out + result.err
