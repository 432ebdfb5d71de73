"""Volcano's unschedule_info_test.go (ed72c7c8), restated on fumarole's fit errors
(``runtime/api/fit.py``): the statuses one node's refusal keeps, the one-line summary of a task's
refusals (``FitErrors.Error``, which a job's unschedulable message and ``--explain`` show) and the
nodes whose refusal evicting cannot help (``GetUnschedulableAndUnresolvableNodes``, which preempt
and reclaim leave out through ``filter_out_unresolvable_nodes``).

A plain Go error given to ``SetNodeError`` becomes one status of code ``Error`` with the error's
text as its reason; that is how fumarole records one too (the hard sharding refusal,
``predicate_helper.not_in_shard``), so the tests' ``errors.New(NodePodNumberExceeded)`` is
``FitError([(ERROR, NODE_POD_NUMBER_EXCEEDED)])`` here.
"""

from __future__ import annotations

import pytest

from fumarole.runtime.api.fit import ERROR, UNRESOLVABLE, FitError, FitErrors

AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NODE_POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"
NODE_RESOURCE_FIT_FAILED = "node(s) resource fit failed"


def pod_number_exceeded() -> FitError:
    """``SetNodeError(node, errors.New(NodePodNumberExceeded))``."""
    return FitError([(ERROR, NODE_POD_NUMBER_EXCEEDED)])


@pytest.mark.parametrize("statuses, reasons, has_unresolvable", [
    # NewFitError(task, node, reasons...): each reason a status of code Error
    ([(ERROR, AFFINITY_RULES_NOT_MATCH), (ERROR, NODE_AFFINITY)], [AFFINITY_RULES_NOT_MATCH, NODE_AFFINITY], False),
    # NewFitErrWithStatus(task, node, statuses...): the statuses as given
    ([(UNRESOLVABLE, NODE_AFFINITY), (ERROR, EXISTING_ANTI_AFFINITY_NOT_MATCH)],
     [NODE_AFFINITY, EXISTING_ANTI_AFFINITY_NOT_MATCH], True),
])
def test_fit_error(statuses, reasons, has_unresolvable):
    """TestFitError: the reasons of a node's refusal, in status order.  Its ``Error()`` text ("task
    ns1/pod1 on node node1 fit failed: ...") is only logged by Volcano and is not modelled; the codes
    decide what preempt may do about the node: an UnschedulableAndUnresolvable status rules the node
    out for victims (has_unresolvable_status), an Error one makes evicting useless (unresolvable)."""
    error = FitError(statuses)
    assert error.reasons == reasons
    assert error.statuses == statuses
    assert (error.has_unresolvable_status, error.unresolvable) == (has_unresolvable, True)


@pytest.mark.parametrize("message, hyper_node, nodes, want, unresolvable", [
    ("", "", {}, "0/0 nodes are unavailable", set()),
    ("fit failed", "", {"node1": pod_number_exceeded()}, "fit failed: 1 node(s) pod number exceeded.", set()),
    ("NodeResourceFitFailed", "",
     {"node1": pod_number_exceeded(), "node2": FitError([(UNRESOLVABLE, NODE_AFFINITY)])},
     "NodeResourceFitFailed: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) pod number exceeded.",
     {"node2"}),
    ("", "hyperNode1", {"node1": pod_number_exceeded()},
     "In hyperNode hyperNode1: 0/1 nodes are unavailable: 1 node(s) pod number exceeded.", set()),
    ("fit failed", "hyperNode1", {"node1": pod_number_exceeded()},
     "In hyperNode hyperNode1: fit failed: 1 node(s) pod number exceeded.", set()),
])
def test_fit_errors(message, hyper_node, nodes, want, unresolvable):
    """TestFitErrors: SetError, SetHyperNode, then SetNodeError per node; Error() and the nodes
    whose statuses hold UnschedulableAndUnresolvable."""
    errors = FitErrors(message=message)
    errors.set_hyper_node(hyper_node)
    for name, error in nodes.items():
        errors.nodes[name] = error
    assert errors.summary() == want
    assert errors.unresolvable_nodes() == unresolvable


def test_fit_errors_of_a_hyper_node_with_no_failed_node_are_the_message_alone():
    """FitErrors.Error returns the bare message when no node failed, HyperNode or not: allocate's
    "has already predicated failed, skip" record carries no HyperNode (only a failed node scan sets one)."""
    errors = FitErrors(message="fit failed")
    errors.set_hyper_node("hyperNode1")
    assert errors.summary() == "fit failed"
    errors = FitErrors()
    errors.set_hyper_node("hyperNode1")
    assert errors.summary() == "0/0 nodes are unavailable"


def test_task_scheduling_reason_of_a_pending_task_with_fit_errors():
    """TestTaskSchedulingReason, task-6 (Pending, refused by three nodes): its reason is its fit
    errors' one-line form.  The rest of the case (the PodGroup's "pod group is not ready, ..." message
    and the "can possibly be assigned" messages of tasks whose last transaction was an allocation)
    is the text Volcano writes into PodGroup and Pod conditions, which fumarole does not write."""
    errors = FitErrors({"node1": FitError([("Success", NODE_POD_NUMBER_EXCEEDED)]),
                        "node2": FitError([("Success", NODE_RESOURCE_FIT_FAILED)]),
                        "node3": FitError([("Success", NODE_RESOURCE_FIT_FAILED)])})
    assert errors.summary() == "0/3 nodes are unavailable: 1 node(s) pod number exceeded, 2 node(s) resource fit failed."
