"""What the preempt action needs from the runtime: any-of hook gates, dry-run node
copies, the per-task pod placements (Volcano's cycle state), and the action end
to end on scenarios the conformance cases do not cover."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fumarole.runtime.api.model import DryRunNode, Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.authoring.scenario import (
    decisions_as_expect,
    load_scenario,
    run_scenario,
)
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.bundles.environment import hooks_document, load_environment
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework import dry_run, k8s_filters
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import task_from_pod
from fumarole.runtime.ingest.scheduler_config import PluginEntry, config_from_document
from fumarole.runtime.k8s import interpodaffinity, podspec
from fumarole.runtime.k8s.view import K8sView

CASES = Path(__file__).resolve().parent / "conformance" / "cases"  # the repository's copy
ANTI_AFFINITY_CASE = CASES / "predicates/TestPodAntiAffinity-000-pod-anti-affinity.yaml"
SWITCH_OFF = {"enablePredicate": False, "enablePreemptable": False, "enabledAllocatable": False}


# -- gates ------------------------------------------------------------------------------

def test_a_list_gate_is_any_of_its_switches():
    entry = PluginEntry("p", {"enablePreemptable": False, "enabledAllocatable": True})
    assert entry.enabled(("enablePreemptable", "enabledAllocatable"))
    assert not entry.enabled(["enablePreemptable"])
    assert entry.enabled(None)
    assert entry.enabled("enabledAllocatable")


def test_simulate_hooks_have_volcanos_gates():
    hooks = load_environment().hooks
    assert hooks["simulate_add_task"].gate == ("enablePreemptable", "enabledAllocatable")
    assert hooks["simulate_remove_task"].gate == ("enablePreemptable", "enabledAllocatable")
    assert hooks["simulate_allocatable"].gate == "enabledAllocatable"
    assert hooks["simulate_predicate"].gate == "enablePredicate"
    assert hooks_document()["dispatch"]["simulate_predicate"]["combine"] == "first-failure"


def _session(switches: dict, objects: list) -> Session:
    plugin = {"name": "predicates", **{s: False for s in SWITCH_OFF}, **switches}
    config = config_from_document({"actions": "", "tiers": [{"plugins": [plugin]}]})
    ssn = new_session(build_bundle(config), cluster_from_objects(objects))
    open_session(ssn, "test")
    return ssn


@pytest.mark.parametrize("switches, runs", [
    ({"enablePredicate": True}, False),
    ({"enablePreemptable": True}, True),
    ({"enabledAllocatable": True}, True),
])
def test_simulate_remove_task_runs_a_plugin_only_when_preemptable_or_allocatable_is_on(switches, runs):
    # Without a pre-predicate the plugin has no state and fails: that failure shows it ran.
    ssn = _session(switches, _anti_affinity_objects())
    worker = _task(ssn, "ns1/worker-1")
    failure = ssn.H.simulate_remove_task(worker, worker, ssn.nodes["n1"])
    assert (failure is not None) == runs


# -- dry-run node copies ------------------------------------------------------------------------

def _node() -> Node:
    return Node("n1", Resource(4000, 4e9), Resource(4000, 4e9), {}, {"kubernetes.io/hostname": "n1"},
                {}, [], False, [])


def _running(name: str, node: str = "n1", labels: dict | None = None, **spec) -> object:
    spec.setdefault("containers", [{"resources": {"requests": {"cpu": "1", "memory": "1G"}}}])
    pod = {"metadata": {"name": name, "namespace": "ns", "uid": f"ns-{name}", "labels": labels or {}},
           "spec": {"nodeName": node, **spec}, "status": {"phase": "Running"}}
    return task_from_pod(pod)


def test_a_dry_run_copy_changes_without_touching_the_node():
    node, task = _node(), _running("a")
    node.add_task(task)
    copy = dry_run.dry_run_copy(node)
    assert isinstance(copy, DryRunNode)
    dry_run.remove_task(copy, task)
    assert copy.idle.milli_cpu == 4000 and node.idle.milli_cpu == 3000
    assert task.key in node.tasks and task.key not in copy.tasks
    dry_run.add_task(copy, task)
    assert copy.idle.milli_cpu == 3000


def test_only_a_dry_run_copy_can_be_changed_directly():
    node, task = _node(), _running("a")
    node.add_task(task)
    with pytest.raises(PolicyRuntimeError, match="dry_run_copy"):
        dry_run.remove_task(node, task)


# -- per-task pod placements (cycle state) -----------------------------------------------------

ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def _view_with(*tasks) -> tuple[K8sView, Node]:
    node = _node()
    for task in tasks:
        node.view_pods[task.key] = task
    return K8sView([node]), node


def test_a_pod_view_keeps_the_placements_it_was_taken_with():
    web = _running("web", labels={"app": "web"})
    incoming = _running("new", node="", affinity=ANTI)
    view, node = _view_with(web)
    snapshot = view.pod_view(incoming)
    node.view_pods.clear()
    assert view.pod_affinity_failure(incoming, node) is None
    assert view.pod_affinity_failure(incoming, node, snapshot.placed) == interpodaffinity.ANTI_AFFINITY_FAILURE
    snapshot.remove(web)
    assert view.pod_affinity_failure(incoming, node, snapshot.placed) is None
    snapshot.add(web, node)
    assert view.pod_affinity_failure(incoming, node, snapshot.placed) == interpodaffinity.ANTI_AFFINITY_FAILURE


def test_a_pod_view_copies_every_pod_only_for_tasks_whose_own_terms_read_them():
    plain, repelling = _running("plain"), _running("repelling", affinity=ANTI)
    view, _node_ = _view_with(plain, repelling)
    assert set(view.pod_view(_running("new", node="")).placed) == {repelling.key}
    assert set(view.pod_view(_running("new", node="", affinity=ANTI)).placed) == {plain.key, repelling.key}


@pytest.mark.parametrize("metadata, conditions, expected", [
    ({"deletionTimestamp": "2024-01-01T00:00:00Z"},
     [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], True),
    ({}, [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], False),
    ({"deletionTimestamp": "2024-01-01T00:00:00Z"},
     [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"},
      {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], False),
])
def test_terminating_by_preemption(metadata, conditions, expected):
    task = _running("a")
    task.pod["metadata"].update(metadata)
    task.pod["status"]["conditions"] = conditions
    assert podspec.terminating_by_preemption(task) is expected


def test_the_predicate_reads_the_placements_of_the_tasks_latest_pre_predicate():
    ssn = _session({"enablePredicate": True}, _anti_affinity_objects())
    incoming, repelling, node = _task(ssn, "ns1/worker-3"), _task(ssn, "ns1/worker-1"), ssn.nodes["n1"]
    assert ssn.H.pre_predicate(incoming) is None
    k8s_filters.node_view_remove(ssn, repelling)  # as an eviction would
    assert "anti-affinity" in " ".join(ssn.H.predicate(incoming, node).reasons)
    other = _task(ssn, "ns1/worker-2")
    assert ssn.H.pre_predicate(other) is None
    assert ssn.H.predicate(incoming, node) is None  # no longer the latest: the live view


# -- the action end to end ------------------------------------------------------------------------

def _anti_affinity_objects() -> list:
    return yaml.safe_load(ANTI_AFFINITY_CASE.read_text())["objects"]


def _task(ssn: Session, key: str):
    return next(t for job in ssn.job_list for t in job.tasks.values() if t.key == key)


def _run(tmp_path: Path, doc: dict) -> dict:
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump({**doc, "expect": {}}))
    outcome = run_scenario(load_scenario(path))
    return decisions_as_expect(outcome.decisions)


def test_topology_aware_preemption_frees_anti_affinity_when_the_predicates_plugin_simulates(tmp_path):
    doc = yaml.safe_load(ANTI_AFFINITY_CASE.read_text())
    doc["scheduler"]["tiers"][0]["plugins"][0]["enablePreemptable"] = True
    decisions = _run(tmp_path, doc)
    assert decisions["evicted"] == ["ns1/worker-1"]
    assert decisions["pipelined"]["ns1/pg2"] == ["n1"]


def test_normal_preemption_cannot_free_anti_affinity(tmp_path):
    # The predicate keeps the pre-predicate's placements: evicting worker-1 does not help.
    doc = yaml.safe_load(ANTI_AFFINITY_CASE.read_text())
    doc["scheduler"]["configurations"][0]["arguments"]["enableTopologyAwarePreemption"] = False
    assert _run(tmp_path, doc)["evicted"] == []


def _two_full_nodes(arguments: dict) -> dict:
    """n1 and n2 each full with one low-priority-job pod (pod priorities 50 and 10)."""
    priority = {"name": "priority", "enablePreemptable": True, "enableJobStarving": True,
                "enableJobOrder": True, "enableTaskOrder": True}
    objects: list = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
         "spec": {"weight": 1}, "status": {"state": "Open"}},
    ]
    for name, group, klass, phase in (("low", "pg-low", "low", "Running"), ("high", "pg-high", "high", "Inqueue")):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"namespace": "ns", "name": group},
                        "spec": {"queue": "q", "minMember": 0 if name == "low" else 1, "priorityClassName": klass},
                        "status": {"phase": phase}})
    for node in ("n1", "n2"):
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {}},
                        "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
                                   "capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
    for pod, node, prio, group in (("v1", "n1", 50, "pg-low"), ("v2", "n2", 10, "pg-low"), ("p", "", 100, "pg-high")):
        objects.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"namespace": "ns", "name": pod, "uid": f"ns-{pod}",
                                     "annotations": {"scheduling.k8s.io/group-name": group}},
                        "spec": {"nodeName": node, "priority": prio,
                                 "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
                        "status": {"phase": "Running" if node else "Pending"}})
    return {"name": "two-full-nodes", "objects": objects,
            "scheduler": {"actions": "preempt", "tiers": [{"plugins": [priority]}],
                          "configurations": [{"name": "preempt", "arguments": arguments}]}}


@pytest.mark.parametrize("arguments, victim", [
    ({"enableTopologyAwarePreemption": True}, "ns/v1"),  # one candidate wanted: the first node that works
    ({"enableTopologyAwarePreemption": True, "minCandidateNodesAbsolute": 2}, "ns/v2"),  # lowest victim priority
    ({"enableTopologyAwarePreemption": False}, "ns/v1"),  # best score first; equal scores keep node order
])
def test_topology_aware_preemption_picks_the_cheapest_of_enough_candidates(tmp_path, arguments, victim):
    assert _run(tmp_path, _two_full_nodes(arguments))["evicted"] == [victim]
