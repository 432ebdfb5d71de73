"""The session's Kubernetes view as the predicates plugin reads and keeps it: the pods placed
per node (added and removed as the plugin's event handlers see them), a copy of it for
preempt's what-ifs, and the inter-pod affinity and topology spread filters over it with the
status codes Volcano gives their refusals.

Under the fast engine a filter's answer for every node comes from the counts per domain
(``k8s/domain_counts.py``); the reference engine scans the pods (``k8s/view.py``).

Standard-library functions (runtime/schema.yaml); each takes the session first, where the
schema's template passes ``_rt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from fumarole.runtime.api.fit import UNRESOLVABLE, UNSCHEDULABLE, FitError
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.framework.node_columns import NodeColumns
from fumarole.runtime.k8s import domain_counts
from fumarole.runtime.k8s.interpodaffinity import has_required_pod_terms
from fumarole.runtime.k8s.noderesources import view_appended, view_removed
from fumarole.runtime.k8s.podtopologyspread import has_hard_spread_constraints
from fumarole.runtime.k8s.view import PodView, UNRESOLVABLE_REASONS

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def node_view_add(session: Session, task: Task) -> None:
    node = session.nodes.get(task.node_name)
    if node is not None:
        if task.key in node.view_pods:
            node.view_pods[task.key] = task
            node.view_cache.clear()
        else:
            node.view_pods[task.key] = task
            view_appended(node, task)
        session.touch(node)
        session.k8s.placed(task, node)


def node_view_remove(session: Session, task: Task) -> None:
    node = session.nodes.get(task.node_name)
    if node is not None:
        left = node.view_pods.pop(task.key, None)
        if left is None:
            node.view_cache.clear()
        else:
            view_removed(node, left)
        session.touch(node)
        session.k8s.removed(task)


def pod_view(session: Session, task: Task) -> PodView:
    return session.k8s.pod_view(task)


def pod_affinity_failure(session: Session, task: Task, node: Node, view: PodView | None = None) -> FitError | None:
    """InterPodAffinity over the live view or a PodView: unmet required affinity is
    unresolvable, anti-affinity conflicts are not.  The fast engine reads its answer for every
    node from the counts per domain (domain_counts); the reference engine scans the pods."""
    reasons = _counted_reasons(session, domain_counts.affinity_reasons, task, view, node)
    if reasons is not None:  # answered from the counts: the fast engine's columns exist
        return _k8s_failure(reasons[cast(NodeColumns, session.columns).rows[node.name]])
    return _k8s_failure(session.k8s.pod_affinity_failure(task, node, view.placed if view is not None else None))


def affinity_prefilter_skips(session: Session, task: Task, view: PodView | None = None) -> bool:
    """InterPodAffinity's PreFilter returns Skip over the live view or a PodView: the task has no
    required pod terms and no placed pod's required anti-affinity reaches it.  Such a term would
    refuse at least its holder's node, so the fast engine asks whether the filter refuses the
    task anywhere (the answer its predicate reads next)."""
    if has_required_pod_terms(task):
        return False
    counts = session.k8s.counts
    if counts is not None and (view is None or view.counts is counts):
        if not counts.any_affinity({} if view is None else view.delta):
            return True
        refuses = domain_counts.refuses_somewhere(counts, domain_counts.affinity_reasons, task, view)
        if refuses is not None:
            return not refuses
    return session.k8s.affinity_prefilter_skips(task, view.placed if view is not None else None)


def topology_spread_failure(session: Session, task: Task, node: Node,
                            view: PodView | None = None) -> FitError | None:
    """PodTopologySpread over the live view or a PodView: a node without the topology label
    is unresolvable, skew is not.  Counts or scans, as :func:`pod_affinity_failure`."""
    if not has_hard_spread_constraints(task):
        return None
    reasons = _counted_reasons(session, domain_counts.spread_reasons, task, view, node)
    if reasons is not None:  # answered from the counts: the fast engine's columns exist
        return _k8s_failure(reasons[cast(NodeColumns, session.columns).rows[node.name]])
    return _k8s_failure(session.k8s.topology_spread_failure(task, node, view.placed if view is not None else None))


def placements_may_refuse(session: Session, task: Task, view: PodView | None = None) -> bool:
    """Whether inter-pod affinity or topology spread, over the live view or a PodView, could
    refuse the task anywhere: both filters' own first shortcuts, asked once per task.  The
    fast engine answers exactly (some node refused), so that a task only placed pods'
    anti-affinity could refuse keeps its predicate row-local when none does."""
    counts = session.k8s.counts
    if (counts is not None and (view is None or view.counts is counts)
            and not (has_required_pod_terms(task) or has_hard_spread_constraints(task)
                     or counts.any_affinity({} if view is None else view.delta))):
        return False  # nothing placed has terms and the task has none: the filters pass everywhere
    affinity = domain_counts.refuses_somewhere(counts, domain_counts.affinity_reasons, task, view)
    if affinity is not None:
        return affinity or (has_hard_spread_constraints(task)
                            and bool(domain_counts.refuses_somewhere(counts, domain_counts.spread_reasons, task, view)))
    placed = view.placed if view is not None else None
    return not session.k8s.affinity_cannot_refuse(task, placed) or has_hard_spread_constraints(task)


def _counted_reasons(session: Session, rows: domain_counts.Rows, task: Task, view: PodView | None,
                     node: Node | None = None):
    """A filter's reasons for every row from the fast engine's counts (None: the reference
    engine, a copied view, or a node the session does not have)."""
    if session.columns is None or (node is not None and node.name not in session.columns.rows):
        return None
    return domain_counts.answer(session.k8s.counts, rows, task, view)


def _k8s_failure(reason: str | None) -> FitError | None:
    """A Kubernetes filter's refusal as a fit error with the status code Kubernetes gives it."""
    if reason is None:
        return None
    return FitError([(UNRESOLVABLE if reason in UNRESOLVABLE_REASONS else UNSCHEDULABLE, reason)])
