"""Clusters for the scheduler-option and process-state tests.

A *sampled* cluster has ``size`` nodes of 4 CPUs, each half used, except one
idle node: every node is feasible for a 1-CPU pod, and nodeorder's
least-requested score prefers the idle one.  Above 100 nodes Volcano stops
its node scan once it has found its sample of feasible nodes, so whether the
idle node is seen depends on the sampling options and on where the scan
starts.
"""

from __future__ import annotations

import yaml

from clusters import queue


def node(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str, node_name: str = "", group: str = "", scheduler: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if scheduler:
        spec["schedulerName"] = scheduler
    meta: dict = {"name": name, "namespace": "ns", "uid": f"ns-{name}"}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running" if node_name else "Pending"}}


def pod_group(name: str, queue_name: str | None = "default", priority_class: str = "") -> dict:
    spec: dict = {"minMember": 1}
    if queue_name is not None:
        spec["queue"] = queue_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ns"}, "spec": spec, "status": {"phase": "Inqueue"}}


def sampled_cluster(size: int = 300, idle: int = 250, pending: tuple[str, ...] = ("want",)) -> list[dict]:
    """``size`` half-used nodes n000..., node ``idle`` empty, and one 1-CPU pending job per name."""
    objects = [queue()]
    for i in range(size):
        objects.append(node(f"n{i:03d}"))
        if i != idle:
            objects.append(pod(f"busy-{i:03d}", "2", node_name=f"n{i:03d}"))
    for name in pending:
        objects += [pod_group(name), pod(name, "1", group=name)]
    return objects


def as_yaml(objects: list[dict]) -> str:
    return yaml.dump_all(objects, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
