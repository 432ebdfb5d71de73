"""Traces made up: named workload shapes with a seed, and traces cut from a cluster dump.

Shapes (``fumarole trace synth SHAPE``), each on ``nodes`` nodes of 8 CPUs and
32 GiB over ``duration`` of virtual time:

- ``steady``: three queues (weights 1, 1, 2) with a steady mix of small
  elastic jobs and medium gangs, arriving about every two minutes;
- ``burst``: steady small jobs, then a burst of big gangs (half the cluster
  each) a third of the way in;
- ``two-queues``: two queues of equal weight competing: ``research`` fills the
  cluster with long elastic sweeps, ``prod`` submits gangs every 20 minutes;
- ``best-effort``: best-effort pods (no requests, running until deleted)
  beside steady jobs.

The same shape, size and seed always give the same trace.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from fumarole.runtime.ingest.kube import Cluster
from fumarole.runtime.ingest.kube_convert import parse_time, pod_request
from fumarole.runtime.whatif.trace import DEFAULT_START, rfc3339, seconds

PODGROUP_API = "scheduling.volcano.sh/v1beta1"
SHAPES = ("steady", "burst", "two-queues", "best-effort")
# Run-time distributions for traces cut from a dump: fixed:D, uniform:A,B, exp:MEAN (durations in seconds).
DISTRIBUTIONS = ("fixed", "uniform", "exp")


def _node(i: int) -> dict:
    name = f"node-{i:03d}"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def _queue(name: str, weight: int) -> dict:
    return {"apiVersion": PODGROUP_API, "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": weight, "reclaimable": True}, "status": {"state": "Open"}}


def _job(at: float, name: str, queue: str, replicas: int, cpu: float, memory_gi: float, run_time: float | None,
         min_member: int) -> dict:
    requests = {"cpu": f"{int(cpu * 1000)}m", "memory": f"{memory_gi:g}Gi"} if cpu else {}
    task: dict[str, Any] = {"replicas": replicas,
                            "pod": {"metadata": {"name": name},
                                    "spec": {"containers": [{"name": "main", "image": f"{queue}:1",
                                                             "resources": {"requests": requests}}]}}}
    if run_time is not None:
        task["runTime"] = f"{int(run_time)}s"
    return {"at": f"{int(at)}s", "submit": {
        "podGroup": {"apiVersion": PODGROUP_API, "kind": "PodGroup", "metadata": {"name": name, "namespace": queue},
                     "spec": {"queue": queue, "minMember": min_member}},
        "tasks": [task]}}


def _arrivals(rng: random.Random, mean_gap: float, start: float, end: float) -> list[float]:
    times: list[float] = []
    t = start
    while True:
        t += rng.expovariate(1.0 / mean_gap)
        if t >= end:
            return times
        times.append(t)


def _steady_jobs(rng: random.Random, queues: list[str], start: float, end: float, prefix: str) -> list[dict]:
    events = []
    for i, at in enumerate(_arrivals(rng, 120.0, start, end)):
        queue = rng.choice(queues)
        if rng.random() < 0.7:  # small elastic job
            events.append(_job(at, f"{prefix}{i:04d}", queue, rng.randint(1, 4), rng.choice([0.5, 1, 2]), 2,
                               max(60.0, rng.expovariate(1 / 900.0)), 1))
        else:  # medium gang
            size = rng.randint(2, 6)
            events.append(_job(at, f"{prefix}{i:04d}", queue, size, rng.choice([1, 2]), 4,
                               max(300.0, rng.expovariate(1 / 1800.0)), size))
    return events


def _steady(rng: random.Random, nodes: int, duration: float) -> tuple[list[dict], list[dict]]:
    queues = [_queue("alpha", 1), _queue("beta", 1), _queue("gamma", 2)]
    return queues, _steady_jobs(rng, ["alpha", "beta", "gamma"], 0.0, duration, "job-")


def _burst(rng: random.Random, nodes: int, duration: float) -> tuple[list[dict], list[dict]]:
    queues = [_queue("batch", 1), _queue("training", 1)]
    events = _steady_jobs(rng, ["batch"], 0.0, duration, "small-")
    size = max(2, nodes * 2)  # half the cluster's CPUs in 2-CPU tasks
    at = duration / 3
    events += [_job(at + 5 * k, f"gang-{k}", "training", size, 2, 4, 3600.0, size) for k in range(4)]
    return queues, events


def _two_queues(rng: random.Random, nodes: int, duration: float) -> tuple[list[dict], list[dict]]:
    queues = [_queue("research", 1), _queue("prod", 1)]
    events = [_job(0.0, "sweep-0", "research", nodes * 8, 1, 2, 3 * 3600.0, 1)]
    t, k = 600.0, 0
    while t < duration:
        size = max(2, nodes * 2)
        events.append(_job(t + rng.uniform(0, 60), f"serving-{k}", "prod", size, 2, 4, rng.uniform(600, 1800), size))
        t, k = t + 1200.0, k + 1
    return queues, events


def _best_effort(rng: random.Random, nodes: int, duration: float) -> tuple[list[dict], list[dict]]:
    queues = [_queue("prod", 1), _queue("background", 1)]
    events = [_job(0.0, "crawler", "background", nodes * 4, 0, 0, None, 1)]
    return queues, events + _steady_jobs(rng, ["prod"], 0.0, duration, "job-")


_SHAPES: dict[str, Callable[[random.Random, int, float], tuple[list[dict], list[dict]]]] = {
    "steady": _steady, "burst": _burst, "two-queues": _two_queues, "best-effort": _best_effort}


def synth_trace(shape: str, seed: int = 1, nodes: int = 10, duration: float = 4 * 3600.0) -> dict:
    """A trace document of the named shape (see the module docstring)."""
    rng = random.Random(f"{shape}/{seed}/{nodes}/{duration}")
    queues, events = _SHAPES[shape](rng, nodes, duration)
    return {"apiVersion": "fumarole/v1", "kind": "Trace",
            "metadata": {"name": f"{shape}-seed{seed}", "annotations": {"fumarole.io/synth": f"{shape} seed={seed}"}},
            "start": DEFAULT_START, "cluster": [_node(i) for i in range(nodes)] + queues, "events": events}


def parse_distribution(text: str) -> Callable[[random.Random], float] | None:
    """``fixed:D``, ``uniform:A,B`` or ``exp:MEAN`` (durations as in traces) as a sampler; None if malformed."""
    kind, _, args = text.partition(":")
    given = [seconds(a) for a in args.split(",")] if args else []
    values = [v for v in given if v is not None]
    if kind not in DISTRIBUTIONS or not values or len(values) < len(given):
        return None
    if kind == "fixed" and len(values) == 1:
        return lambda rng: values[0]
    if kind == "uniform" and len(values) == 2 and values[0] <= values[1]:
        return lambda rng: rng.uniform(values[0], values[1])
    if kind == "exp" and len(values) == 1 and values[0] > 0:
        return lambda rng: rng.expovariate(1.0 / values[0])
    return None


def cut_trace(cluster: Cluster, name: str, run_time: Callable[[random.Random], float], seed: int = 1) -> dict:
    """A trace that starts from a dump: its running and pending pods get run times drawn from ``run_time``
    (a running pod's is what it has left), and nothing is submitted later."""
    rng = random.Random(seed)
    objects = [*cluster.nodes, *cluster.queues, *cluster.priority_classes, *cluster.pod_groups, *cluster.pods]
    run_times = {}
    for pod in cluster.pods:
        meta = pod["metadata"]
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Running", "Pending") and not pod_request(pod.get("spec") or {}).is_empty():
            run_times[f"{meta.get('namespace') or 'default'}/{meta['name']}"] = f"{int(run_time(rng))}s"
    stamps = [parse_time(t) for pod in cluster.pods
              for t in ((pod.get("status") or {}).get("startTime"), pod["metadata"].get("creationTimestamp")) if t]
    start = rfc3339(max(stamps)) if stamps else DEFAULT_START  # the dump's latest moment: its "now"
    return {"apiVersion": "fumarole/v1", "kind": "Trace", "metadata": {"name": name}, "start": start,
            "cluster": [_plain(o) for o in objects], "runTimes": run_times, "events": []}


def _plain(value: Any) -> Any:
    """Position-carrying YAML containers as plain dicts and lists, for dumping."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
