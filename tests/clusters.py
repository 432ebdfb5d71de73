"""The smallest cluster a session decides something on, built by hand once for every test.

One 4-CPU node n1, queues, and one pending 1-CPU pod ns/p1 whose PodGroup ns/pg1 (inqueue,
minimum 1) is in a queue the test names.  Each builder returns the plain Kubernetes objects
(dicts) a cluster file or a session body holds, in the order they are written there, so the
positions a test pins do not move.
"""

from __future__ import annotations

VOLCANO = "scheduling.volcano.sh/v1beta1"

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}}}
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"uid": "ns-p1", "namespace": "ns", "name": "p1",
                    "annotations": {"scheduling.k8s.io/group-name": "pg1"}},
       "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
       "status": {"phase": "Pending"}}


def queue(name: str = "default", parent: str = "") -> dict:
    """An open queue of weight 1 (under ``parent`` in a hierarchy)."""
    spec = {"weight": 1, **({"parent": parent} if parent else {})}
    return {"apiVersion": VOLCANO, "kind": "Queue", "metadata": {"name": name}, "spec": spec,
            "status": {"state": "Open"}}


def pod_group(queue_name: str) -> dict:
    """POD's PodGroup ns/pg1, inqueue in ``queue_name``."""
    return {"apiVersion": VOLCANO, "kind": "PodGroup", "metadata": {"namespace": "ns", "name": "pg1"},
            "spec": {"queue": queue_name, "minMember": 1}, "status": {"phase": "Inqueue"}}


def small_cluster(queues: list[dict], group_queue: str) -> list[dict]:
    """NODE, the queues, POD's PodGroup in ``group_queue``, POD."""
    return [NODE, *queues, pod_group(group_queue), POD]
