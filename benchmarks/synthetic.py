"""Synthetic clusters for benchmarks: nodes, queues, and gang jobs, some already running.

Deterministic for a given size and seed, so figures are comparable between runs.
"""

from __future__ import annotations

import random

SIZES = {
    "S": {"nodes": 100, "jobs": 100, "pods_per_job": 10, "queues": 10},
    "M": {"nodes": 1000, "jobs": 1000, "pods_per_job": 10, "queues": 10},
}


def cluster_objects(size: str, seed: int = 7, running_fraction: float = 0.4) -> list[dict]:
    spec = SIZES[size]
    rng = random.Random(seed)
    objects: list[dict] = []
    for i in range(spec["nodes"]):
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": f"node-{i:04d}", "labels": {"kubernetes.io/hostname": f"node-{i:04d}",
                                                                         "zone": f"z{i % 3}"}},
                        "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                                   "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}})
    for q in range(spec["queues"]):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                        "metadata": {"name": f"queue-{q}"}, "spec": {"weight": 1 + q % 3, "reclaimable": True},
                        "status": {"state": "Open"}})
    node = 0
    for j in range(spec["jobs"]):
        ns, name = f"team-{j % 20}", f"job-{j:05d}"
        running = rng.random() < running_fraction
        cpu = rng.choice([1, 2, 4])
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"queue": f"queue-{j % spec['queues']}", "minMember": spec["pods_per_job"],
                                 "minResources": {"cpu": str(cpu * spec["pods_per_job"]),
                                                  "memory": f"{2 * spec['pods_per_job']}Gi"}},
                        "status": {"phase": "Running" if running else "Pending"}})
        for p in range(spec["pods_per_job"]):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"{name}-{p}", "namespace": ns, "uid": f"{ns}-{name}-{p}",
                                "annotations": {"scheduling.k8s.io/group-name": name}},
                   "spec": {"containers": [{"name": "main", "image": "work:1",
                                            "resources": {"requests": {"cpu": str(cpu), "memory": "2Gi"}}}]},
                   "status": {"phase": "Pending"}}
            if running:
                pod["spec"]["nodeName"] = f"node-{node % spec['nodes']:04d}"
                pod["status"]["phase"] = "Running"
                node += 1
            objects.append(pod)
    return objects
