"""Clusters with the shapes production clusters have: inter-pod affinity, topology spread, taints,
node selectors, HyperNodes.

`synthetic.py`'s roomy clusters give every pod the same plain spec; here the
jobs carry what kube-scheduler's costlier plugins read.  Per job (deterministic
for a size, shape and seed):

- ``affinity``: ~8 % required anti-affinity to their own job on the hostname,
  ~8 % required affinity to their own job on the zone, ~9 % preferred
  anti-affinity to their own job on the hostname (about a quarter of the pods);
  ~15 % a zone spread constraint (DoNotSchedule or ScheduleAnyway, maxSkew 1-2);
- ``spread``: ~30 % a zone spread constraint, ~10 % a hostname one;
- every shape but ``plain`` adds taints (a tenth of the nodes dedicated,
  tolerated by a tenth of the jobs, and a few PreferNoSchedule) and node
  selectors (half the nodes have SSDs, a fifth of the jobs ask for one);
- ``hypernodes`` is ``plain`` with a three-tier HyperNode tree (8 nodes per leaf,
  4 leaves per spine) and a fifth of the jobs asking for tier-2 network topology;
- ``racks`` is ``hypernodes`` with leaves of mixed sizes (RACK_SIZES in turn: 16 to
  120 nodes, so some are larger than --minimum-feasible-nodes and a node scan there
  samples), half the network-topology jobs held within a leaf (tier 1);
- ``elastic`` is ``hypernodes`` whose network-topology jobs are not one gang: minMember
  4 of their 10 pods, half of them hard (tier 2) and half soft, so allocate places the
  first 4 in one search and each further pod in a search of its own;
- ``subgroups`` is ``hypernodes`` whose network-topology jobs (hard, tier 2) split their
  pods into two sub-groups of 5 (spec.subGroupPolicy on the volcano.sh/task-spec label),
  each a gang held within a leaf (tier 1).

10 pods per node on 32-CPU nodes, 40 % of the jobs already running.

A shape name with the suffix ``-templated`` (``plain-templated``, ``affinity-templated``) is that
shape with the pods of each job, all of one task, sharing a ``volcano.sh/template-uid``
annotation, as Volcano's job controller gives the pods of a task: what predicates' equivalence
cache (``predicate.CacheEnable``) keeps its verdicts by.

Two eviction-heavy shapes (`eviction_objects`) give preempt and reclaim work:
the running jobs fill the cluster's CPUs and keep half of their pods beyond
their gang's minimum (so the gang plugin lets them go), pending jobs as many:

- ``overshare``: three quarters of the running jobs sit in two of the four
  queues, far over their share; every job has the same priority, so drf
  picks the victims and proportion's allocatable rules most nodes out;
- ``priority``: running jobs of low priority and pending ones of high
  priority, in every queue alike, so the priority plugin picks the victims.
"""

from __future__ import annotations

import random

from benchmarks.objects import container, gang_pod, queue_object, run_on

SHAPES = ("plain", "affinity", "spread", "hypernodes", "racks", "elastic", "subgroups", "overshare", "priority")
TEMPLATED = "-templated"
TEMPLATE_UID = "volcano.sh/template-uid"
TOPOLOGY_SHAPES = ("hypernodes", "racks", "elastic", "subgroups")
EVICTION_SHAPES = ("overshare", "priority")
ZONES = 3
PODS_PER_JOB = 10
LEAF_SIZE, SPINE_SIZE = 8, 4
RACK_SIZES = (16, 120, 40, 104, 24)


def _node(i: int, rng: random.Random, shape: str) -> dict:
    name = f"node-{i:04d}"
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % ZONES}"}
    node: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                             "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}
    if shape in ("affinity", "spread"):
        if i % 2 == 0:
            labels["disk"] = "ssd"
        roll = rng.random()
        if roll < 0.1:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]}
        elif roll < 0.15:
            node["spec"] = {"taints": [{"key": "maintenance", "effect": "PreferNoSchedule"}]}
    return node


def _selector(job: str) -> dict:
    return {"matchLabels": {"job": job}}


def _pod_spec_extras(job: str, rng: random.Random, shape: str) -> dict:
    """The affinity, spread, toleration and selector parts of one job's pod spec."""
    extras: dict = {}
    roll = rng.random()
    if shape == "affinity":
        if roll < 0.08:
            extras["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": _selector(job), "topologyKey": "kubernetes.io/hostname"}]}}
        elif roll < 0.16:
            extras["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": _selector(job), "topologyKey": "topology.kubernetes.io/zone"}]}}
        elif roll < 0.25:
            extras["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": _selector(job),
                                                   "topologyKey": "kubernetes.io/hostname"}}]}}
    spread_roll = rng.random()
    constraints = []
    if shape == "affinity" and spread_roll < 0.15 or shape == "spread" and spread_roll < 0.3:
        constraints.append({"maxSkew": rng.choice([1, 2]), "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                            "labelSelector": _selector(job)})
    elif shape == "spread" and spread_roll < 0.4:
        constraints.append({"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                            "labelSelector": _selector(job)})
    if constraints:
        extras["topologySpreadConstraints"] = constraints
    if rng.random() < 0.1:
        extras["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
    if rng.random() < 0.2:
        extras["nodeSelector"] = {"disk": "ssd"}
    return extras


def _hypernodes(nodes: int, sizes: tuple[int, ...] = (LEAF_SIZE,)) -> list[dict]:
    """Leaves of ``sizes`` nodes in turn (tier 1), spines of SPINE_SIZE leaves (tier 2), one root
    (tier 3)."""
    objects = []
    leaves, first = 0, 0
    while first < nodes:
        size = sizes[leaves % len(sizes)]
        members = [{"type": "Node", "selector": {"exactMatch": {"name": f"node-{i:04d}"}}}
                   for i in range(first, min(nodes, first + size))]
        objects.append(_hypernode(f"leaf-{leaves}", 1, members))
        leaves, first = leaves + 1, first + size
    spines = (leaves + SPINE_SIZE - 1) // SPINE_SIZE
    for spine in range(spines):
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"leaf-{leaf}"}}}
                   for leaf in range(spine * SPINE_SIZE, min(leaves, (spine + 1) * SPINE_SIZE))]
        objects.append(_hypernode(f"spine-{spine}", 2, members))
    objects.append(_hypernode("root", 3, [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"spine-{s}"}}}
                                          for s in range(spines)]))
    return objects


def _hypernode(name: str, tier: int, members: list[dict]) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": members}}


def cluster_objects(nodes: int, shape: str = "affinity", seed: int = 11) -> list[dict]:
    """A cluster of ``nodes`` nodes with 10 pods per node in jobs of 10, 4 queues."""
    if shape.endswith(TEMPLATED):
        return _templated(cluster_objects(nodes, shape.removesuffix(TEMPLATED), seed))
    if shape in EVICTION_SHAPES:
        return eviction_objects(nodes, shape, seed)
    rng = random.Random(seed)
    objects = [_node(i, rng, shape) for i in range(nodes)]
    if shape in TOPOLOGY_SHAPES:
        objects += _hypernodes(nodes, RACK_SIZES if shape == "racks" else (LEAF_SIZE,))
    for q in range(4):
        objects.append(queue_object(f"queue-{q}", {"weight": 1 + q % 2, "reclaimable": True}))
    placed = 0
    for j in range(nodes * 10 // PODS_PER_JOB):
        ns, name = f"team-{j % 5}", f"job-{j:05d}"
        running = rng.random() < 0.4
        cpu = rng.choice([1, 2, 4])
        extras = {} if shape == "plain" or shape in TOPOLOGY_SHAPES else _pod_spec_extras(name, rng, shape)
        group: dict = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                       "metadata": {"name": name, "namespace": ns},
                       "spec": {"queue": f"queue-{j % 4}", "minMember": PODS_PER_JOB},
                       "status": {"phase": "Running" if running else "Pending"}}
        topology = shape in TOPOLOGY_SHAPES and rng.random() < 0.2
        if topology:
            group["spec"].update(_topology_spec(shape, rng))
        objects.append(group)
        for p in range(PODS_PER_JOB):
            labels = {"job": name}
            if topology and shape == "subgroups":
                labels["volcano.sh/task-spec"] = f"part-{p * 2 // PODS_PER_JOB}"
            pod = gang_pod(f"{name}-{p}", ns, f"{ns}-{name}-{p}", name,
                           {"containers": [container(cpu, "2Gi")], **extras}, labels=labels)
            if running:
                run_on(pod, f"node-{(placed * 7) % nodes:04d}")
                placed += 1
            objects.append(pod)
    return objects


def _templated(objects: list[dict]) -> list[dict]:
    """``objects`` with each pod annotated with its job's template (one task per job)."""
    for o in objects:
        if o["kind"] == "Pod":
            annotations = o["metadata"]["annotations"]
            annotations[TEMPLATE_UID] = f"{o['metadata']['namespace']}-{annotations['scheduling.k8s.io/group-name']}"
    return objects


def _topology_spec(shape: str, rng: random.Random) -> dict:
    """The PodGroup spec fields of a network-topology job of a HyperNode shape."""
    if shape == "elastic":
        mode = "hard" if rng.random() < 0.5 else "soft"
        return {"minMember": 4, "networkTopology": {"mode": mode, "highestTierAllowed": 2}}
    tier = 2 if shape != "racks" or rng.random() < 0.5 else 1
    spec: dict = {"networkTopology": {"mode": "hard", "highestTierAllowed": tier}}
    if shape == "subgroups":
        spec["subGroupPolicy"] = [{"name": "part", "subGroupSize": PODS_PER_JOB // 2, "minSubGroups": 2,
                                   "matchLabelKeys": ["volcano.sh/task-spec"],
                                   "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}]
    return spec


def eviction_objects(nodes: int, shape: str, seed: int = 11) -> list[dict]:
    """A full cluster of ``nodes`` 32-CPU nodes: running jobs of 8 pods (gang minimum 4) until the
    CPUs are taken, then as many pending jobs of 8 pods (minimum 8), in 4 queues."""
    rng = random.Random(seed)
    objects = [_node(i, rng, "plain") for i in range(nodes)]
    objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "high"}, "value": 1000})
    objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "low"}, "value": 10})
    for q in range(4):
        objects.append(queue_object(f"queue-{q}", {"weight": 1, "reclaimable": True}))
    free = [32] * nodes
    jobs: list[tuple[int, list[int] | None]] = []  # (CPUs per pod, the node of each pod when running)
    while sum(free) >= 64:  # running jobs until every node is nearly full
        cpu = rng.choice([1, 2, 4])
        placement = []
        for _ in range(8):
            node = next((i for i in _probe(nodes, rng) if free[i] >= cpu), None)
            if node is None:
                break
            free[node] -= cpu
            placement.append(node)
        if len(placement) < 8:
            for node in placement:
                free[node] += cpu
            break
        jobs.append((cpu, placement))
    jobs += [(rng.choice([1, 2, 4]), None) for _ in range(len(jobs))]
    for j, (cpu, placement) in enumerate(jobs):
        running = placement is not None
        if shape == "overshare":
            queue = (j % 2 if rng.random() < 0.75 else 2 + j % 2) if running else j % 4
            priority = None
        else:
            queue, priority = j % 4, "low" if running else "high"
        name, ns = f"job-{j:05d}", f"team-{j % 5}"
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"queue": f"queue-{queue}", "minMember": 4 if running else 8,
                                 **({"priorityClassName": priority} if priority else {})},
                        "status": {"phase": "Running" if running else "Pending"}})
        for p in range(8):
            spec: dict = {"containers": [container(cpu, "2Gi")]}
            if priority:
                spec["priorityClassName"] = priority
                spec["priority"] = 1000 if priority == "high" else 10
            pod = gang_pod(f"{name}-{p}", ns, f"{ns}-{name}-{p}", name, spec, labels={"job": name})
            if running:
                run_on(pod, f"node-{placement[p]:04d}")
            objects.append(pod)
    return objects


def in_a_hierarchy(objects: list[dict]) -> list[dict]:
    """The queues hung in an HDRF tree (drf's enableHierarchy): under two inner nodes, a and b,
    of weights 1 and 2."""
    for i, queue in enumerate(o for o in objects if o["kind"] == "Queue"):
        name = queue["metadata"]["name"]
        queue["metadata"]["annotations"] = {"volcano.sh/hierarchy": f"root/{'ab'[i % 2]}/{name}",
                                            "volcano.sh/hierarchy-weights": f"1/{1 + i % 2}/1"}
    return objects


def _probe(nodes: int, rng: random.Random):
    """Node indexes from a random one on, wrapping around."""
    start = rng.randrange(nodes)
    return ((start + k) % nodes for k in range(nodes))
