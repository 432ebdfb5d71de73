"""Synthetic clusters for benchmarks: nodes, queues, and gang jobs, some already running.

Three shapes: `roomy` (32-CPU nodes, 40 % of the jobs running, spread over every
queue) gives allocate a lot of placing to do; `congested` (16-CPU nodes, 60 %
of the jobs running, all in three queues) leaves the other queues starving, so
reclaim has work; `gpu` is `roomy` on GPU nodes: each node has 8 shareable
cards of 16,000 MiB (deviceshare's ``volcano.sh/gpu-memory`` / ``gpu-number``)
and a Numatopology (two NUMA nodes of 16 CPUs, static CPU manager,
best-effort), a third of the jobs ask for GPU memory (4,000 or 8,000 MiB a
pod), a tenth for a whole card, and one in twenty are Guaranteed pods asking
for best-effort NUMA placement (numa-aware).  Deterministic for a given size, shape and seed, so figures
are comparable between runs.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

if not __package__:  # run as a script: `python benchmarks/synthetic.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.objects import container, gang_pod, queue_object, run_on  # noqa: E402

SHAPES = {
    "roomy": {"node_cpu": 32, "running_fraction": 0.4, "running_queues": None},
    "congested": {"node_cpu": 16, "running_fraction": 0.6, "running_queues": 3},
    "gpu": {"node_cpu": 32, "running_fraction": 0.4, "running_queues": None, "gpus": 8},
}
GPU_CARD_MEMORY = 16000
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
    gpus = form.get("gpus", 0)
    for i in range(spec["nodes"]):
        resources = {"cpu": cpu_per_node, "memory": memory_per_node, "pods": "110"}
        if gpus:
            resources |= {"volcano.sh/gpu-memory": str(gpus * GPU_CARD_MEMORY), "volcano.sh/gpu-number": str(gpus)}
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": f"node-{i:04d}", "labels": {"kubernetes.io/hostname": f"node-{i:04d}",
                                                                         "zone": f"z{i % 3}"}},
                        "status": {"allocatable": dict(resources), "capacity": dict(resources)}})
        if gpus:
            objects.append(_numa_topology(f"node-{i:04d}", form["node_cpu"]))
    for q in range(spec["queues"]):
        objects.append(queue_object(f"queue-{q}", {"weight": 1 + q % 3, "reclaimable": True}))
    node = 0
    for j in range(spec["jobs"]):
        ns, name = f"team-{j % 20}", f"job-{j:05d}"
        running = rng.random() < form["running_fraction"]
        queues = form["running_queues"] if running and form["running_queues"] else spec["queues"]
        cpu = rng.choice([1, 2, 4])
        device = _device_ask(rng) if gpus else {}
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"queue": f"queue-{j % queues}",
                                 "minMember": spec["pods_per_job"],
                                 "minResources": {"cpu": str(cpu * spec["pods_per_job"]),
                                                  "memory": f"{2 * spec['pods_per_job']}Gi"}},
                        "status": {"phase": "Running" if running else "Pending"}})
        for p in range(spec["pods_per_job"]):
            pod = gang_pod(f"{name}-{p}", ns, f"{ns}-{name}-{p}", name, {"containers": [container(cpu, "2Gi")]})
            _ask(pod, device, cpu)
            if running:
                run_on(pod, f"node-{node % spec['nodes']:04d}")
                if "limits" in device:
                    pod["metadata"]["annotations"]["volcano.sh/gpu-index"] = str(node % gpus)
                node += 1
            objects.append(pod)
    return objects


def _numa_topology(node: str, cpus: int) -> dict:
    """Two NUMA nodes (one socket each), two CPUs a core, every CPU allocatable."""
    half = cpus // 2
    detail = {str(c): {"numa": c // half, "socket": c // half, "core": c // 2} for c in range(cpus)}
    return {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": node},
            "spec": {"policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "best-effort"},
                     "numares": {"cpu": {"allocatable": f"0-{cpus - 1}", "capacity": cpus}}, "cpuDetail": detail}}


def _device_ask(rng: random.Random) -> dict:
    """What a job of the gpu shape asks of each pod beyond CPU and memory."""
    roll = rng.random()
    if roll < 0.33:
        return {"limits": {"volcano.sh/gpu-memory": rng.choice(["4000", "8000"])}}
    if roll < 0.43:
        return {"limits": {"volcano.sh/gpu-number": "1"}}
    if roll < 0.48:
        return {"numa": "best-effort"}
    return {}


def _ask(pod: dict, device: dict, cpu: int) -> None:
    container = pod["spec"]["containers"][0]
    if "limits" in device:
        container["resources"]["limits"] = dict(device["limits"])
    if "numa" in device:  # Guaranteed: limits equal to the requests
        container["resources"]["limits"] = {"cpu": str(cpu), "memory": "2Gi"}
        pod["metadata"]["annotations"]["volcano.sh/numa-topology-policy"] = device["numa"]


def main() -> None:
    """`python benchmarks/synthetic.py S M L --out /work/bench`: write each size as SIZE.json (a List)."""
    import argparse
    import json

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
