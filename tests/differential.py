"""Generated clusters and configurations on which the fast and reference engines must decide alike.

Used by tests/test_engines_agree.py (a bounded number of examples) and by
benchmarks/differential_run.py (a long run).
"""

from __future__ import annotations

from hypothesis import strategies as st

from benchmarks.objects import container, gang_pod, queue_object, run_on

from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles.bundle import build_bundle, default_bundle
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions

_TIER1 = [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]
CONFIGS = {
    "default": None,
    "reclaim-preempt-binpack": {
        "actions": "enqueue, allocate, backfill, preempt, reclaim",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                               {"name": "proportion"}, {"name": "nodeorder"},
                               # GPUs scored too: binpack reads a resource named by a variable
                               {"name": "binpack", "arguments": {"binpack.resources": "nvidia.com/gpu",
                                                                 "binpack.resources.nvidia.com/gpu": 2}}]}]},
    # Volcano's predicates equivalence cache on, with every eviction action (preempt's nominated-node
    # check asks nodes before a task's pre-predicate).
    "cached-preempt": {
        "actions": "enqueue, allocate, backfill, preempt, reclaim",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "overcommit"}, {"name": "drf"},
                               {"name": "predicates", "arguments": {"predicate.CacheEnable": True}},
                               {"name": "proportion"}, {"name": "nodeorder"}]}]},
    "capacity": {
        "actions": "enqueue, allocate, backfill, reclaim",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "capacity"},
                               {"name": "nodeorder", "arguments": {"mostrequested.weight": 2}}]}]},
    "capacity-preempt": {
        "actions": "enqueue, allocate, backfill, preempt, reclaim",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "capacity"},
                               {"name": "nodeorder"}]}]},
    # Reclaim's victims decided by other tiers than Volcano's defaults: gang and proportion in one
    # tier (their answers intersected), or each alone in a tier of its own behind conformance.
    "reclaim-one-tier": {
        "actions": "enqueue, allocate, reclaim",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "conformance"}, {"name": "gang"},
                               {"name": "proportion"}]},
                  {"plugins": [{"name": "drf", "enableReclaimable": False}, {"name": "predicates"},
                               {"name": "nodeorder"}]}]},
    "reclaim-proportion-first": {
        "actions": "enqueue, allocate, backfill, reclaim",
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "proportion"}]},
                  {"plugins": [{"name": "conformance"}, {"name": "gang"}, {"name": "drf", "enableReclaimable": False},
                               {"name": "predicates"}, {"name": "nodeorder"}]}]},
    # drf's hierarchical reclaim (HDRF) decides; proportion may not share its tier.
    "reclaim-hdrf": {
        "actions": "enqueue, allocate, backfill, reclaim",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "drf", "enableHierarchy": True}, {"name": "predicates"},
                               {"name": "nodeorder"}]}]},
    "topology-aware": {
        "actions": "enqueue, allocate, backfill",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
                               {"name": "nodeorder"}, {"name": "binpack"},
                               {"name": "network-topology-aware",
                                "arguments": {"hypernode.binpack.normal-pod.fading": 0.5}}]}]},
    "gpu": {
        "actions": "enqueue, allocate, backfill",
        "tiers": [{"plugins": _TIER1},
                  {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
                               {"name": "nodeorder"},
                               {"name": "deviceshare", "arguments": {"deviceshare.GPUSharingEnable": True}},
                               {"name": "numa-aware", "arguments": {"weight": 2}}]}]},
}
# The configurations the generic cluster generators are run under (the others need their own shapes).
GENERIC_CONFIGS = ("default", "reclaim-preempt-binpack", "capacity")
_BUNDLES: dict[str, object] = {}


def bundle(name: str):
    if name not in _BUNDLES:
        doc = CONFIGS[name]
        _BUNDLES[name] = default_bundle() if doc is None else build_bundle(config_from_document(doc))
    return _BUNDLES[name]


_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


_TOPOLOGY_KEYS = ["kubernetes.io/hostname", "zone", "rack"]


@st.composite
def _pod_selector(draw, jobs: int) -> dict | None:
    """A label selector over the generated pods: a job's label, a NotIn / Exists expression, {} (every
    pod), or an operator Kubernetes refuses (no pod)."""
    kind = draw(st.integers(0, 9))
    job = f"j{draw(st.integers(0, jobs - 1))}"
    if kind < 6:
        return {"matchLabels": {"app": job}}
    if kind == 6:
        return {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [job]}]}
    if kind == 7:
        return {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    if kind == 8:
        return {}
    return {"matchExpressions": [{"key": "app", "operator": "Near", "values": [job]}]}


@st.composite
def _pod_term(draw, jobs: int) -> dict:
    term: dict = {"labelSelector": draw(_pod_selector(jobs)), "topologyKey": draw(st.sampled_from(_TOPOLOGY_KEYS))}
    namespaces = draw(st.integers(0, 5))
    if namespaces == 0:
        term["namespaces"] = [draw(st.sampled_from(["ns", "other"]))]
    elif namespaces == 1:
        term["namespaceSelector"] = draw(st.sampled_from([{}, {"matchLabels": {"team": "a"}}]))
    return term


@st.composite
def _placement_constraints(draw, jobs: int) -> dict:
    """Inter-pod affinity (required and preferred, affinity and anti-affinity) and topology spread
    constraints for a pod spec, each part drawn or not."""
    spec: dict = {}
    affinity: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        block: dict = {}
        if draw(st.integers(0, 3)) == 0:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = draw(st.lists(_pod_term(jobs), min_size=1,
                                                                                    max_size=2))
        if draw(st.integers(0, 3)) == 0:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(0, 100)), "podAffinityTerm": draw(_pod_term(jobs))}
                for _ in range(draw(st.integers(1, 2)))]
        if block:
            affinity[kind] = block
    if affinity:
        spec["affinity"] = affinity
    if draw(st.integers(0, 2)) == 0:
        constraints = []
        for _ in range(draw(st.integers(1, 2))):
            constraint: dict = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": draw(st.sampled_from(_TOPOLOGY_KEYS)),
                                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                                "labelSelector": draw(_pod_selector(jobs))}
            if draw(st.integers(0, 3)) == 0:
                constraint["minDomains"] = draw(st.integers(1, 4))
            if draw(st.integers(0, 3)) == 0:
                constraint["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
            if draw(st.integers(0, 3)) == 0:
                constraint["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
            if draw(st.integers(0, 4)) == 0:
                constraint["matchLabelKeys"] = ["tier"]
            constraints.append(constraint)
        spec["topologySpreadConstraints"] = constraints
    return spec


@st.composite
def clusters(draw, max_nodes: int = 12, job_sizes: tuple[int, int] = (1, 4), placement: bool = False,
             templates: bool = False) -> list[dict]:
    """Kubernetes objects: nodes (labels, taints, cordons, GPUs), queues (some hierarchical),
    PodGroups with gangs and priorities, pods pending / running / releasing with selectors,
    tolerations, host ports and pod (anti-)affinity.  ``job_sizes``: the fewest and most pods
    a job has (many pods of one spec on few nodes change a node's row between a job's tasks).
    ``placement``: jobs also carry inter-pod affinity and topology spread constraints of every
    kind (per job, sometimes per pod), some pods a ``tier`` label, some nodes no zone or rack.
    ``templates``: the pods of a job mostly share a ``volcano.sh/template-uid`` annotation (what
    predicates' equivalence cache keeps verdicts by), though their tolerations and selectors may
    differ; some pods carry another job's template or none."""
    n_nodes = draw(st.integers(1, max_nodes))
    objects: list[dict] = []
    for i in range(n_nodes):
        cpu = draw(st.sampled_from([2, 4, 8, 16]))
        alloc = {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": str(draw(st.sampled_from([3, 10, 110])))}
        if draw(st.booleans()) and i % 3 == 0:
            alloc["nvidia.com/gpu"] = "2"
        spec: dict = {}
        if draw(st.integers(0, 5)) == 0:
            spec["taints"] = [{"key": "dedicated", "value": draw(st.sampled_from(["a", "b"])),
                               "effect": draw(st.sampled_from(_EFFECTS))}]
        if draw(st.integers(0, 9)) == 0:
            spec["unschedulable"] = True
        labels = {"kubernetes.io/hostname": f"n{i:03d}", "zone": f"z{i % 3}",
                  "disk": draw(st.sampled_from(["ssd", "hdd"]))}
        if placement:
            labels["rack"] = f"r{i // 2}"
            if draw(st.integers(0, 6)) == 0:
                del labels[draw(st.sampled_from(["zone", "rack"]))]
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:03d}", "labels": labels},
                        "spec": spec, "status": {"allocatable": alloc, "capacity": alloc}})
    n_queues = draw(st.integers(1, 3))
    for q in range(n_queues):
        queue_spec: dict = {"weight": draw(st.integers(1, 3)), "reclaimable": draw(st.booleans())}
        if draw(st.booleans()):
            queue_spec["capability"] = {"cpu": str(draw(st.sampled_from([4, 16, 64])))}
        objects.append(queue_object(f"q{q}", queue_spec))
    objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "high"}, "value": 1000})
    n_jobs = draw(st.integers(1, 6))
    for j in range(n_jobs):
        size = draw(st.integers(*job_sizes))
        min_member = draw(st.integers(1, size))
        state = draw(st.sampled_from(["pending", "running", "mixed"]))
        cpu = draw(st.sampled_from(["500m", "1", "2", "3"]))
        pg_spec: dict = {"queue": f"q{draw(st.integers(0, n_queues - 1))}", "minMember": min_member}
        if draw(st.booleans()):
            pg_spec["priorityClassName"] = "high"
        namespace = "other" if placement and draw(st.integers(0, 5)) == 0 else "ns"
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": namespace,
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": pg_spec, "status": {"phase": "Running" if state != "pending" else "Pending"}})
        job_constraints = draw(_placement_constraints(n_jobs)) if placement else {}
        for p in range(size):
            pod_spec: dict = {"containers": [container(cpu, "1Gi", "c", "img:1")]}
            if pg_spec.get("priorityClassName"):
                pod_spec["priorityClassName"] = "high"
                pod_spec["priority"] = 1000
            if draw(st.integers(0, 5)) == 0:
                pod_spec["nodeSelector"] = {"disk": "ssd"}
            if draw(st.integers(0, 4)) == 0:
                pod_spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            if draw(st.integers(0, 7)) == 0:
                pod_spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
            if draw(st.integers(0, 7)) == 0:
                pod_spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": f"j{j}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            if draw(st.integers(0, 7)) == 0:
                pod_spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["z1"]}]}}]}}
            if draw(st.integers(0, 9)) == 0:
                pod_spec["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
            labels = {"app": f"j{j}"}
            if placement:
                pod_spec.update(draw(_placement_constraints(n_jobs)) if draw(st.integers(0, 5)) == 0
                                else job_constraints)
                if draw(st.integers(0, 3)) == 0:
                    labels["tier"] = draw(st.sampled_from(["web", "db"]))
            pod = gang_pod(f"j{j}-{p}", namespace, f"u-j{j}-{p}", f"j{j}", pod_spec, labels,
                           created=f"2026-01-01T00:01:{p:02d}Z")
            if templates:
                template = draw(st.sampled_from([f"t{j}"] * 4 + [f"t{(j + 1) % n_jobs}", ""]))
                if template:
                    pod["metadata"]["annotations"]["volcano.sh/template-uid"] = template
            placed = state == "running" or (state == "mixed" and p % 2 == 0)
            if placed:
                run_on(pod, f"n{draw(st.integers(0, n_nodes - 1)):03d}", started="2026-01-01T00:02:00Z")
                if draw(st.integers(0, 6)) == 0:
                    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:03:00Z"
            objects.append(pod)
    return objects


def decisions(objects: list[dict], config: str, engine: str, options: SchedulerOptions | None = None) -> dict:
    session = new_session(bundle(config), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine,
                          options=options)
    return decisions_as_expect(run_session(session))


@st.composite
def eviction_heavy_clusters(draw, max_nodes: int = 6, mixed_requests: bool = False) -> list[dict]:
    """Full nodes and starving jobs: running jobs (gang minimum below their size, some of low
    priority) fill every node's CPUs, most of them in one queue, and pending jobs (some of high
    priority) wait in every queue, so preempt tries victims on node after node and reclaim takes
    from over-share queues.  With ``mixed_requests`` a job's pods ask for different memory (at
    most a node's per CPU), so that its dominant share moves by different amounts per task."""
    n_nodes = draw(st.integers(1, max_nodes))
    cpus = [draw(st.sampled_from([2, 4, 8])) for _ in range(n_nodes)]
    objects: list[dict] = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}", "zone": f"z{i % 2}"}},
         "status": {"allocatable": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"},
                    "capacity": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"}}}
        for i, cpu in enumerate(cpus)]
    n_queues = draw(st.integers(1, 3))
    for q in range(n_queues):
        queue_spec: dict = {"weight": draw(st.integers(1, 3)), "reclaimable": draw(st.booleans())}
        if draw(st.integers(0, 3)) == 0:
            queue_spec["capability"] = {"cpu": str(draw(st.sampled_from([2, 8, 32])))}
        objects.append(queue_object(f"q{q}", queue_spec))
    for name, value in (("high", 1000), ("low", 10)):
        objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": name}, "value": value})
    free = list(cpus)
    jobs: list[tuple[list[int | None], int, str]] = []  # (node of each pod or None, CPUs a pod, queue)
    while any(f > 0 for f in free) and len(jobs) < 8:
        cpu = draw(st.sampled_from([1, 2]))
        slots = [i for i, f in enumerate(free) for _ in range(f // cpu)]
        if not slots:
            break
        size = draw(st.integers(1, min(4, len(slots))))
        placement = []
        for _ in range(size):
            node = draw(st.sampled_from([i for i, f in enumerate(free) if f >= cpu] or [None]))
            if node is None:
                break
            free[node] -= cpu
            placement.append(node)
        if placement:
            jobs.append((placement, cpu, "q0" if draw(st.integers(0, 3)) else f"q{draw(st.integers(0, n_queues - 1))}"))
    for _ in range(draw(st.integers(1, 5))):
        jobs.append(([None] * draw(st.integers(1, 4)), draw(st.sampled_from([1, 2])),
                     f"q{draw(st.integers(0, n_queues - 1))}"))
    for j, (placement, cpu, queue) in enumerate(jobs):
        running = placement[0] is not None
        priority = draw(st.sampled_from([None, "low" if running else "high"]))
        pg_spec: dict = {"queue": queue, "minMember": draw(st.integers(1, len(placement)))}
        if priority:
            pg_spec["priorityClassName"] = priority
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": pg_spec, "status": {"phase": "Running" if running else "Pending"}})
        for p, node in enumerate(placement):
            memory = draw(st.sampled_from(["512Mi", "1Gi", "2Gi"])) if mixed_requests else "1Gi"
            spec: dict = {"containers": [container(cpu, memory, "c", "img:1")]}
            if priority:
                spec["priorityClassName"] = priority
                spec["priority"] = 1000 if priority == "high" else 10
            pod = gang_pod(f"j{j}-{p}", "ns", f"u-j{j}-{p}", f"j{j}", spec, {"app": f"j{j}"},
                           created=f"2026-01-01T00:01:{p:02d}Z")
            if node is not None:
                run_on(pod, f"n{node:03d}", started="2026-01-01T00:02:00Z")
            objects.append(pod)
    return objects


@st.composite
def reclaim_clusters(draw, max_nodes: int = 8, hierarchy: bool = False) -> list[dict]:
    """Full nodes shared by every queue, so that reclaim's victims come now from a queue above its
    share (proportion), now from a job above its gang minimum (gang), now from neither: running
    jobs spread over two to four queues of various weights (some not reclaimable), each pod
    asking CPUs and a memory that varies (queues can be above their share in one dimension
    only), gang minimums from one to the job's size, and pending jobs in every queue.  With
    ``hierarchy`` the queues hang in an HDRF tree (drf's enableHierarchy): under one or two inner
    nodes of various weights, at depth one or two."""
    n_nodes = draw(st.integers(2, max_nodes))
    objects: list[dict] = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                    "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for i in range(n_nodes)]
    n_queues = draw(st.integers(2, 4))
    for q in range(n_queues):
        objects.append(queue_object(f"q{q}", {"weight": draw(st.integers(1, 3)),
                                              "reclaimable": draw(st.integers(0, 4)) > 0}))
        if hierarchy:
            path = f"root/{draw(st.sampled_from(['a', 'b']))}/q{q}" if draw(st.booleans()) else f"root/q{q}"
            weights = "/".join(str(draw(st.integers(1, 4))) for _ in path.split("/"))
            objects[-1]["metadata"]["annotations"] = {"volcano.sh/hierarchy": path,
                                                      "volcano.sh/hierarchy-weights": weights}
    free = [4] * n_nodes
    jobs: list[tuple[list[int | None], int, int, str]] = []  # (node of each pod, CPUs, GiB, queue)
    while len(jobs) < 3 * n_nodes:
        cpu, memory = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2, 3]))
        if not any(f >= cpu for f in free):
            break
        size = draw(st.integers(1, 4))
        start = draw(st.integers(0, n_nodes - 1))
        placement: list[int | None] = []
        for _ in range(size):
            node = next((k % n_nodes for k in range(start, start + n_nodes) if free[k % n_nodes] >= cpu), None)
            if node is None:
                break
            free[node] -= cpu
            placement.append(node)
        if placement:
            jobs.append((placement, cpu, memory, f"q{len(jobs) % n_queues}"))
    for q in range(n_queues):
        for _ in range(draw(st.integers(0, 2))):
            jobs.append(([None] * draw(st.integers(1, 3)), draw(st.sampled_from([1, 2])), 1, f"q{q}"))
    for j, (placement, cpu, memory, queue) in enumerate(jobs):
        running = placement[0] is not None
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": {"queue": queue, "minMember": draw(st.integers(1, len(placement)))},
                        "status": {"phase": "Running" if running else "Pending"}})
        for p, node in enumerate(placement):
            pod = gang_pod(f"j{j}-{p}", "ns", f"u-j{j}-{p}", f"j{j}",
                           {"containers": [container(cpu, f"{memory}Gi", "c", "img:1")]}, {"app": f"j{j}"},
                           created=f"2026-01-01T00:01:{p:02d}Z")
            if node is not None:
                run_on(pod, f"n{node:03d}", started="2026-01-01T00:02:00Z")
            objects.append(pod)
    return objects


def decisions_trying_every_node(objects: list[dict], config: str, engine: str) -> dict:
    """The decisions with preempt's and reclaim's bounds switched off (`may_become_allocatable`,
    `may_preempt_from` and `may_reclaim_from` always true), so that preempt tries its evictions
    and asks `preemptable`, and reclaim asks `reclaimable`, on every node, as Volcano does."""
    session = new_session(bundle(config), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)

    def unbounded() -> None:
        session.H.may_become_allocatable = lambda *_args: True
        session.H.may_reclaim_from = lambda *_args: True
        session.H.may_preempt_from = lambda *_args: True
    return decisions_as_expect(run_session(session, opened=unbounded))



def decisions_and_questions(objects: list[dict], config: str, engine: str, hook: str, bound: str,
                            bounded: bool, phase: str | None = None) -> tuple[dict, int]:
    """The decisions, and how often the session asked ``hook`` (in action ``phase`` only, if given);
    with ``bounded`` false the ``bound`` hook answers "may" everywhere, as if it were not there."""
    session = new_session(bundle(config), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)
    asked = [0]

    def count_questions() -> None:  # the session's hooks exist once it is open
        ask = getattr(session.H, hook)

        def counting(*args):
            asked[0] += phase is None or session.phase == phase
            return ask(*args)
        setattr(session.H, hook, counting)
        if not bounded:
            setattr(session.H, bound, lambda *_args: True)
    decisions = run_session(session, opened=count_questions)
    return decisions_as_expect(decisions), asked[0]


@st.composite
def hypernode_clusters(draw, max_nodes: int = 14, nominated: bool = False, releasing: bool = False,
                       roles: bool = False, sub_groups: bool = False) -> list[dict]:
    """A HyperNode tree over the nodes (leaves of one to four nodes at tier 1, spines of one to
    three leaves at tier 2, sometimes a root at tier 3; some nodes in no HyperNode), running and
    pending jobs of one to four pods, some with a hard or soft network topology up to a tier, so
    that allocate searches HyperNode gradients and network-topology-aware scores nodes and
    HyperNodes from per-HyperNode allocations that each placement and rollback changes.  With
    ``nominated``, some pending pods name a nominated node (status.nominatedNodeName); with
    ``releasing``, some running pods are being deleted (metadata.deletionTimestamp: Releasing, so
    their nodes' future idle exceeds their idle and allocate may pipeline a task there); with
    ``roles``, a job's pods alternate between two task roles and some PodGroups give a role a
    minimum (spec.minTaskMember); with ``sub_groups``, jobs have up to six pods and some PodGroups
    split them into two or three sub-groups on a pod label (spec.subGroupPolicy: subGroupSize the
    whole sub-group or less, minSubGroups zero to all, sometimes a hard or soft network topology
    of its own), so that a job's dry run places sub-job after sub-job."""
    n_nodes = draw(st.integers(2, max_nodes))
    cpus = [draw(st.sampled_from([2, 4, 8])) for _ in range(n_nodes)]
    objects: list[dict] = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
         "status": {"allocatable": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"},
                    "capacity": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"}}}
        for i, cpu in enumerate(cpus)]
    held = n_nodes - draw(st.integers(0, 2))
    leaves: list[str] = []
    start = 0
    while start < held:
        size = draw(st.integers(1, 4))
        members = [{"type": "Node", "selector": {"exactMatch": {"name": f"n{i:03d}"}}}
                   for i in range(start, min(held, start + size))]
        leaves.append(f"leaf{len(leaves)}")
        objects.append(_hypernode(leaves[-1], 1, members))
        start += size
    spines: list[str] = []
    start = 0
    while start < len(leaves):
        size = draw(st.integers(1, 3))
        spines.append(f"spine{len(spines)}")
        objects.append(_hypernode(spines[-1], 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": leaf}}}
                                                  for leaf in leaves[start:start + size]]))
        start += size
    if draw(st.booleans()):
        objects.append(_hypernode("root", 3, [{"type": "HyperNode", "selector": {"exactMatch": {"name": spine}}}
                                              for spine in spines]))
    objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                    "metadata": {"name": "q0"}, "spec": {"weight": 1}, "status": {"state": "Open"}})
    for j in range(draw(st.integers(1, 7))):
        size = draw(st.integers(1, 6 if sub_groups else 4))
        running = draw(st.integers(0, 2)) == 0
        pg_spec: dict = {"queue": "q0", "minMember": draw(st.integers(1, size))}
        parts = draw(st.integers(2, 3)) if sub_groups and size >= 2 and draw(st.booleans()) else 0
        if parts:
            per_part = (size + parts - 1) // parts
            policy: dict = {"name": "part", "subGroupSize": draw(st.sampled_from([per_part, per_part, 1, 2])),
                            "minSubGroups": draw(st.integers(0, parts)), "matchLabelKeys": ["part"]}
            if draw(st.booleans()):
                policy["networkTopology"] = {"mode": draw(st.sampled_from(["hard", "hard", "soft"])),
                                             "highestTierAllowed": draw(st.integers(1, 2))}
            pg_spec["subGroupPolicy"] = [policy]
        if roles and draw(st.booleans()):
            pg_spec["minTaskMember"] = {"a": draw(st.integers(1, (size + 1) // 2))}
        if draw(st.integers(0, 2)) > 0:
            pg_spec["networkTopology"] = {"mode": draw(st.sampled_from(["hard", "soft"])),
                                          "highestTierAllowed": draw(st.integers(1, 3))}
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": pg_spec, "status": {"phase": "Running" if running else "Pending"}})
        cpu = draw(st.sampled_from(["500m", "1", "2"]))
        for p in range(size):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"j{j}-{p}", "namespace": "ns", "uid": f"u-j{j}-{p}",
                                "annotations": {"scheduling.k8s.io/group-name": f"j{j}",
                                                **({"volcano.sh/task-spec": "ab"[p % 2]} if roles else {})},
                                **({"labels": {"part": f"p{p * parts // size}"}} if parts else {}),
                                "creationTimestamp": f"2026-01-01T00:01:{p:02d}Z"},
                   "spec": {"containers": [{"name": "c", "image": "img:1",
                                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
                   "status": {"phase": "Pending"}}
            if running:
                pod["spec"]["nodeName"] = f"n{draw(st.integers(0, n_nodes - 1)):03d}"
                pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:02:00Z"}
                if releasing and draw(st.booleans()):
                    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:03:00Z"
            elif nominated and draw(st.integers(0, 2)) == 0:
                pod["status"]["nominatedNodeName"] = f"n{draw(st.integers(0, n_nodes - 1)):03d}"
            objects.append(pod)
    return objects


def _hypernode(name: str, tier: int, members: list[dict]) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": members}}


_TOPOLOGY_POLICIES = ["best-effort", "restricted", "single-numa-node", "none"]


@st.composite
def gpu_numa_clusters(draw, max_nodes: int = 6) -> list[dict]:
    """Nodes with shareable GPUs (one to four cards, some unhealthy) and Numatopologies (one or
    two NUMA nodes, static or none CPU manager, every topology policy, some CPUs taken), and
    jobs of one to five pods asking GPU memory, whole cards or Guaranteed CPUs under a NUMA
    policy (or nothing), some running on a card: deviceshare's per-node tallies and numa-aware's
    free CPUs change between a job's tasks, and the fast engine must see every change."""
    n_nodes = draw(st.integers(1, max_nodes))
    objects: list[dict] = []
    for i in range(n_nodes):
        name = f"n{i:03d}"
        cpus = draw(st.sampled_from([4, 8]))
        alloc = {"cpu": str(cpus), "memory": f"{cpus * 2}Gi", "pods": "110"}
        metadata: dict = {"name": name, "labels": {"kubernetes.io/hostname": name}}
        cards = draw(st.integers(0, 4))
        if cards:
            alloc |= {"volcano.sh/gpu-memory": str(cards * draw(st.sampled_from([4000, 8000]))),
                      "volcano.sh/gpu-number": str(cards)}
            if draw(st.integers(0, 4)) == 0:
                metadata["annotations"] = {"volcano.sh/gpu-unhealthy-ids": str(draw(st.integers(0, cards - 1)))}
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": metadata,
                        "status": {"allocatable": alloc, "capacity": alloc}})
        if draw(st.integers(0, 3)):
            numas = draw(st.sampled_from([1, 2]))
            per = cpus // numas
            free = draw(st.sampled_from([f"0-{cpus - 1}", f"1-{cpus - 1}", f"{cpus // 2}-{cpus - 1}"]))
            detail = {str(c): {"numa": c // per, "socket": c // per, "core": c // 2} for c in range(cpus)}
            policies = {"CPUManagerPolicy": draw(st.sampled_from(["static", "static", "none"])),
                        "TopologyManagerPolicy": draw(st.sampled_from(_TOPOLOGY_POLICIES))}
            objects.append({"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology",
                            "metadata": {"name": name},
                            "spec": {"policies": policies, "cpuDetail": detail,
                                     "numares": {"cpu": {"allocatable": free, "capacity": cpus}}}})
    objects.append(queue_object("q0", {"weight": 1}))
    for j in range(draw(st.integers(1, 6))):
        size = draw(st.integers(1, 5))
        running = draw(st.integers(0, 3)) == 0
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": {"queue": "q0", "minMember": draw(st.integers(1, size))},
                        "status": {"phase": "Running" if running else "Pending"}})
        cpu = draw(st.sampled_from([1, 2, 3]))
        ask = draw(st.sampled_from(["memory", "memory", "number", "numa", "none"]))
        limits: dict = {}
        if ask == "memory":
            limits = {"volcano.sh/gpu-memory": str(draw(st.sampled_from([1000, 3000, 4000, 8000])))}
        elif ask == "number":
            limits = {"volcano.sh/gpu-number": str(draw(st.integers(1, 2)))}
        elif ask == "numa":
            limits = {"cpu": str(cpu), "memory": "1Gi"}
        for p in range(size):
            box = container(cpu, "1Gi")
            if limits:
                box["resources"]["limits"] = dict(limits)
            pod = gang_pod(f"j{j}-{p}", "ns", f"u-j{j}-{p}", f"j{j}", {"containers": [box]},
                           created=f"2026-01-01T00:01:{p:02d}Z")
            if ask == "numa" and draw(st.integers(0, 3)):
                pod["metadata"]["annotations"]["volcano.sh/numa-topology-policy"] = draw(
                    st.sampled_from(_TOPOLOGY_POLICIES))
            if running:
                run_on(pod, f"n{draw(st.integers(0, n_nodes - 1)):03d}", started="2026-01-01T00:02:00Z")
                if ask in ("memory", "number"):
                    pod["metadata"]["annotations"]["volcano.sh/gpu-index"] = str(draw(st.integers(0, 3)))
            objects.append(pod)
    return objects
