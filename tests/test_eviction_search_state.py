"""The per-node state preempt and reclaim read for every node they consider, kept current instead
of re-derived per question: a node's future idle (worked out once per change of its accounting),
its holding jobs by queue (`node.holding_jobs_in`, `node.holding_queues`), proportion's
above-deserved flag, and `request <= a + b` compared without building the sum."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.shapes import eviction_objects
from fumarole.runtime.api.model import BOUND, RUNNING, DryRunNode
from fumarole.runtime.api.resource import ZERO, Resource, less_equal, less_equal_sum
from fumarole.policy_lang.driver import compile_checked
from fumarole.runtime.bundles.library import compile_sources
from fumarole.runtime.framework.job_info import holding_jobs_in, holding_queues, holding_tasks_in
from fumarole.runtime.framework.lifecycle import new_session
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.ingest.kube import cluster_from_objects
from tests.differential import bundle
from tests.helpers import checked

_AMOUNTS = st.sampled_from([0.0, 0.05, 1.0, 999.95, 1000.0, 1000.1, 2000.0, -1.0])
_SCALARS = st.one_of(st.none(), st.dictionaries(st.sampled_from(["pods", "nvidia.com/gpu", "x/y"]), _AMOUNTS,
                                               max_size=3))
_RESOURCES = st.builds(Resource, _AMOUNTS, _AMOUNTS, _SCALARS)


@settings(max_examples=300, deadline=None)
@given(l=_RESOURCES, a=_RESOURCES, b=_RESOURCES)
def test_less_equal_sum_is_less_equal_of_the_sum(l: Resource, a: Resource, b: Resource):
    assert less_equal_sum(l, a, b) == less_equal(l, a + b, ZERO)


_FITS = "module m\n\ndef fits(r: Resource, a: Resource, b: Resource) -> bool = r <= a + b\n"


def test_a_sum_on_the_right_of_a_resource_comparison_is_not_built():
    source = compile_checked(checked(_FITS, "m.policy")).source
    assert "less_equal_sum" in source and "less_equal(" not in source
    fits = compile_sources([("m.policy", _FITS)]).modules["m"].instantiate(None, None, {})["fits"]
    assert fits(Resource(3000, 10), Resource(1000, 5), Resource(2000, 5))
    assert not fits(Resource(3000, 10, {"x/y": 1.0}), Resource(1000, 5), Resource(2000, 5))


def _session():
    session = new_session(bundle("reclaim-preempt-binpack"), cluster_from_objects(eviction_objects(8, "priority")),
                          now=1_800_000_000.0)
    session.open()
    return session


def _fresh_future_idle(node) -> Resource:
    return node.idle.clone().add(node.releasing).sub(node.pipelined)


def test_future_idle_follows_evictions_pipelines_and_rollbacks():
    session = _session()
    node = session.node_list[0]
    before = node.future_idle.clone()
    assert less_equal(before, _fresh_future_idle(node)) and less_equal(_fresh_future_idle(node), before)
    stmt = Statement(session)
    victim = next(t for t in node.tasks.values() if t.status == RUNNING)
    stmt.evict(victim, "preempt")
    evicted = node.future_idle
    assert evicted.milli_cpu == before.milli_cpu + victim.request.milli_cpu == _fresh_future_idle(node).milli_cpu
    preemptor = next(t for job in session.jobs.values() for t in job.tasks.values() if t.status == "Pending")
    stmt.pipeline(preemptor, node, True)
    assert node.future_idle.milli_cpu == evicted.milli_cpu - preemptor.request.milli_cpu
    stmt.discard()
    assert node.future_idle.milli_cpu == before.milli_cpu == _fresh_future_idle(node).milli_cpu


def test_a_dry_run_copy_keeps_its_own_future_idle():
    session = _session()
    node = session.node_list[0]
    before = node.future_idle.milli_cpu
    copy = DryRunNode.of(node)
    task = next(t for t in copy.tasks.values() if t.status == RUNNING)
    copy.remove_task(task)
    assert copy.future_idle.milli_cpu == before + task.request.milli_cpu
    assert node.future_idle.milli_cpu == before


def test_holding_jobs_by_queue_follow_evictions_and_rollbacks():
    session = _session()
    node = session.node_list[0]

    def walked() -> dict[str, set[str]]:
        by_queue: dict[str, set[str]] = {}
        for task in node.tasks.values():
            if task.status in (RUNNING, BOUND):
                by_queue.setdefault(session.jobs[task.job_id].queue, set()).add(task.job_id)
        return by_queue

    def asked() -> dict[str, set[str]]:
        return {q.name: {j.uid for j in holding_jobs_in(session, node, q)} for q in holding_queues(session, node)}

    before = walked()
    assert asked() == before and before
    stmt = Statement(session)
    for task in [t for t in node.tasks.values() if t.status == RUNNING]:
        stmt.evict(task, "reclaim")
    assert asked() == walked() == {}
    stmt.discard()
    assert asked() == walked() == before


def test_holding_tasks_by_queue_follow_each_eviction_and_rollback_in_task_order():
    """node.holding_tasks_in(queue): preempt gathers its victims there, so after every eviction,
    pipeline and rollback it must be the node's Bound or Running tasks of the queue, in the order
    of the node's tasks, as a walk over them finds."""
    session = _session()
    node = max(session.node_list, key=lambda n: len(n.tasks))
    queues = [session.queues[name] for name in sorted({session.jobs[t.job_id].queue for t in node.tasks.values()})]

    def walked() -> dict[str, list[str]]:
        return {q.name: [t.key for t in node.tasks.values() if t.status in (RUNNING, BOUND)
                         and session.jobs[t.job_id].queue == q.name] for q in queues}

    def asked() -> dict[str, list[str]]:
        return {q.name: [t.key for t in holding_tasks_in(session, node, q)] for q in queues}

    before = walked()
    assert asked() == before and sum(len(keys) for keys in before.values()) >= 2
    stmt = Statement(session)
    for task in [t for t in node.tasks.values() if t.status == RUNNING]:
        stmt.evict(task, "preempt")
        assert asked() == walked() != before
    preemptor = next(t for job in session.jobs.values() for t in job.tasks.values() if t.status == "Pending")
    stmt.pipeline(preemptor, node, True)
    assert asked() == walked()
    stmt.discard()
    assert asked() == walked() == before
