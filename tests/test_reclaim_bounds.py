"""Reclaim's victim bound (`may_reclaim_from`, docs/hooks.md "Victim bounds"): reclaim does not
ask `reclaimable` on nodes where no tier of it can name a victim, the decisions stay those of
asking on every node under any tiering, and the bound is trusted only while `reclaimable` is
Volcano's tiered intersection."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.objects import container, gang_pod, queue_object, run_on
from benchmarks.shapes import eviction_objects, in_a_hierarchy
from fumarole.runtime.api.model import BOUND, RUNNING
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.framework import dispatch
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from tests.differential import (bundle, decisions, decisions_and_questions, decisions_trying_every_node,
                                reclaim_clusters)
from tests.test_check import BUNDLE, check_json, write

RECLAIM_CONFIGS = ("reclaim-preempt-binpack", "reclaim-one-tier", "reclaim-proportion-first")


@pytest.mark.parametrize("config", RECLAIM_CONFIGS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters())
def test_the_bound_never_passes_over_a_node_with_victims(config: str, objects: list[dict]):
    """Gang and proportion bound their `reclaimable` answers; with them in one tier (answers
    intersected) or in two, either first, both engines decide what asking on every node decides."""
    fast = decisions(objects, config, "fast")
    assert fast == decisions_trying_every_node(objects, config, "fast")
    assert fast == decisions(objects, config, "reference")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters(hierarchy=True))
def test_the_hierarchical_drf_bound_never_passes_over_a_node_with_victims(objects: list[dict]):
    """drf with enableHierarchy bounds its `reclaimable` (a job gives way only if one of its
    requests would): both engines decide what asking on every node decides."""
    fast = decisions(objects, "reclaim-hdrf", "fast")
    assert fast == decisions_trying_every_node(objects, "reclaim-hdrf", "fast")
    assert fast == decisions(objects, "reclaim-hdrf", "reference")


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_hierarchical_drf_rules_out_nodes_where_no_job_gives_way(engine):
    """Under HDRF most nodes hold no job whose task would leave the reclaimer's queue first:
    `reclaimable` is asked on fewer than half of the nodes it was (without drf's bound its tier
    may always name victims)."""
    objects = in_a_hierarchy(eviction_objects(40, "priority"))
    bounded, asked = decisions_and_questions(objects, "reclaim-hdrf", engine, "reclaimable", "may_reclaim_from", True)
    unbounded, asked_everywhere = decisions_and_questions(objects, "reclaim-hdrf", engine, "reclaimable",
                                                          "may_reclaim_from", False)
    assert bounded == unbounded
    assert asked_everywhere > 300 and asked < asked_everywhere / 2


def _nothing_to_reclaim(nodes: int, reclaimers: int) -> list[dict]:
    """Full nodes, each running one 4-CPU task of a job held at its gang minimum (queue q0), and a
    starving job of ``reclaimers`` identical 4-CPU tasks (queue q1): gang lets nothing go."""
    objects: list[dict] = [queue_object(q, {"weight": 1, "reclaimable": True}) for q in ("q0", "q1")]
    for i in range(nodes):
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                   "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    for job, queue, size, minimum in (("held", "q0", nodes, nodes), ("starving", "q1", reclaimers, 1)):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": job, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
                        "spec": {"queue": queue, "minMember": minimum},
                        "status": {"phase": "Running" if job == "held" else "Pending"}})
        for p in range(size):
            pod = gang_pod(f"{job}-{p}", "ns", f"u-{job}-{p}", job, {"containers": [container(4, "1Gi")]},
                           created=f"2026-01-01T00:01:{p:02d}Z")
            objects.append(run_on(pod, f"n{p}") if job == "held" else pod)
    return objects


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_starving_jobs_tasks_ask_each_node_once_while_nothing_changes(engine):
    """Reclaim keeps what each node answered for the reclaimer's job and request until it evicts,
    places or rolls back: five identical tasks that find no victim ask each of three nodes once."""
    objects = _nothing_to_reclaim(nodes=3, reclaimers=5)
    made, asked = decisions_and_questions(objects, "reclaim-one-tier", engine, "may_reclaim_from",
                                          "may_reclaim_from", True, phase="reclaim")
    assert made == decisions_trying_every_node(objects, "reclaim-one-tier", engine)
    assert not made["evicted"] and asked == 3


def _asked(config: str, bounded: bool, engine: str = "fast") -> tuple[dict, int]:
    """The decisions on the 60-node priority shape and how often reclaim asked `reclaimable`."""
    return decisions_and_questions(eviction_objects(60, "priority"), config, engine, "reclaimable",
                                   "may_reclaim_from", bounded)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_nodes_with_nothing_to_take_are_not_asked(engine):
    """After preempt, most running jobs hold only their gang minimum and no queue is above its
    share: Volcano asks `reclaimable` on node after node and gets no victim."""
    bounded, asked = _asked("reclaim-preempt-binpack", True, engine)
    unbounded, asked_everywhere = _asked("reclaim-preempt-binpack", False, engine)
    assert bounded == unbounded
    assert asked_everywhere > 300 and asked < asked_everywhere / 2


def test_the_bound_answers_true_when_reclaimable_is_not_volcanos_intersection():
    """Under `intersect-all` a tier's empty answer is a veto, not a hand-over: the bound is not
    written for it, and rules nothing out."""
    config = config_from_document({"actions": "reclaim", "tiers": [{"plugins": [{"name": "gang"}]},
                                                                    {"plugins": [{"name": "proportion"}]}]})
    objects = eviction_objects(8, "priority")
    for combine, expected in (("intersect", False), ("intersect-all", True)):
        session = new_session(build_bundle(config, hook_overrides={"reclaimable": {"combine": combine}}),
                              cluster_from_objects(objects), now=1_800_000_000.0)
        open_session(session, "test")
        reclaimer = next(j for j in session.job_list if j.tasks_in("Pending")).tasks_in("Pending")[0]
        at_minimum = [j for j in session.job_list if j.ready_task_num == j.min_available]
        # No queue is above its share before any eviction, so proportion names no victim either.
        assert session.H.may_reclaim_from(reclaimer, at_minimum) is expected


def test_tier_bound_follows_the_tiers():
    """A tier may name victims only while each of its plugins' bounds holds (a plugin without
    one may name anything); a tier without plugins never decides; some tier must may."""
    yes, no = (lambda *_a: True), (lambda *_a: False)
    assert dispatch.tier_bound([[yes, no], [no]])() is False
    assert dispatch.tier_bound([[yes, no], [None, yes]])() is True
    assert dispatch.tier_bound([[no], [None]])() is True
    assert dispatch.tier_bound([[], [no]])() is False
    assert dispatch.tier_bound([[], []])() is False


def test_sum_bound_adds_the_bounds_of_every_plugin_of_the_bounded_hook():
    """One key's bound under a per-key sum: the sum of every taking-part plugin's bound, unbounded
    (the largest float) when one of them has no bound or answers none."""
    two, three = (lambda *_a: 2.0), (lambda *_a: 3.0)
    assert dispatch.sum_bound([[two], [three]])() == 5.0
    assert dispatch.sum_bound([[two], [None]])() == sys.float_info.max
    assert dispatch.sum_bound([[two, lambda *_a: None]])() == sys.float_info.max
    assert dispatch.sum_bound([[], []])() == 0.0


def test_tier_bound_combines_only_a_bound(cli, tmp_path):
    """`tier-bound` needs the session function it bounds: on any other it is refused, positioned."""
    write(tmp_path, {"b/bundle.yaml": BUNDLE + "hooks:\n  overused: {combine: tier-bound}\n"})
    status, report = check_json(cli, str(tmp_path / "b"))
    diag = next(d for d in report["diagnostics"] if d["code"] == "B012")
    assert status != 0
    assert "'tier-bound' cannot combine 'overused'" in diag["message"]
    assert (diag["line"], diag["column"]) == (5, 23)


def test_a_node_counts_its_holding_jobs_through_evictions_and_rollbacks():
    """`node.holding_jobs` is kept as tasks are evicted and the evictions undone, and matches a
    walk over the node's tasks."""
    session = new_session(bundle("reclaim-preempt-binpack"), cluster_from_objects(eviction_objects(8, "priority")),
                          now=1_800_000_000.0)
    open_session(session, "test")

    def walked(node) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in node.tasks.values():
            if task.status in (RUNNING, BOUND):
                counts[task.job_id] = counts.get(task.job_id, 0) + 1
        return counts

    node = session.node_list[0]
    before = walked(node)
    assert node.holding_jobs == before and before
    stmt = Statement(session)
    for task in [t for t in node.tasks.values() if t.status == RUNNING][:3]:
        stmt.evict(task, "reclaim")
    assert node.holding_jobs == walked(node) != before
    stmt.discard()
    assert node.holding_jobs == walked(node) == before
