"""Preempt's allocatable bound (`may_become_allocatable`, docs/hooks.md "Allocatable bounds"):
nodes whose evictions cannot make the preemptor's queue allocatable are not tried, the
decisions stay those of trying every node, and the bound is trusted only while `allocatable`
is an AND over its plugins."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.shapes import eviction_objects
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.framework.lifecycle import new_session, open_session, run_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from tests.differential import decisions, decisions_and_questions, decisions_trying_every_node, eviction_heavy_clusters

PREEMPTING = {"actions": "enqueue, allocate, preempt",
              "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                        {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
                                     {"name": "nodeorder"}]}]}


def _pod(name: str, job: str, cpu: int, node: str | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}",
                        "annotations": {"scheduling.k8s.io/group-name": job},
                        "creationTimestamp": "2026-01-01T00:01:00Z"},
           "spec": {"containers": [{"name": "c", "image": "img:1",
                                    "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}]},
           "status": {"phase": "Pending"}}
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:02:00Z"}
    return pod


def _group(name: str, queue: str, min_member: int, running: bool) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"queue": queue, "minMember": min_member},
            "status": {"phase": "Running" if running else "Pending"}}


def cluster(other_queue_cpus: int) -> list[dict]:
    """Two full 4-CPU nodes held by one job of queue q0 (4 pods on each, gang minimum 4), a
    pending 1-CPU job of q0, and q1 asking for ``other_queue_cpus``: q0 deserves the other
    8 - other_queue_cpus CPUs."""
    objects: list[dict] = []
    for n in ("n0", "n1"):
        alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                        "status": {"allocatable": alloc, "capacity": alloc}})
    for q in ("q0", "q1"):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                        "metadata": {"name": q}, "spec": {"weight": 1}, "status": {"state": "Open"}})
    objects.append(_group("running", "q0", 4, True))
    objects += [_pod(f"running-{i}", "running", 1, f"n{i % 2}") for i in range(8)]
    objects.append(_group("starving", "q0", 1, False))
    objects.append(_pod("starving-0", "starving", 1))
    objects.append(_group("other", "q1", 1, False))
    objects += [_pod(f"other-{i}", "other", 2) for i in range(other_queue_cpus // 2)]
    return objects


def _run(objects: list[dict], engine: str, monkeypatch, hooks: dict | None = None,
         config: dict | None = None) -> tuple[list, int]:
    """The evictions a session decides (under ``config``, PREEMPTING by default) and how many
    evictions it tried in all."""
    tried = []
    original = Session.evict_in_session
    monkeypatch.setattr(Session, "evict_in_session", lambda self, task: (tried.append(task.name),
                                                                        original(self, task))[1])
    session = new_session(build_bundle(config_from_document(config or PREEMPTING), hook_overrides=hooks),
                          cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)
    return run_session(session).evictions, len(tried)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_queue_far_over_its_share_tries_no_eviction(engine, monkeypatch):
    """q0 holds 8 CPUs and deserves 4: evicting one node's 4 CPUs leaves it at 4, and the
    preemptor's CPU does not fit.  Volcano evicts them on each node and rolls back."""
    evictions, tried = _run(cluster(4), engine, monkeypatch)
    assert (evictions, tried) == ([], 0)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_queue_one_node_can_bring_under_its_share_still_preempts(engine, monkeypatch):
    """q0 deserves 6 CPUs: evicting 3 of one node's tasks makes room in the queue and on the node."""
    evictions, tried = _run(cluster(2), engine, monkeypatch)
    assert evictions == [("ns/running-6", "preempt"), ("ns/running-4", "preempt"), ("ns/running-2", "preempt")]
    assert tried == 3


def test_the_bound_answers_true_when_allocatable_is_not_an_and(monkeypatch):
    """A bundle combining allocatable with `any` could allow what proportion refuses: the bound
    then rules nothing out, and preempt tries every node again (rolling the evictions back)."""
    evictions, tried = _run(cluster(4), "fast", monkeypatch, hooks={"allocatable": {"combine": "any"}})
    assert evictions == [] and tried == 8
    session = new_session(build_bundle(config_from_document(PREEMPTING), hook_overrides={"allocatable": {"combine": "any"}}),
                          cluster_from_objects(cluster(4)), now=1_800_000_000.0)
    open_session(session, "test")
    assert session.H.may_become_allocatable(session.queues["q0"], session.jobs["ns/starving"].tasks_in("Pending")[0],
                                            Resource())


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_eviction_rolled_back_leaves_no_trace(engine):
    """Skipping a trial is the same as trying it only if its rollback restores everything the
    later decisions read: drf's allocation of the victim's job (it was taken off twice, the
    job's own running sum being drf's too) and the order of the node's tasks (which candidates
    come first: gang gives up a job's first spare tasks)."""
    from fumarole.runtime.framework.statement import Statement

    session = new_session(build_bundle(config_from_document(PREEMPTING)), cluster_from_objects(cluster(4)),
                          now=1_800_000_000.0, engine=engine)
    open_session(session, "test")
    node = session.nodes["n0"]
    drf = session.plugin_state("drf")["allocated"]
    before = ({job.name: repr(r) for job, r in drf.items()}, list(node.tasks), repr(node.future_idle))
    stmt = Statement(session)
    for task in list(node.tasks.values())[:2]:
        stmt.evict(task, "preempt")
    assert repr(session.plugin_state("drf")["allocated"][session.jobs["ns/running"]]) == repr(
        Resource(milli_cpu=6000, memory=6 * 2**30, scalars={"pods": 6}))
    stmt.discard()
    drf = session.plugin_state("drf")["allocated"]
    assert ({job.name: repr(r) for job, r in drf.items()}, list(node.tasks), repr(node.future_idle)) == before


CAPACITY_PREEMPTING = {"actions": PREEMPTING["actions"],
                       "tiers": [PREEMPTING["tiers"][0],
                                 {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "capacity"},
                                              {"name": "nodeorder"}]}]}


def capped_cluster(capability_cpus: int) -> list[dict]:
    """`cluster`'s q0 with a capability of ``capability_cpus`` CPUs (it holds 8), the starving
    job already Inqueue (capacity's enqueue would hold it back: the point is preempt's search)."""
    objects = [o for o in cluster(0) if o["metadata"]["name"] != "q1"]
    for o in objects:
        if o["kind"] == "Queue":
            o["spec"]["capability"] = {"cpu": str(capability_cpus), "memory": "64Gi"}
        if o["kind"] == "PodGroup" and o["metadata"]["name"] == "starving":
            o["status"]["phase"] = "Inqueue"
    return objects


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_capacity_a_queue_far_over_its_capability_tries_no_eviction(engine, monkeypatch):
    """q0 holds 8 CPUs against a capability of 3: one node's 4 CPUs evicted leave it at 4, and the
    preemptor's CPU does not fit.  Without capacity's bound every node's victims were evicted and
    rolled back (8 trials); with `allocatable` combined by `any` the bound is not trusted."""
    assert _run(capped_cluster(3), engine, monkeypatch, config=CAPACITY_PREEMPTING) == ([], 0)
    assert _run(capped_cluster(3), engine, monkeypatch, hooks={"allocatable": {"combine": "any"}},
                config=CAPACITY_PREEMPTING) == ([], 8)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_capacity_a_queue_one_node_can_bring_within_its_capability_still_preempts(engine, monkeypatch):
    """A capability of 6 CPUs: evicting 3 of one node's tasks leaves 5, and the preemptor fits."""
    evictions, tried = _run(capped_cluster(6), engine, monkeypatch, config=CAPACITY_PREEMPTING)
    assert evictions == [("ns/running-6", "preempt"), ("ns/running-4", "preempt"), ("ns/running-2", "preempt")]
    assert tried == 3


def _preemptable_asked(bounded: bool, engine: str) -> tuple[dict, int]:
    """The decisions on the 40-node overshare shape and how often preempt asked `preemptable`."""
    return decisions_and_questions(eviction_objects(40, "overshare"), "reclaim-preempt-binpack", engine,
                                   "preemptable", "may_preempt_from", bounded, phase="preempt")


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_nodes_whose_jobs_give_up_nothing_are_not_asked(engine):
    """Equal priorities (priority names no victim) and jobs whose dominant share, less one task,
    is below the preemptor's (drf names none of their tasks): `preemptable` is not asked there
    (`may_preempt_from`, docs/hooks.md "Victim bounds"), and the decisions stay the same.
    Counted: 163 questions against 860 on every node (431 with drf's bound read from the jobs'
    whole shares)."""
    bounded, asked = _preemptable_asked(True, engine)
    unbounded, asked_everywhere = _preemptable_asked(False, engine)
    assert bounded == unbounded
    assert asked_everywhere > 500 and asked < asked_everywhere * 0.3


def _share_cluster(memories: tuple[str, ...], preemptor_cpus: int) -> list[dict]:
    """One 8-CPU, 8Gi node held by job `running` of q0 (a 1-CPU pod asking for each of
    ``memories``, in that order) and a pending job of q0 whose one pod asks for ``preemptor_cpus``
    CPUs and 1Gi."""
    alloc = {"cpu": "8", "memory": "8Gi", "pods": "110"}
    objects: list[dict] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}},
         "status": {"allocatable": alloc, "capacity": alloc}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": "q0"}, "spec": {"weight": 1}, "status": {"state": "Open"}},
        _group("running", "q0", 1, True), _group("starving", "q0", 1, False),
        _pod("starving-0", "starving", preemptor_cpus)]
    for i, memory in enumerate(memories):
        pod = _pod(f"running-{i}", "running", 1, "n0")
        pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = memory
        objects.append(pod)
    return objects


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("memories, preemptor_cpus, gives_up", [
    (("1Gi",) * 4, 4, False), (("1Gi",) * 4, 3, True),
    (("1Gi", "1Gi", "1Gi", "3Gi"), 6, False), (("1Gi", "1Gi", "1Gi", "3Gi"), 5, True)])
def test_drf_bounds_a_job_by_what_its_first_candidate_leaves(engine, memories: tuple[str, ...],
                                                             preemptor_cpus: int, gives_up: bool):
    """drf takes each candidate off its job before comparing shares, so the most a job's candidate
    can have is its job's share less one task.  Four 1Gi pods: 3/8 whatever the job's whole share
    (4/8), so a 4-CPU preemptor (4/8 placed) gets no victim and the bound says so, and a 3-CPU one
    (3/8, equal within drf's tolerance) gets victims.  One pod of 3Gi (a whole share of 6/8 by
    memory): a 1Gi pod taken off leaves 5/8, the 3Gi one 3/8, and the first candidate is a 1Gi
    pod, so the bound takes the larger: a 5-CPU preemptor (5/8) gets victims, a 6-CPU one none."""
    session = new_session(build_bundle(config_from_document(PREEMPTING)),
                          cluster_from_objects(_share_cluster(memories, preemptor_cpus)),
                          now=1_800_000_000.0, engine=engine)
    open_session(session, "test")
    preemptor = session.jobs["ns/starving"].tasks_in("Pending")[0]
    running = session.jobs["ns/running"]
    assert session.H.may_preempt_from(preemptor, [running]) is gives_up
    assert bool(session.H.preemptable(preemptor, list(running.tasks.values()))) is gives_up


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=eviction_heavy_clusters(mixed_requests=True))
def test_drf_bound_holds_for_jobs_of_mixed_requests(objects: list[dict]):
    """A job's tasks asking for different amounts leave different shares when taken off: drf's
    bound takes the largest, and both engines decide what asking `preemptable` on every node
    decides."""
    fast = decisions(objects, "reclaim-preempt-binpack", "fast")
    assert fast == decisions_trying_every_node(objects, "reclaim-preempt-binpack", "fast")
    assert fast == decisions(objects, "reclaim-preempt-binpack", "reference")
