"""The predicate Volcano's taskEligibleToPreempt asks before the preemptor's pre-predicate
(`predicate_before_pre_predicate`, docs/hooks.md "Cycle state"): predicates fails a task
with no pre-predicate this session with an Error on every node its stable filters pass,
and each plugin answers where it stands in the tiers."""

from __future__ import annotations

from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.bundles.environment import hooks_document
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document


def _objects(taint: bool = False) -> list:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "4G", "pods": "10"},
                       "capacity": {"cpu": "4", "memory": "4G", "pods": "10"}}}
    if taint:
        node["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"uid": "c1-p1", "namespace": "c1", "name": "p1",
                        "annotations": {"scheduling.k8s.io/group-name": "pg1"}},
           "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1G"}}}]},
           "status": {"phase": "Pending"}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"namespace": "c1", "name": "pg1"},
             "spec": {"queue": "q1", "minMember": 1}, "status": {"phase": "Inqueue"}}
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
             "spec": {"weight": 1}, "status": {"state": "Open"}}
    return [node, pod, group, queue]


def _session(plugins: list[str], objects: list) -> Session:
    config = config_from_document({"actions": "", "tiers": [{"plugins": [{"name": p} for p in plugins]}]})
    ssn = new_session(build_bundle(config), cluster_from_objects(objects))
    open_session(ssn, "test")
    return ssn


def _task(ssn: Session):
    return next(t for job in ssn.job_list for t in job.tasks.values() if t.key == "c1/p1")


def test_the_dispatcher_asks_each_plugin_its_own_hook_then_its_predicate():
    assert hooks_document()["dispatch"]["predicate_before_pre_predicate"] == {
        "hook": "predicate_before_pre_predicate", "combine": "first-failure", "then": "predicate"}


def test_a_task_without_a_pre_predicate_fails_a_node_the_live_view_admits_with_an_error():
    ssn = _session(["predicates"], _objects())
    task, node = _task(ssn), ssn.nodes["n1"]
    assert ssn.H.predicate(task, node) is None  # the hook cases' verdict: as over a filled state
    failure = ssn.H.predicate_before_pre_predicate(task, node)
    assert failure is not None and failure.unresolvable and not failure.has_unresolvable_status
    assert ssn.H.pre_predicate(task) is None
    assert ssn.H.predicate_before_pre_predicate(task, node) is None  # its state is filled now


def test_a_stable_filter_refusal_stays_unresolvable_without_a_pre_predicate():
    ssn = _session(["predicates"], _objects(taint=True))
    task, node = _task(ssn), ssn.nodes["n1"]
    failure = ssn.H.predicate_before_pre_predicate(task, node)
    assert failure is not None and failure.has_unresolvable_status
    assert failure.reasons == ssn.H.predicate(task, node).reasons


def test_a_plugin_listed_before_predicates_answers_first():
    # nodegroup (strict) refuses a node without a group label as unresolvable; it decides only
    # when it is asked before predicates' Error.
    first = _session(["nodegroup", "predicates"], _objects())
    assert first.H.predicate_before_pre_predicate(_task(first), first.nodes["n1"]).has_unresolvable_status
    after = _session(["predicates", "nodegroup"], _objects())
    failure = after.H.predicate_before_pre_predicate(_task(after), after.nodes["n1"])
    assert failure is not None and not failure.has_unresolvable_status
    assert after.H.predicate(_task(after), after.nodes["n1"]).has_unresolvable_status  # the live walk reaches nodegroup
