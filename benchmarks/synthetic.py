"""Synthetic clusters for benchmarks: nodes, queues, and gang jobs, some already running.

Two shapes: `roomy` (32-CPU nodes, 40 % of the jobs running, spread over every
queue) gives allocate a lot of placing to do; `congested` (16-CPU nodes, 60 %
of the jobs running, all in three queues) leaves the other queues starving, so
reclaim has work.  Deterministic for a given size, shape and seed, so figures
are comparable between runs.
"""

from __future__ import annotations

import random

SHAPES = {
    "roomy": {"node_cpu": 32, "running_fraction": 0.4, "running_queues": None},
    "congested": {"node_cpu": 16, "running_fraction": 0.6, "running_queues": 3},
}
SIZES = {
    "S": {"nodes": 100, "jobs": 100, "pods_per_job": 10, "queues": 10},
    "M": {"nodes": 1000, "jobs": 1000, "pods_per_job": 10, "queues": 10},
    "L": {"nodes": 5000, "jobs": 5000, "pods_per_job": 10, "queues": 100},
    # M's pods on twice the nodes: how the session grows with the cluster at a fixed workload.
    "M2": {"nodes": 2000, "jobs": 1000, "pods_per_job": 10, "queues": 10},
    # The extra-large cluster: a whole run has to stay well under 2 GB.
    "XL": {"nodes": 10000, "jobs": 10000, "pods_per_job": 10, "queues": 100},
}


def cluster_objects(size: str, shape: str = "roomy", seed: int = 7) -> list[dict]:
    spec, form = SIZES[size], SHAPES[shape]
    cpu_per_node, memory_per_node = str(form["node_cpu"]), f"{form['node_cpu'] * 4}Gi"
    rng = random.Random(seed)
    objects: list[dict] = []
    for i in range(spec["nodes"]):
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": f"node-{i:04d}", "labels": {"kubernetes.io/hostname": f"node-{i:04d}",
                                                                         "zone": f"z{i % 3}"}},
                        "status": {"allocatable": {"cpu": cpu_per_node, "memory": memory_per_node, "pods": "110"},
                                   "capacity": {"cpu": cpu_per_node, "memory": memory_per_node, "pods": "110"}}})
    for q in range(spec["queues"]):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                        "metadata": {"name": f"queue-{q}"}, "spec": {"weight": 1 + q % 3, "reclaimable": True},
                        "status": {"state": "Open"}})
    node = 0
    for j in range(spec["jobs"]):
        ns, name = f"team-{j % 20}", f"job-{j:05d}"
        running = rng.random() < form["running_fraction"]
        queues = form["running_queues"] if running and form["running_queues"] else spec["queues"]
        cpu = rng.choice([1, 2, 4])
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"queue": f"queue-{j % queues}",
                                 "minMember": spec["pods_per_job"],
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


def main() -> None:
    """`python benchmarks/synthetic.py S M L --out /work/bench`: write each size as SIZE.json (a List)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("sizes", nargs="+", choices=sorted(SIZES))
    parser.add_argument("--shape", default="roomy", choices=sorted(SHAPES))
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for size in args.sizes:
        path = args.out / f"{size}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects(size, args.shape)}))
        print(path)


if __name__ == "__main__":
    main()
