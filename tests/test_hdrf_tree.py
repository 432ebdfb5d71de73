"""drf's HDRF tree kept as allocations change (policies/volcano/plugins/drf.policy): an eviction, a
placement or their rollback works out again only the changed job and the inner nodes on its
queue's path, each from the sum the tree kept before the changed child when the smallest
unsaturated share stays (the whole tree when the resources the cluster is short of change), and
the tree it keeps, with how it worked out each node, is the one worked out whole from the
allocations, to the bit."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchmarks.objects import container, gang_pod, queue_object, run_on
from fumarole.runtime.api.model import PENDING, RUNNING
from fumarole.runtime.api.resource import Resource, share
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.ingest.kube import cluster_from_objects
from tests.differential import bundle, reclaim_clusters


def _whole_tree(state: dict, total: Resource) -> dict[str, tuple]:
    """updateHierarchicalShare over the whole tree from drf's allocations, children before
    parents, in the order drf adds children up: each inner node's (allocation, share, saturated)."""
    return {node: figures[:3] for node, figures in _whole_records(state, total).items()}


def _whole_records(state: dict, total: Resource) -> dict[str, tuple]:
    """Each inner node of the whole tree as `_whole_tree` works it out, with what drf keeps of how:
    (allocation, share, saturated, the smallest unsaturated share among its children, how many
    unsaturated children have it, how many are unsaturated, and per child its share, its
    saturation, whether it adds, what it adds and the sum before it, then the node's sum)."""
    allocated = state["allocated"]
    names = total.resource_names()
    demanding = [n for n in names if state["total_allocated"].get(n) < total.get(n)]

    def dominant(r: Resource) -> float:
        return max([0.0] + [share(r.get(n), total.get(n)) for n in names])

    def saturated(alloc: Resource, request: Resource) -> bool:
        return any((alloc.get(n) != 0 and request.get(n) != 0 and alloc.get(n) >= request.get(n))
                   or (n not in demanding and request.get(n) != 0) for n in alloc.resource_names())

    tree: dict[str, tuple] = {}
    for node in reversed(state["tree_nodes"]):
        children = [(allocated[j], dominant(allocated[j]), saturated(allocated[j], j.total_request))
                    for j in state["node_jobs"][node]] + [tree[sub][:3] for sub in state["sub_nodes"][node]]
        mdr = min([1.0] + [s for _a, s, sat in children if s != 0 and not sat])
        alloc, terms, sums = Resource(), [], []
        for a, s, sat in children:
            sums.append(alloc)
            terms.append(a if sat or s == 0 else a * (mdr / s))
            if s != 0:
                alloc = alloc + terms[-1]
        tree[node] = (alloc, dominant(alloc), all(sat for _a, _s, sat in children), mdr,
                      sum(1 for _a, s, sat in children if s != 0 and not sat and s == mdr),
                      sum(1 for _a, _s, sat in children if not sat),
                      [s for _a, s, _sat in children], [sat for _a, _s, sat in children],
                      [s != 0 for _a, s, _sat in children], terms, sums + [alloc])
    return tree


def _kept_and_whole(session) -> tuple[dict, dict]:
    """The tree drf keeps (allocations, shares, saturations, and how it worked out each node), and
    the one worked out whole from its allocations now."""
    state = session.plugin_state("drf")  # the values now (a reassigned variable is a new value)
    kept = {node: tuple(state[key]["tree"][node] for key in (
        "node_alloc", "node_share", "node_saturated", "node_mdr", "node_ties", "node_unsaturated",
        "node_child_shares", "node_child_saturated", "node_adds", "node_terms", "node_sums"))
        for node in state["tree_nodes"]}
    return _exact(kept), _exact(_whole_records(state, session.total_resource))


def _exact(tree: dict[str, tuple]) -> dict[str, tuple]:
    """Every figure as its exact float (Resource's == allows an epsilon)."""
    def exact(value):
        if isinstance(value, Resource):
            return (value.milli_cpu, value.memory, sorted((value.scalars or {}).items()))
        return [exact(v) for v in value] if isinstance(value, list) else value
    return {node: tuple(exact(v) for v in figures) for node, figures in tree.items()}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters(hierarchy=True), steps=st.lists(st.tuples(st.sampled_from(["evict", "place", "undo"]),
                                                                          st.integers(0, 10_000)),
                                                                min_size=1, max_size=12))
def test_the_tree_kept_through_evictions_placements_and_rollbacks_is_the_whole_tree(objects, steps):
    """Evictions and placements of tasks of any job and queue, and statements rolled back,
    leave drf with the tree worked out whole from its allocations after every step."""
    session = new_session(bundle("reclaim-hdrf"), cluster_from_objects(objects), now=1_800_000_000.0)
    open_session(session, "test")
    kept, whole = _kept_and_whole(session)
    assert kept == whole
    stmt = Statement(session)
    for kind, pick in steps:
        if kind == "undo":
            stmt.discard()
        else:
            status = RUNNING if kind == "evict" else PENDING
            tasks = [t for job in session.job_list for t in job.tasks_in(status)]
            if not tasks:
                continue
            task = tasks[pick % len(tasks)]
            if kind == "evict":
                stmt.evict(task, "reclaim")
            else:
                stmt.pipeline(task, session.node_list[pick % len(session.node_list)], False)
        kept, whole = _kept_and_whole(session)
        assert kept == whole


def _comes_first_whole(session, reclaimer, candidate) -> bool:
    """Whether the reclaimer's queue comes first in the whole tree worked out with the reclaimer
    placed and the candidate taken off its job (drf's `reclaimable` trial, worked out whole)."""
    state = session.plugin_state("drf")
    job, victim_job = session.jobs[reclaimer.job_id], session.jobs[candidate.job_id]
    allocated = dict(state["allocated"])
    allocated[job] = allocated[job] + reclaimer.request
    allocated[victim_job] = allocated[victim_job] - candidate.request
    total = state["total_allocated"] + reclaimer.request - candidate.request
    tree = _whole_tree({**state, "allocated": allocated, "total_allocated": total}, session.total_resource)
    paths = {queue.name: path for queue, path in state["paths"].items()}
    for l, r in zip(paths[job.queue], paths[victim_job.queue]):
        (_la, l_share, l_saturated), (_ra, r_share, r_saturated) = tree[l], tree[r]
        if l_saturated != r_saturated:
            return r_saturated
        l_value, r_value = l_share / state["weight"][l], r_share / state["weight"][r]
        if l_value != r_value:
            return l_value < r_value
    return False


def _full_cluster(pending: list[tuple[int, int]]) -> list[dict]:
    """Five full 4-CPU nodes, three queues under the root, and pending jobs in q2 (CPUs and
    tasks of each)."""
    jobs = [("q0", 1, [0, 0, 0, 0]), ("q1", 1, [1, 1, 1, 1]), ("q2", 1, [2]), ("q0", 1, [2]),
            ("q1", 2, [2, 3, 3]), ("q2", 2, [4, 4])] + [("q2", cpu, [None] * tasks) for cpu, tasks in pending]
    return _cluster(5, [("root/q0", "1/1"), ("root/q1", "1/1"), ("root/q2", "1/1")], jobs)


def _cluster(nodes: int, queues: list[tuple[str, str]], jobs: list[tuple[str, int, list[int | None]]]) -> list[dict]:
    """4-CPU nodes, queues q0, q1... at the given paths and weights of the tree, and jobs (queue,
    CPUs of each task, the node of each task or None: pending) asking 1Gi a task."""
    objects = [{"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                           "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(nodes)]
    for q, (path, weights) in enumerate(queues):
        objects.append(queue_object(f"q{q}", {"weight": 1, "reclaimable": False}))
        objects[-1]["metadata"]["annotations"] = {"volcano.sh/hierarchy": path,
                                                  "volcano.sh/hierarchy-weights": weights}
    for j, (queue, cpu, placement) in enumerate(jobs):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": {"queue": queue, "minMember": 1},
                        "status": {"phase": "Pending" if placement[0] is None else "Running"}})
        for p, node in enumerate(placement):
            pod = gang_pod(f"j{j}-{p}", "ns", f"u-j{j}-{p}", f"j{j}", {"containers": [container(cpu, "1Gi", "c", "img:1")]},
                           {"app": f"j{j}"}, created="2026-01-01T00:01:00Z")
            if node is not None:
                run_on(pod, f"n{node:03d}", started="2026-01-01T00:02:00Z")
            objects.append(pod)
    return objects


def _one_task_smaller(objects: list[dict], pod: str) -> list[dict]:
    """The cluster with one pod asking one CPU (its job's other tasks ask more)."""
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"]["name"] == pod:
            o["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    return objects


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters(hierarchy=True), steps=st.lists(st.tuples(st.sampled_from(["evict", "place", "undo"]),
                                                                          st.integers(0, 10_000)),
                                                                min_size=1, max_size=8),
       picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=4))
# Once j0's first task is evicted the cluster has a CPU to spare, and j0 holds less than it asks
# for (unsaturated); a trial taking a 1-CPU task for a 2-CPU reclaimer leaves no CPU to spare, so
# every job asking for CPU counts as saturated there (the alternative tree).
@example(objects=_full_cluster([(2, 2)]), steps=[("evict", 0)], picks=[0])
# j0 evicted, one task of j6 and two of j7 placed: in q2's leaf j6 alone has the smallest
# unsaturated share, which placing its next task (the reclaimer) raises to j7's.
@example(objects=_full_cluster([(1, 4), (1, 4)]), steps=[("evict", 0)] * 4 + [("place", 0), ("place", 3), ("place", 3)],
         picks=[0])
# A victim's queue node as one trial worked it out serves the trials after it that take the same
# allocation off the same job, for any reclaimer: here j4's tasks ask 1 and 2 CPUs (two
# allocations in trials), and evictions in q0 and q1 change those nodes between the reclaimers'
# trials.
@example(objects=_one_task_smaller(_full_cluster([(1, 4), (2, 2)]), "j4-0"),
         steps=[("evict", 0), ("evict", 4), ("evict", 5), ("place", 0), ("evict", 0), ("evict", 2)], picks=[0, 1, 5, 6])
# ...but not when the victim's node is on the reclaimer's path: j4 (in q2) tries j2 in its own
# queue, then j3 (in q1) tries j2: q2's node with j4 placed is not q2's node for j3's trial.
@example(objects=_cluster(2, [("root/a/q0", "1/4/1"), ("root/q1", "1/4"), ("root/a/q2", "1/1/1"), ("root/q3", "1/1")],
                          [("q0", 1, [0]), ("q1", 1, [0, 0]), ("q2", 2, [1, 1]), ("q1", 2, [None]), ("q2", 1, [None])]),
         steps=[("evict", 1)], picks=[1, 0])
def test_each_trial_answers_as_the_whole_tree_worked_out_for_it(objects, steps, picks):
    """drf's `reclaimable` and its bound work out a trial along the two queues' paths, from the
    tree or from the alternative tree for what the trial leaves the cluster short of, reusing the
    kept reclaimer's nodes and the tree's per-child terms: every candidate's verdict is the one
    the whole tree worked out for the trial gives, after any evictions, placements and
    rollbacks, for reclaimer after reclaimer."""
    session = new_session(bundle("reclaim-hdrf"), cluster_from_objects(objects), now=1_800_000_000.0)
    open_session(session, "test")
    reclaimable = session.plugin_hook("drf", "reclaimable")
    may_reclaim_from = session.plugin_hook("drf", "may_reclaim_from")
    stmt = Statement(session)
    for kind, pick in steps:
        if kind == "undo":
            stmt.discard()
            continue
        status = RUNNING if kind == "evict" else PENDING
        tasks = [t for job in session.job_list for t in job.tasks_in(status)]
        if tasks:
            task = tasks[pick % len(tasks)]
            if kind == "evict":
                stmt.evict(task, "reclaim")
            else:
                stmt.pipeline(task, session.node_list[pick % len(session.node_list)], False)
        pending = [t for job in session.job_list for t in job.tasks_in(PENDING)]
        for reclaimer_pick in picks if pending else []:
            reclaimer = pending[reclaimer_pick % len(pending)]
            running = [t for job in session.job_list if job.uid != reclaimer.job_id for t in job.tasks_in(RUNNING)]
            victims = [c for c in running if _comes_first_whole(session, reclaimer, c)]
            assert reclaimable(reclaimer, running)[0] == victims  # (victims, how the plugin answered)
            others = [job for job in session.job_list if job.uid != reclaimer.job_id]
            assert may_reclaim_from(reclaimer, others) == any(
                _comes_first_whole(session, reclaimer, t) for job in others for t in job.tasks.values())
