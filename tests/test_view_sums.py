"""A node's view keeps the sums of its pods' requests (noderesources.view_requested and
view_nonzero_requested) through pods joining and leaving: a pod leaving a sum of whole amounts is
taken off it (view_removed) instead of the rest being added up again.  Whatever the amounts, every
kept sum is, to the bit and down to its scalars' names, order and absence, the sum added up afresh
over the pods left."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.resource import Resource
from fumarole.runtime.k8s import noderesources
from tests.test_k8s import make_node, make_pod

# Whole amounts mostly, one close below 2^53 (where whole floats stop adding up exactly), and
# fractions whose sums round.
AMOUNTS = st.one_of(st.sampled_from([0.0, 1.0, 3.0, 1000.0, 2.0 ** 30]), st.sampled_from([2.0 ** 53 - 2.0, 0.1, 0.2]))
# Scalars as a cluster may hold them: floats, and ints, a huge one among them.
SCALAR_AMOUNTS = st.one_of(AMOUNTS, st.sampled_from([1, 2 ** 40, 2 ** 60 + 1]))
SCALARS = st.one_of(st.none(), st.just({}), st.dictionaries(st.sampled_from(["pods", "nvidia.com/gpu"]),
                                                             SCALAR_AMOUNTS, min_size=1, max_size=2))
CONTAINERS = st.sampled_from([[{}], [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                              [{"resources": {"requests": {"cpu": "1500m"}}}]])
POD = st.tuples(AMOUNTS, AMOUNTS, SCALARS, CONTAINERS)
# Each step: a pod joins (its requests), or the pod at a position of the view leaves.
STEPS = st.lists(st.one_of(POD, st.integers(0, 7)), max_size=24)


def _bits(total: Resource) -> tuple:
    scalars = None if total.scalars is None else [(k, v.hex()) for k, v in total.scalars.items()]
    return total.milli_cpu.hex(), total.memory.hex(), scalars, total.max_task_num


def _afresh(node, term) -> tuple:
    total = Resource()
    for task in node.view_pods.values():
        total.add(term(task))
    return _bits(total)


@settings(max_examples=300, deadline=None)
@given(STEPS, st.booleans())
def test_kept_sums_are_the_sums_added_up_afresh(steps, read_between):
    node, made = make_node("n1"), 0
    for step in steps:
        if isinstance(step, int):
            if not node.view_pods:
                continue
            key = list(node.view_pods)[step % len(node.view_pods)]
            noderesources.view_removed(node, node.view_pods.pop(key))
        else:
            cpu, memory, scalars, containers = step
            task = make_pod(f"p{made}", node="n1", containers=containers)
            task.request = Resource(cpu, memory, None if scalars is None else dict(scalars))
            made += 1
            node.view_pods[task.key] = task
            noderesources.view_appended(node, task)
        if read_between:
            assert _bits(noderesources.view_requested(node)) == _afresh(node, lambda t: t.request)
            assert _bits(noderesources.view_nonzero_requested(node)) == _afresh(node, noderesources.nonzero_request)
    assert _bits(noderesources.view_requested(node)) == _afresh(node, lambda t: t.request)
    assert _bits(noderesources.view_nonzero_requested(node)) == _afresh(node, noderesources.nonzero_request)


def test_a_leaving_pod_is_taken_off_a_whole_sum():
    """Two pods of whole requests (and the "pods" scalar): the one left is the sum, kept, not added up."""
    node = make_node("n1")
    pods = [make_pod("a", node="n1"), make_pod("b", node="n1")]
    for task in pods:
        node.view_pods[task.key] = task
        noderesources.view_appended(node, task)
    assert noderesources.view_requested(node).scalars == {"pods": 2.0}
    noderesources.view_removed(node, node.view_pods.pop(pods[0].key))
    assert node.view_cache["requested"].scalars == {"pods": 1.0}  # kept through the removal
    noderesources.view_removed(node, node.view_pods.pop(pods[1].key))
    kept = node.view_cache["requested"]
    assert (kept.milli_cpu, kept.memory, kept.scalars) == (0.0, 0.0, None)


def test_a_scalar_only_the_leaving_pod_carried_goes_with_it():
    """Whole sums of pods with different scalars: adding up the pods left has no name the leaving
    pod alone carried, so the sum is added up again rather than taken off."""
    node = make_node("n1")
    pods = [make_pod("a", node="n1"), make_pod("b", node="n1")]
    pods[1].request = Resource(1000, 1024, {"pods": 1.0, "nvidia.com/gpu": 1.0})
    for task in pods:
        node.view_pods[task.key] = task
        noderesources.view_appended(node, task)
    assert noderesources.view_requested(node).scalars == {"pods": 2.0, "nvidia.com/gpu": 1.0}
    noderesources.view_removed(node, node.view_pods.pop(pods[1].key))
    assert _bits(noderesources.view_requested(node)) == _afresh(node, lambda t: t.request)
