"""A node's idle / used / releasing / pipelined sums as Volcano's NodeInfo keeps them
(api/node_info_test.go TestNodeInfo_AddPod and TestNodeInfo_RemovePod, on the nodes and pods of
those tests): a task's request, a pod slot included, leaves the idle and joins the used when the
node takes it, even past the allocatable (idle turns negative), and comes back when it leaves."""

from __future__ import annotations

from clusters import queue

from fumarole.runtime.api.resource import Resource
from fumarole.runtime.bundles.bundle import default_bundle
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.ingest.kube import cluster_from_objects

G = 1e9


def _node(name: str, cpu: str, memory: str, pods: str) -> dict:
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": resources, "capacity": resources}}


def _pod(name: str, node: str, phase: str, cpu: str, memory: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "c1", "uid": f"c1-{name}"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu,
                                                                                            "memory": memory}}}]},
            "status": {"phase": phase}}


def _session_node(objects: list[dict], name: str):
    session = new_session(default_bundle(), cluster_from_objects([queue(), *objects]), now=0.0)
    open_session(session, "test")
    return next(node for node in session.node_list if node.name == name)


def _sums(resource: Resource) -> tuple[float, float, float]:
    return resource.milli_cpu, resource.memory, (resource.scalars or {}).get("pods", 0.0)


def test_add_pod_two_running_pods():
    """TestNodeInfo_AddPod "add 2 running non-owner pod"."""
    node = _session_node([_node("n1", "8000m", "10G", "20"), _pod("p1", "n1", "Running", "1000m", "1G"),
                          _pod("p2", "n1", "Running", "2000m", "2G")], "n1")
    assert _sums(node.idle) == (5000, 7 * G, 18)
    assert _sums(node.used) == (3000, 3 * G, 2)
    assert _sums(node.releasing) == _sums(node.pipelined) == (0, 0, 0)
    assert _sums(node.allocatable) == (8000, 10 * G, 20)
    assert sorted(node.tasks) == ["c1/p1", "c1/p2"]


def test_add_pod_unknown_pod_past_the_idle_memory():
    """TestNodeInfo_AddPod "add 1 unknown pod and pod memory req > idle": taken, idle memory negative."""
    node = _session_node([_node("n2", "2000m", "1G", "20"), _pod("p1", "n2", "Unknown", "1000m", "2G")], "n2")
    assert _sums(node.idle) == (1000, -1 * G, 19)
    assert _sums(node.used) == (1000, 2 * G, 1)


def test_remove_pod_gives_its_request_back():
    """TestNodeInfo_RemovePod "add 3 running non-owner pod, remove 1 running non-owner pod"."""
    node = _session_node([_node("n1", "8000m", "10G", "10"), _pod("p1", "n1", "Running", "1000m", "1G"),
                          _pod("p2", "n1", "Running", "2000m", "2G"), _pod("p3", "n1", "Running", "3000m", "3G")],
                         "n1")
    node.remove_task(node.tasks["c1/p2"])
    assert _sums(node.idle) == (4000, 6 * G, 8)
    assert _sums(node.used) == (4000, 4 * G, 2)
    assert sorted(node.tasks) == ["c1/p1", "c1/p3"]
