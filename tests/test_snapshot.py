"""`fumarole snapshot` and `run --kubeconfig` against a loopback server answering the API's list endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from loopback_api import CONFIGMAP, JsonHandler, loopback_server, write_kubeconfig

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-queues"
PATHS = {  # list endpoint -> kind
    "/api/v1/nodes": "Node",
    "/api/v1/pods": "Pod",
    "/apis/scheduling.k8s.io/v1/priorityclasses": "PriorityClass",
    "/apis/scheduling.volcano.sh/v1beta1/queues": "Queue",
    "/apis/scheduling.volcano.sh/v1beta1/podgroups": "PodGroup",
    "/api/v1/resourcequotas": "ResourceQuota",
    "/apis/policy/v1/poddisruptionbudgets": "PodDisruptionBudget",
    "/apis/nodeinfo.volcano.sh/v1alpha1/numatopologies": "Numatopology",
    "/apis/shard.volcano.sh/v1alpha1/nodeshards": "NodeShard",
}


# What the example lacks and the pdb, resourcequota and numa-aware plugins read from a live cluster.
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team-a", "namespace": "team-a"},
         "spec": {"hard": {"pods": "10"}}, "status": {"hard": {"pods": "10"}, "used": {"pods": "3"}}}
BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "team-a"},
          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
          "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}

NUMA = {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": "node-1"},
        "spec": {"policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "best-effort"},
                 "numares": {"cpu": {"allocatable": "0-3", "capacity": 4}},
                 "cpuDetail": {str(i): {"numa": 0, "socket": 0, "core": i // 2} for i in range(4)}}}


SHARD = {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": "volcano"},
         "spec": {"nodesDesired": ["node-1"]}, "status": {"nodesInUse": ["node-1"]}}


def _objects() -> list[dict]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.joinpath("cluster.yaml").read_text()) if d]
    return [item for d in docs for item in (d["items"] if d.get("kind") == "List" else [d])] + [QUOTA, BUDGET, NUMA, SHARD]


class _Api(JsonHandler):
    """Answers as the API server does: list responses without apiVersion/kind on their items."""

    requests: list[tuple[str, str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?")[0]
        self.requests.append(("GET", path, self.headers.get("Authorization", "")))
        if path in PATHS:
            items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
                     for o in _objects() if o["kind"] == PATHS[path]]
            self.send_json(200, {"kind": f"{PATHS[path]}List", "apiVersion": "v1", "metadata": {}, "items": items})
        elif path == CONFIGMAP:
            self.send_json(200, {"kind": "ConfigMap", "apiVersion": "v1",
                             "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                             "data": {"volcano-scheduler.conf": EXAMPLE.joinpath("volcano-scheduler.conf").read_text()}})
        else:  # e.g. the HyperNode CRD is not installed
            self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                             "code": 404})

    def _refuse(self) -> None:
        self.requests.append((self.command, self.path, ""))
        self.send_json(405, {"kind": "Status", "code": 405})

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse


@pytest.fixture
def api_server():
    _Api.requests = []
    with loopback_server(_Api) as server:
        yield server


def test_snapshot_writes_a_cluster_file_and_the_scheduler_configuration(cli, tmp_path, api_server):
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    out = tmp_path / "snap" / "cluster.yaml"
    out.parent.mkdir()
    result = cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out))
    assert result.code == 0, result.err
    dumped = yaml.safe_load(out.read_text())
    assert dumped["kind"] == "List"
    kinds = sorted({(o["apiVersion"], o["kind"]) for o in dumped["items"]})
    assert kinds == sorted({(o["apiVersion"], o["kind"]) for o in _objects()})
    assert (out.parent / "volcano-scheduler.conf").read_text() == EXAMPLE.joinpath("volcano-scheduler.conf").read_text()
    assert {method for method, _, _ in _Api.requests} == {"GET"}
    assert all(auth == "Bearer s3cret" for _, _, auth in _Api.requests)


def test_run_on_the_live_cluster_decides_as_on_its_dump(cli, tmp_path, api_server):
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    live = cli("run", "--kubeconfig", str(kubeconfig), "--now", "2026-11-21T12:30:00Z", "-o", "json")
    assert live.code == 0, live.err
    dump = cli("run", str(EXAMPLE / "cluster.yaml"), "--config", str(EXAMPLE / "volcano-scheduler.conf"),
               "--now", "2026-11-21T12:30:00Z", "-o", "json")
    assert json.loads(live.out) == json.loads(dump.out)
    assert json.loads(live.out)["evicted"]  # the cluster's own configuration (with reclaim) was used


def test_an_unreachable_cluster_or_a_missing_context_is_f005(cli, tmp_path):
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", 9)  # nothing listens on port 9 of the loopback
    unreachable = cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert unreachable.code == 2 and f"{kubeconfig}: error[F005]: cannot reach the API server" in unreachable.err
    no_context = cli("run", "--kubeconfig", str(kubeconfig), "--context", "nosuch")
    assert no_context.code == 2 and "error[F005]: cannot use the kubeconfig" in no_context.err


def test_snapshot_keeps_resource_quotas_with_their_status_and_disruption_budgets(cli, tmp_path, api_server):
    """The resourcequota plugin reads a quota's status.hard and used, the pdb plugin the budgets:
    a dump without them decided otherwise than the live cluster would."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    out = tmp_path / "cluster.yaml"
    assert cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out)).code == 0
    dumped = yaml.safe_load(out.read_text())["items"]
    assert [o for o in dumped if o["kind"] in ("ResourceQuota", "PodDisruptionBudget")] == [QUOTA, BUDGET]
    asked = [path for _, path, _ in _Api.requests]
    assert "/api/v1/resourcequotas" in asked and "/apis/policy/v1/poddisruptionbudgets" in asked
    from fumarole.runtime.ingest.kube import load_cluster
    cluster = load_cluster(out.read_text(), str(out))
    assert cluster.resource_quotas == (QUOTA,) and cluster.disruption_budgets == (BUDGET,)


def test_snapshot_keeps_the_numatopologies(cli, tmp_path, api_server):
    """numa-aware reads each node's Numatopology: a dump without them would place pods on CPUs the
    live cluster does not have free."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    out = tmp_path / "cluster.yaml"
    assert cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out)).code == 0
    dumped = yaml.safe_load(out.read_text())["items"]
    assert [o for o in dumped if o["kind"] == "Numatopology"] == [NUMA]


def test_snapshot_keeps_the_node_shards(cli, tmp_path, api_server):
    """A sharded scheduler (--scheduler-sharding-mode) schedules by its NodeShard: a dump without them
    would leave it no node in hard mode."""
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    out = tmp_path / "cluster.yaml"
    assert cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out)).code == 0
    dumped = yaml.safe_load(out.read_text())["items"]
    assert [o for o in dumped if o["kind"] == "NodeShard"] == [SHARD]
