"""The predicate helper's batch scan visits exactly what Volcano's node-by-node scan visits: the same
feasible nodes in the same order, the same fit errors (the job's error cache included) and the same
rotating start for the next task, whatever the start, the sample size and the failing nodes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.fit import UNRESOLVABLE, UNSCHEDULABLE, FitError
from fumarole.runtime.api.model import Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.node_columns import NodeColumns
from fumarole.runtime.framework.predicate_helper import PredicateHelper
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS
from fumarole.runtime.k8s.view import K8sView


def _scan(nodes, failing, start, tasks, engine_columns):
    """Each task's (feasible names, fit errors, next start) from one helper, scanning in turn."""
    passed = []  # nodes the per-node check found feasible: the batch scan never asks about one

    def check(task, node):
        code = failing.get((task.key, node.name))
        if code is None:
            passed.append(node.name)
        return None if code is None else FitError([(code, f"{code} on {node.name}")])

    check.batch = lambda task, batch: np.array([(task.key, n.name) in failing for n in batch.nodes])
    ssn = SimpleNamespace(predicate_start_index=start, options=DEFAULT_OPTIONS, node_list=nodes,
                          columns=engine_columns)
    helper, out = PredicateHelper(ssn), []
    for task in tasks:
        result = helper.predicate_nodes(task, nodes, check, True)
        out.append(([n.name for n in result.nodes],
                    [(name, e.statuses) for name, e in result.errors.nodes.items()], ssn.predicate_start_index))
    assert engine_columns is None or not passed  # the batch scan ran (it falls back node by node on an error)
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_batch_scan_visits_what_the_node_by_node_scan_visits(data):
    size = data.draw(st.sampled_from([3, 40, 101, 150, 230]), label="nodes")
    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(size)]
    tasks = [SimpleNamespace(key=f"ns/p{i}", job_id="ns/job", role=data.draw(st.sampled_from(["", "worker"])))
             for i in range(data.draw(st.integers(1, 4), label="tasks"))]
    rate = data.draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]), label="failing")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    failing = {(t.key, n.name): (UNRESOLVABLE if rng.random() < 0.5 else UNSCHEDULABLE)
               for t in tasks for n in nodes if rng.random() < rate}
    start = data.draw(st.integers(0, 3 * size), label="start")
    assert _scan(nodes, failing, start, tasks, NodeColumns(nodes, K8sView(nodes))) == \
        _scan(nodes, failing, start, tasks, None)
