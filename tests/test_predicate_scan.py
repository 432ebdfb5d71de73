"""The predicate helper's batch scan visits exactly what Volcano's node-by-node scan visits: the same
feasible nodes in the same order, the same fit errors wherever they are read (a scan that found no
node, the job's error cache) and the same rotating start for the next task, whatever the start, the
sample size and the failing nodes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.fit import UNRESOLVABLE, UNSCHEDULABLE, FitError
from fumarole.runtime.api.model import Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.batch_forms import BatchForm, BatchForms, EngineDisagreement
from fumarole.runtime.framework.node_columns import NodeColumns
from fumarole.runtime.framework.predicate_helper import PredicateHelper
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS, HARD_SHARDING, SchedulerOptions
from fumarole.runtime.k8s.view import K8sView


def _scan(nodes, failing, start, tasks, engine_columns, shard=None):
    """Each task's (feasible names, fit errors, next start) from one helper, scanning in turn; the fit
    errors of a scan that found nodes only where the error cache keeps them (a task with a role).
    ``shard``: the nodes of the scheduler's shard in hard sharding mode (None: no sharding)."""
    passed = []  # nodes the per-node check found feasible: the batch scan never asks about one

    def check(task, node):
        code = failing.get((task.key, node.name))
        if code is None:
            passed.append(node.name)
        return None if code is None else FitError([(code, f"{code} on {node.name}")])

    forms = BatchForms()
    forms.add(check, BatchForm(lambda task, batch: np.array([(task.key, n.name) in failing for n in batch.nodes])))
    options = DEFAULT_OPTIONS if shard is None else SchedulerOptions(sharding_mode=HARD_SHARDING)
    ssn = SimpleNamespace(predicate_start_index=start, predicate_scans=0, options=options, node_list=nodes,
                          columns=engine_columns, batch_forms=forms, nodes_in_shard=shard)
    helper, out = PredicateHelper(ssn), []
    for task in tasks:
        result = helper.predicate_nodes(task, nodes, check, True)
        read = not result.nodes or task.role
        out.append(([n.name for n in result.nodes],
                    [(name, e.statuses) for name, e in result.errors.nodes.items()] if read else None,
                    ssn.predicate_start_index))
    assert engine_columns is None or not passed  # the batch scan ran, asking per node only about failing nodes
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
    in_shard = data.draw(st.sampled_from([None, 0.0, 0.3, 0.8]), label="hard shard")
    shard = None if in_shard is None else frozenset(n.name for n in nodes if rng.random() < in_shard)
    assert _scan(nodes, failing, start, tasks, NodeColumns(nodes, K8sView(nodes)), shard) == \
        _scan(nodes, failing, start, tasks, None, shard)


def _one_task_scan(batch_fails, node_fails, checked: bool, raises: Exception | None = None):
    """A scan of four nodes for one task whose batch form answers ``batch_fails`` (or raises) and
    whose per-node check answers ``node_fails``: the feasible names."""
    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(4)]

    def check(task, node):
        return FitError([(UNRESOLVABLE, "no")]) if node.name in node_fails else None

    def batch(task, lanes):
        if raises is not None:
            raise raises
        return np.array([n.name in batch_fails for n in lanes.nodes])
    forms = BatchForms(checked=checked)
    forms.add(check, BatchForm(batch))
    ssn = SimpleNamespace(predicate_start_index=0, predicate_scans=0, options=DEFAULT_OPTIONS, node_list=nodes,
                          columns=NodeColumns(nodes, K8sView(nodes)), batch_forms=forms)
    task = SimpleNamespace(key="ns/p", job_id="ns/job", role="")
    return [n.name for n in PredicateHelper(ssn).predicate_nodes(task, nodes, check, True).nodes]


def test_a_batch_form_refusing_a_node_its_per_node_check_accepts_is_a_disagreement():
    """The scan's own check (a failing lane's per-node fit error) used to be swallowed by the fallback
    it raised into; checking the engines it surfaces.  Without checking, a scan that found no node
    asks each failing node for its fit error, and the per-node answer wins; one that found nodes asks
    none (no action reads its errors), so the form's answer stands, as a feasible lane's does."""
    with pytest.raises(EngineDisagreement, match="node n1"):
        _one_task_scan({"n1"}, set(), checked=True)
    assert _one_task_scan({"n0", "n1", "n2", "n3"}, set(), checked=False) == ["n0", "n1", "n2", "n3"]
    assert _one_task_scan({"n1"}, set(), checked=False) == ["n0", "n2", "n3"]


def test_a_batch_form_accepting_a_node_its_per_node_check_refuses_is_a_disagreement_when_checked():
    with pytest.raises(EngineDisagreement, match="node n2"):
        _one_task_scan(set(), {"n2"}, checked=True)


def test_a_batch_form_failing_with_anything_but_a_policy_failure_is_not_retried_node_by_node():
    """A bug in a batch form surfaces; only a policy failure (a missing key...) hands over to the scan."""
    with pytest.raises(TypeError, match="a fast-engine bug"):
        _one_task_scan(set(), set(), checked=False, raises=TypeError("a fast-engine bug"))
    assert _one_task_scan(set(), {"n0"}, checked=True, raises=KeyError("zone")) == ["n1", "n2", "n3"]


def test_the_nodes_a_task_without_unresolvable_fit_errors_may_use_are_the_session_rows_as_they_are():
    """filter_out_unresolvable_nodes keeps every node of a task with no recorded fit error that is
    unresolvable: the fast engine hands the scan its own rows (no conversion per attempt, the scan
    then reads them as the run they are); a node whose recorded error is unresolvable is left out."""
    from benchmarks.shapes import eviction_objects
    from fumarole.runtime.api.fit import FitErrors
    from fumarole.runtime.bundles.bundle import default_bundle
    from fumarole.runtime.framework.lifecycle import new_session, open_session
    from fumarole.runtime.framework.scheduler_helper import filter_out_unresolvable_nodes
    from fumarole.runtime.ingest.kube import cluster_from_objects

    for engine in ("fast", "reference"):
        session = new_session(default_bundle(), cluster_from_objects(eviction_objects(8, "overshare")),
                              now=1_800_000_000.0, engine=engine)
        open_session(session, "test")
        job = next(j for j in session.job_list if j.tasks_in("Pending"))
        task = job.tasks_in("Pending")[0]
        kept = filter_out_unresolvable_nodes(session, task)
        assert list(kept) == list(session.node_list)
        if engine == "fast":
            assert kept.rows is session.columns.all_rows
        first = session.node_list[0]
        job.fit_errors[task.uid] = FitErrors({first.name: FitError([(UNRESOLVABLE, "node(s) were unschedulable")])})
        assert list(filter_out_unresolvable_nodes(session, task)) == list(session.node_list)[1:]
        # Errors that can all be resolved (a node short of resources) leave every node, as the rows they are.
        job.fit_errors[task.uid] = FitErrors({first.name: FitError([(UNSCHEDULABLE, "Insufficient cpu")])})
        kept = filter_out_unresolvable_nodes(session, task)
        assert list(kept) == list(session.node_list)
        if engine == "fast":
            assert kept.rows is session.columns.all_rows


def _unchecked_outcome(objects: list[dict], engine: str) -> tuple[dict, dict[str, str]]:
    """A session's decisions and each job's recorded fit errors (Volcano's one-line form), engines unchecked."""
    from fumarole.runtime.authoring.scenario import decisions_as_expect
    from fumarole.runtime.bundles.bundle import default_bundle
    from fumarole.runtime.framework.lifecycle import new_session, run_session
    from fumarole.runtime.ingest.kube import cluster_from_objects

    session = new_session(default_bundle(), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)
    decided = decisions_as_expect(run_session(session))
    return decided, {f"{job.uid}/{uid}": errors.summary()
                     for job in session.job_list for uid, errors in job.fit_errors.items()}


def test_unchecked_scans_that_leave_fit_errors_out_record_what_the_reference_engine_records(monkeypatch):
    """Without checked engines a batch scan that found nodes asks no refused node for its fit error;
    the fit errors the actions record (of the scans that found none) and the decisions stay the
    reference engine's, on the affinity shape (zone affinity refuses two zones in three)."""
    from benchmarks.shapes import cluster_objects

    monkeypatch.setenv("FUMAROLE_CHECK_ENGINES", "0")
    objects = cluster_objects(12, "affinity")
    fast = _unchecked_outcome(objects, "fast")
    assert fast[1], "the shape leaves some task fitting nowhere"
    assert fast == _unchecked_outcome(objects, "reference")


def test_hard_sharding_refuses_the_nodes_outside_the_shard_before_the_check():
    """Volcano's helper refuses a node outside the shard with a plain error (an Error status) without
    asking the check, keeps the refusal in the error cache, and counts the node as visited."""
    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(4)]
    asked = []

    def check(task, node):
        asked.append(node.name)
        return FitError([(UNSCHEDULABLE, "full")]) if node.name == "n3" else None
    for columns in (None, NodeColumns(nodes, K8sView(nodes))):
        asked.clear()
        forms = BatchForms()
        forms.add(check, BatchForm(lambda task, batch: np.array([n.name == "n3" for n in batch.nodes])))
        ssn = SimpleNamespace(predicate_start_index=1, predicate_scans=0, node_list=nodes, columns=columns,
                              batch_forms=forms, options=SchedulerOptions(sharding_mode=HARD_SHARDING),
                              nodes_in_shard=frozenset({"n0", "n3"}))
        helper = PredicateHelper(ssn)
        task = SimpleNamespace(key="ns/p", job_id="ns/job", role="worker")
        result = helper.predicate_nodes(task, nodes, check, True)
        assert [n.name for n in result.nodes] == ["n0"]
        assert {name: e.statuses for name, e in result.errors.nodes.items()} == {
            "n1": [("Error", "node isn't in scheduler node shard")],
            "n2": [("Error", "node isn't in scheduler node shard")],
            "n3": [(UNSCHEDULABLE, "full")]}
        assert "n1" not in asked and "n2" not in asked
        assert ssn.predicate_start_index == 1  # every node visited from 1: back to 1
        assert set(helper.cache["ns/job/worker"]) == {"n1", "n2", "n3"}


@pytest.mark.parametrize("names, shard, mode, failing, cache, found, summary, cached", [
    ([], {"node1"}, "none", False, False, [], "0/0 nodes are unavailable", {}),
    (["node1", "node2"], {"node1", "node2"}, "none", True, True, [], "0/2 nodes are unavailable: 2 predicate failed.",
     {"job1/worker": {"node1": "predicate failed", "node2": "predicate failed"}}),
    (["node1"], {"node1"}, "none", False, False, ["node1"], None, None),
    (["node2"], {"node1"}, HARD_SHARDING, False, False, [],
     "0/1 nodes are unavailable: 1 node isn't in scheduler node shard.", None),
    (["node2"], {"node1"}, "soft", False, False, ["node2"], None, None),
    (["node1", "node2", "node3"], {"node1"}, HARD_SHARDING, False, False, ["node1"], None, None),
], ids=["empty nodes", "predicate errors", "predicate success", "hard sharding rejects nodes outside shard",
        "soft sharding allows nodes outside shard", "hard sharding allows nodes inside shard"])
def test_upstream_predicate_nodes(names, shard, mode, failing, cache, found, summary, cached):
    """predicate_helper_test.go TestPredicateNodes, each case with its options (percentage 100, at
    least one node): the nodes found, in order, and, where none is, the one-line fit error.  The
    error cache is compared where the case enables it: Volcano also fills it for a helper whose
    cache is off, but such a helper never reads it (each action passes the same flag to every scan
    of a helper), so fumarole keeps nothing there (``cached`` None: not compared)."""
    nodes = [Node(name, Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, []) for name in names]

    def check(task, node):
        return FitError([(UNSCHEDULABLE, "predicate failed")]) if failing else None
    ssn = SimpleNamespace(predicate_start_index=0, predicate_scans=0, node_list=nodes, columns=None,
                          batch_forms=BatchForms(), nodes_in_shard=frozenset(shard),
                          options=SchedulerOptions(percentage_nodes_to_find=100, minimum_feasible_nodes=1,
                                                   sharding_mode=mode))
    helper = PredicateHelper(ssn)
    task = SimpleNamespace(key="ns/task", job_id="job1", role="worker")
    result = helper.predicate_nodes(task, nodes, check, cache)
    assert [n.name for n in result.nodes] == found
    if not found:
        assert result.errors.summary() == summary
    if cached is not None:
        assert {key: {name: e.reasons[0] for name, e in errors.items()} for key, errors in helper.cache.items()} == cached


def test_a_sampled_scan_ends_at_the_first_feasible_node_past_its_sample():
    """Volcano's worker that finds a feasible node beyond the sample cancels the scan: that node and
    the failing nodes before it count as visited (their fit errors recorded), so the next scan starts
    after it.  Five nodes, a sample of 5 * 40 / 100 = 2: n0 and n1 kept, n2 refused, n3 ends the scan."""
    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(5)]

    def check(task, node):
        return FitError([(UNSCHEDULABLE, "full")]) if node.name == "n2" else None
    for columns in (None, NodeColumns(nodes, K8sView(nodes))):
        forms = BatchForms()
        forms.add(check, BatchForm(lambda task, batch: np.array([n.name == "n2" for n in batch.nodes])))
        ssn = SimpleNamespace(predicate_start_index=0, predicate_scans=0, node_list=nodes, columns=columns,
                              batch_forms=forms, nodes_in_shard=frozenset(),
                              options=SchedulerOptions(percentage_nodes_to_find=40, minimum_feasible_nodes=1))
        helper = PredicateHelper(ssn)
        task = SimpleNamespace(key="ns/p", job_id="ns/job", role="worker")
        assert [n.name for n in helper.predicate_nodes(task, nodes, check, True).nodes] == ["n0", "n1"]
        assert ssn.predicate_start_index == 4
        assert set(helper.cache["ns/job/worker"]) == {"n2"}
