"""The fast engine's inter-pod affinity and topology spread (runtime/k8s/domain_counts.py) against
the reference scans (K8sView), node by node: over the live view as pods come and go, and over a
view a pre-predicate took, which must keep seeing the placements of that moment."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fumarole.runtime.framework import k8s_filters
from fumarole.runtime.framework.lifecycle import new_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.k8s import domain_counts
from fumarole.runtime.k8s.view import PodView
from tests.differential import bundle, clusters


def _sessions(objects: list[dict]) -> tuple[Session, Session]:
    return tuple(new_session(bundle("default"), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)
                 for engine in ("fast", "reference"))


def _pending(session: Session) -> list:
    return sorted((t for job in session.jobs.values() for t in job.tasks.values() if not t.node_name),
                  key=lambda t: t.key)


def _statuses(failure) -> list | None:
    return None if failure is None else failure.statuses


def _same_answers(fast: Session, reference: Session, task, fast_view=None, reference_view=None) -> None:
    """Every filter verdict and both scorers' scores, node by node."""
    for node, ref_node in zip(fast.node_list, reference.node_list):
        assert _statuses(k8s_filters.pod_affinity_failure(fast, task, node, fast_view)) == _statuses(
            k8s_filters.pod_affinity_failure(reference, task, ref_node, reference_view)), node.name
        assert _statuses(k8s_filters.topology_spread_failure(fast, task, node, fast_view)) == _statuses(
            k8s_filters.topology_spread_failure(reference, task, ref_node, reference_view)), node.name
    assert k8s_filters.placements_may_refuse(fast, task, fast_view) <= k8s_filters.placements_may_refuse(reference, task, reference_view)
    if fast_view is None:
        counts = fast.k8s.counts
        raw = domain_counts.inter_pod_affinity_raw(counts, task)
        expected = reference.k8s.inter_pod_affinity_scores(task, reference.node_list)
        assert (raw is None) == (expected is None)
        if raw is not None:
            assert domain_counts.normalised_affinity(raw).tolist() == list(expected.values())
        rows = fast.columns.all_batch().rows
        spread = domain_counts.spread_scores(counts, task, rows)
        expected = reference.k8s.topology_spread_scores(task, reference.node_list)
        assert (spread is None) == (expected is None)
        if spread is not None:
            assert spread.tolist() == list(expected.values())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=clusters(job_sizes=(1, 5), placement=True), data=st.data())
def test_counts_answer_as_the_scans_while_pods_come_and_go(objects: list[dict], data):
    fast, reference = _sessions(objects)
    pending = _pending(fast)
    for task in pending[:6]:
        _same_answers(fast, reference, task)
        # A view taken now (for the task that asks: a copied view holds what that task's filters
        # read) keeps seeing this moment while the live view changes.
        other = data.draw(st.sampled_from(pending))
        fast_view, reference_view = k8s_filters.pod_view(fast, other), k8s_filters.pod_view(reference, other)
        node = data.draw(st.integers(0, len(fast.node_list) - 1))
        placed = {}
        for session in (fast, reference):
            placed[session] = next(t for t in _pending(session) if t.key == task.key)
            placed[session].node_name = session.node_list[node].name
            k8s_filters.node_view_add(session, placed[session])
        _same_answers(fast, reference, other, fast_view, reference_view)
        _same_answers(fast, reference, other)
        # A dry run moves pods in the view alone.
        moved = data.draw(st.sampled_from(pending))
        at = data.draw(st.integers(0, len(fast.node_list) - 1))
        fast_view.add(moved, fast.node_list[at])
        reference_view.add(moved, reference.node_list[at])
        _same_answers(fast, reference, other, fast_view, reference_view)
        fast_view.remove(moved)
        reference_view.remove(moved)
        _same_answers(fast, reference, other, fast_view, reference_view)
        if data.draw(st.booleans()):  # and a pod leaves the live view
            for session in (fast, reference):
                k8s_filters.node_view_remove(session, placed[session])
            _same_answers(fast, reference, other, fast_view, reference_view)


def test_a_view_over_the_counts_copies_nothing_until_asked_for_its_placements():
    objects = _two_nodes_one_pod()
    fast, _ = _sessions(objects)
    task = _pending(fast)[0]
    view = k8s_filters.pod_view(fast, task)
    assert isinstance(view, PodView) and view.counts is fast.k8s.counts and view.delta == {}
    task.node_name = fast.node_list[1].name
    k8s_filters.node_view_add(fast, task)
    assert view.delta == {task.key: None}  # the live view changed: the view keeps the old placement
    assert task.key not in view.placed and task.key in fast.k8s.counts.where


def _two_nodes_one_pod() -> list[dict]:
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for i in range(2)]
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "j", "namespace": "ns"}, "spec": {"minMember": 1, "queue": "q"}}
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": 1}, "status": {"state": "Open"}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "j"},
                        "annotations": {"scheduling.k8s.io/group-name": "j"}},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "j"}}, "topologyKey": "kubernetes.io/hostname"}]}}},
           "status": {"phase": "Pending"}}
    return [*nodes, queue, group, pod]
