"""What Volcano's ``util/scheduler_helper.go`` and ``api/unschedule_info.go`` give the actions:
fit errors, the nodes a task's recorded errors leave, and picking nodes by score; and nodes read
through a map by node name (a score worked out once per group of nodes, then given to each node).

Standard-library functions (runtime/schema.yaml); each but the last two takes the session first,
where the schema's template passes ``_rt``.  A session's observer (an explanation or a trace) is told
of every fit error made and every set of node scores read.
"""

from __future__ import annotations

from math import isnan
from typing import TYPE_CHECKING, Sequence

import numpy as np

from fumarole.runtime.api.fit import UNSCHEDULABLE, FitError, FitErrors
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.framework.node_keys import count_keys, values_of_names

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def fit_error(session: Session, reason: str) -> FitError:
    """An Unschedulable fit error (NewFitErrWithStatus)."""
    if session.observer is not None:
        session.observer.fit_error_made(reason)
    return FitError([(UNSCHEDULABLE, reason)])


def fit_errors_for_all(session: Session, task: Task, error: FitError) -> FitErrors:
    """The same error recorded on every node of the session (FitErrors.SetNodeError for each)."""
    return fit_errors_on(session.node_list, error)


def fit_errors_on(nodes: Sequence[Node], error: FitError) -> FitErrors:
    """The same error recorded on each of these nodes: allocate records a failed pre-predicate on
    the nodes of the HyperNode it was trying, not on every node."""
    return FitErrors({node.name: error for node in nodes})


def filter_out_unresolvable_nodes(session: Session, task: Task) -> list[Node]:
    """FilterOutUnschedulableAndUnresolvableNodesForTask."""
    job = session.jobs.get(task.job_id)
    errors = job.fit_errors.get(task.uid) if job is not None else None
    nodes = session.node_list
    columns = session.columns
    unresolvable = errors.unresolvable_nodes() if errors is not None else set()
    kept: np.ndarray | Sequence[int]
    if not unresolvable:  # every node (most recorded errors can be resolved): the fast engine's rows as they are
        kept = columns.all_rows if columns is not None else range(len(nodes))
    else:
        kept = [i for i, n in enumerate(nodes) if n.name not in unresolvable]
    # The fast engine's batches over them gather rows instead of looking each node up.
    return columns.nodes_of(kept, in_order=True) if columns is not None else [nodes[i] for i in kept]


def select_best(session: Session, scores: dict) -> Node | None:
    """SelectBestNode, with ties to the first node in order (Volcano picks at random)."""
    if session.observer is not None:
        session.observer.nodes_scored(scores)
    best, best_score = None, None
    for node, score in scores.items():
        if best_score is None or score > best_score:
            best, best_score = node, score
    return best


def sort_by_score(session: Session, scores: dict) -> list[Node]:
    """SortNodes: by descending score, ties in order.  Python's sort stays stable in reverse, so
    without a NaN (which orders nothing) the scores as keys, reversed, give the order of their
    negations, without a Python call per node."""
    if session.observer is not None:
        session.observer.nodes_scored(scores)
    if any(map(isnan, scores.values())):
        return sorted(scores, key=lambda node: -scores[node])
    return sorted(scores, key=scores.__getitem__, reverse=True)


def nodes_per_key(nodes: Sequence[Node], keys: dict) -> dict:
    """How many of the nodes each key holds (``keys[node.name]``), keys in the order the nodes
    first name them; a node whose name ``keys`` lacks is left out."""
    return count_keys([node.name for node in nodes], keys)


def values_by_key(nodes: Sequence[Node], keys: dict, values: dict, default: float) -> dict[Node, float]:
    """Each node's value under its key, ``values[keys[node.name]]``; ``default`` for a node whose
    name ``keys`` lacks (a key ``values`` lacks: KeyError, a policy failure)."""
    return dict(zip(nodes, values_of_names([node.name for node in nodes], keys, values, default)))
