"""Tests for runtime/k8s/ (one module per Kubernetes plugin, and the view): the filters and scorers
the policies call."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import task_from_pod
from fumarole.runtime.k8s import (
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodeports,
    noderesources,
    nodeunschedulable,
    podtopologyspread,
    tainttoleration,
)
from fumarole.runtime.k8s.view import K8sView

CASES = Path(__file__).resolve().parent / "conformance" / "cases"  # the repository's copy
MI = 1024 * 1024


# -- builders -----------------------------------------------------------------

def make_pod(name: str = "p", namespace: str = "ns", labels: dict | None = None, node: str = "",
             **spec) -> Task:
    spec.setdefault("containers", [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}])
    if node:
        spec["nodeName"] = node
    pod = {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
           "spec": spec, "status": {"phase": "Running" if node else "Pending"}}
    return task_from_pod(pod)


def make_node(name: str, labels: dict | None = None, taints: list | None = None,
              images: list | None = None) -> Node:
    raw = {"metadata": {"name": name}, "status": {"images": images or []}}
    names = [n for image in images or [] for n in image["names"]]
    return Node(name, Resource(4000, 8 * 1024 * MI), Resource(4000, 8 * 1024 * MI), raw,
                labels if labels is not None else {"kubernetes.io/hostname": name},
                {}, taints or [], False, names)


def place(node: Node, *tasks, view: K8sView | None = None) -> None:
    """Add pods to a node's view, as the session does (telling the K8sView when there is one)."""
    for task in tasks:
        node.view_pods[task.key] = task
        node.view_cache.clear()
        if view is not None:
            view.placed(task, node)


def load_case(relative: str):
    case = yaml.safe_load((CASES / relative).read_text())
    snap = cluster_from_objects(case["objects"]).snapshot()
    tasks = {t.name: t for job in snap.jobs.values() for t in job.tasks.values()}
    return snap, tasks


def case_file(directory: str, prefix: str) -> str:
    [path] = sorted((CASES / directory).glob(prefix + "*"))
    return str(path.relative_to(CASES))


# -- resources ------------------------------------------------------------------

def test_nonzero_request_defaults_missing_cpu_and_memory():
    task = make_pod(containers=[{"resources": {"requests": {"cpu": "250m"}}}, {}])
    got = noderesources.nonzero_request(task)
    assert got.milli_cpu == 250 + 100
    assert got.memory == 2 * 200 * MI
    assert got.scalars is None


def test_nonzero_request_keeps_explicit_zero():
    task = make_pod(containers=[{"resources": {"requests": {"cpu": "0", "memory": "0"}}}])
    got = noderesources.nonzero_request(task)
    assert (got.milli_cpu, got.memory) == (0, 0)


def test_nonzero_request_init_containers_and_sidecars():
    task = make_pod(
        containers=[{"resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}],
        initContainers=[
            {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "50Mi"}}},
            {"resources": {"requests": {"cpu": "3"}}},  # memory defaults to 200Mi
        ],
        overhead={"cpu": "10m", "memory": "1Mi"})
    got = noderesources.nonzero_request(task)
    # regular: 1 + 0.5 (sidecar) = 1.5 cpu; init peak: 3 + 0.5 = 3.5 cpu
    assert got.milli_cpu == 3500 + 10
    # regular: 100 + 50 = 150Mi; init peak: 200 + 50 = 250Mi
    assert got.memory == 250 * MI + 1 * MI


def test_view_requested_sums_view_pods():
    node = make_node("n1")
    place(node, make_pod("a", node="n1"), make_pod("b", node="n1", containers=[{}]))
    requested = noderesources.view_requested(node)
    assert requested.milli_cpu == 1000 and requested.memory == 1024 * MI
    assert requested.scalars == {"pods": 2.0}
    nonzero = noderesources.view_nonzero_requested(node)
    assert nonzero.milli_cpu == 1100 and nonzero.memory == 1024 * MI + 200 * MI


# -- node selection -------------------------------------------------------------

def _required(*terms) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def test_node_selector_requires_every_label():
    node = make_node("n1", {"disk": "ssd", "zone": "a"})
    assert nodeaffinity.matches_node_selector_and_affinity(make_pod(nodeSelector={"disk": "ssd"}), node)
    assert not nodeaffinity.matches_node_selector_and_affinity(make_pod(nodeSelector={"disk": "ssd", "gpu": "yes"}), node)
    assert nodeaffinity.matches_node_selector_and_affinity(make_pod(), node)


@pytest.mark.parametrize("expr, expected", [
    ({"key": "zone", "operator": "In", "values": ["a", "b"]}, True),
    ({"key": "zone", "operator": "In", "values": ["b"]}, False),
    ({"key": "zone", "operator": "NotIn", "values": ["b"]}, True),
    ({"key": "absent", "operator": "NotIn", "values": ["b"]}, True),
    ({"key": "zone", "operator": "Exists"}, True),
    ({"key": "absent", "operator": "DoesNotExist"}, True),
    ({"key": "zone", "operator": "DoesNotExist"}, False),
    ({"key": "cores", "operator": "Gt", "values": ["8"]}, True),
    ({"key": "cores", "operator": "Gt", "values": ["16"]}, False),
    ({"key": "cores", "operator": "Lt", "values": ["17"]}, True),
    ({"key": "cores", "operator": "Lt", "values": ["16"]}, False),
    ({"key": "zone", "operator": "Gt", "values": ["1"]}, False),   # label is not an integer
    ({"key": "cores", "operator": "Gt", "values": ["x"]}, False),  # bound is not an integer
    ({"key": "absent", "operator": "Lt", "values": ["1"]}, False),
    ({"key": "zone", "operator": "In", "values": []}, False),      # invalid: no values
    ({"key": "zone", "operator": "Exists", "values": ["a"]}, False),  # invalid: values
])
def test_required_node_affinity_operators(expr, expected):
    node = make_node("n1", {"zone": "a", "cores": "16"})
    task = make_pod(affinity=_required({"matchExpressions": [expr]}))
    assert nodeaffinity.matches_node_selector_and_affinity(task, node) is expected


def test_required_node_affinity_terms_are_ored_and_empty_term_matches_nothing():
    node = make_node("n1", {"zone": "a"})
    miss = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    hit = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert nodeaffinity.matches_node_selector_and_affinity(make_pod(affinity=_required(miss, hit)), node)
    assert not nodeaffinity.matches_node_selector_and_affinity(make_pod(affinity=_required(miss)), node)
    assert not nodeaffinity.matches_node_selector_and_affinity(make_pod(affinity=_required({})), node)
    not_here = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    assert not nodeaffinity.matches_node_selector_and_affinity(make_pod(affinity=_required(not_here)), node)


def test_node_selector_and_affinity_must_both_hold():
    node = make_node("n1", {"zone": "a"})
    term = {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}
    assert not nodeaffinity.matches_node_selector_and_affinity(
        make_pod(nodeSelector={"zone": "b"}, affinity=_required(term)), node)


def test_has_node_selection():
    assert not nodeaffinity.has_node_selection(make_pod())
    assert nodeaffinity.has_node_selection(make_pod(nodeSelector={"a": "b"}))
    assert nodeaffinity.has_node_selection(make_pod(affinity=_required({})))
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}
    assert not nodeaffinity.has_node_selection(make_pod(affinity=preferred))


def _name_in(*names) -> dict:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def test_node_affinity_conflict():
    conflict = make_pod(affinity=_required({"matchFields": [_name_in("a"), _name_in("b")]}))
    assert nodeaffinity.node_affinity_conflict(conflict)
    pinned = make_pod(affinity=_required({"matchFields": [_name_in("a"), _name_in("b")]},
                                         {"matchFields": [_name_in("c")]}))
    assert not nodeaffinity.node_affinity_conflict(pinned)
    unpinned = make_pod(affinity=_required({"matchFields": [_name_in("a"), _name_in("b")]},
                                           {"matchExpressions": [{"key": "x", "operator": "Exists"}]}))
    assert not nodeaffinity.node_affinity_conflict(unpinned)
    assert not nodeaffinity.node_affinity_conflict(make_pod())


def test_preferred_node_affinity_score():
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}},
        {"weight": 3, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
        {"weight": 7, "preference": {}},  # empty preference: ignored
    ]}}
    task = make_pod(affinity=preferred)
    assert nodeaffinity.has_preferred_node_affinity(task)
    assert not nodeaffinity.has_preferred_node_affinity(make_pod())
    assert nodeaffinity.preferred_node_affinity_score(task, make_node("n1", {"zone": "a", "disk": "ssd"})) == 8
    assert nodeaffinity.preferred_node_affinity_score(task, make_node("n2", {"zone": "b"})) == 0



@pytest.mark.parametrize("requirement, parses", [
    ({"key": "gen", "operator": "Gt", "values": ["3"]}, True),
    ({"key": "gen", "operator": "Gt", "values": ["-3"]}, False),  # an integer, but no label value
    ({"key": "gen", "operator": "Lt", "values": ["+3"]}, False),
    ({"key": "gen", "operator": "Lt", "values": ["9223372036854775808"]}, False),  # beyond int64
    ({"key": "gen", "operator": "Gt", "values": ["1", "2"]}, False),
    ({"key": "zone", "operator": "In", "values": [""]}, True),  # the empty string is a label value
    ({"key": "zone", "operator": "In", "values": ["a" * 63]}, True),
    ({"key": "zone", "operator": "In", "values": ["a" * 64]}, False),
    ({"key": "zone", "operator": "NotIn", "values": ["a_b.c-d"]}, True),
    ({"key": "zone", "operator": "NotIn", "values": ["a b"]}, False),
    ({"key": "zone", "operator": "In", "values": ["-a"]}, False),
    ({"key": "zone", "operator": "In", "values": []}, False),
    ({"key": "zone", "operator": "Exists", "values": ["a"]}, False),
    ({"key": "zone", "operator": "Equal", "values": ["a"]}, False),
])
def test_preferred_requirement_kubernetes_cannot_parse_fails_the_scorer(requirement, parses):
    """labels.NewRequirement's checks: a preferred term it refuses fails NodeAffinity's PreScore, the
    same term required matches no node."""
    preferred = make_pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [requirement]}}]}})
    assert nodeaffinity.preferred_node_affinity_unparsable(preferred) is not parses
    if not parses:
        required = make_pod(affinity=_required({"matchExpressions": [requirement]}))
        node = make_node("n1", {"gen": "5", "zone": "b"})
        assert not nodeaffinity.matches_node_selector_and_affinity(required, node)


def test_unparsable_preferred_terms_that_kubernetes_drops_do_not_fail_the_scorer():
    """NewPreferredSchedulingTerms skips zero weights and empty preferences before parsing."""
    bad = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["x"]}]}
    zero_weight = make_pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": bad}, {"weight": 2, "preference": {}}]}})
    assert not nodeaffinity.preferred_node_affinity_unparsable(zero_weight)

# -- taints ---------------------------------------------------------------------

def test_untolerated_taint_reports_first_untolerated():
    node = make_node("n1", taints=[
        {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        {"key": "broken", "effect": "NoExecute"},
    ])
    effects = ["NoSchedule", "NoExecute"]
    assert tainttoleration.untolerated_taint(make_pod(), node, effects) == "dedicated=gpu:NoSchedule"
    equal = make_pod(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}])
    assert tainttoleration.untolerated_taint(equal, node, effects) == "broken:NoExecute"
    everything = make_pod(tolerations=[{"operator": "Exists"}])
    assert tainttoleration.untolerated_taint(everything, node, effects) is None


@pytest.mark.parametrize("toleration, tolerated", [
    ({"key": "k", "value": "v"}, True),                             # empty operator means Equal
    ({"key": "k", "operator": "Equal", "value": "w"}, False),
    ({"key": "k", "operator": "Exists"}, True),
    ({"key": "other", "operator": "Exists"}, False),
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, True),
    ({"operator": "Exists", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Gt", "value": "v"}, False),
])
def test_toleration_rules(toleration, tolerated):
    node = make_node("n1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    got = tainttoleration.untolerated_taint(make_pod(tolerations=[toleration]), node, ["NoSchedule"])
    assert (got is None) is tolerated


def test_tolerates_unschedulable():
    assert not nodeunschedulable.tolerates_unschedulable(make_pod())
    assert nodeunschedulable.tolerates_unschedulable(make_pod(tolerations=[
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]))
    assert not nodeunschedulable.tolerates_unschedulable(make_pod(tolerations=[
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}]))


def test_intolerable_prefer_no_schedule():
    node = make_node("n1", taints=[
        {"key": "a", "effect": "PreferNoSchedule"},
        {"key": "b", "effect": "PreferNoSchedule"},
        {"key": "c", "effect": "NoSchedule"},
    ])
    assert tainttoleration.intolerable_prefer_no_schedule(make_pod(), node) == 2
    soft = make_pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "PreferNoSchedule"}])
    assert tainttoleration.intolerable_prefer_no_schedule(soft, node) == 1
    hard_only = make_pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "NoSchedule"}])
    assert tainttoleration.intolerable_prefer_no_schedule(hard_only, node) == 2


# -- host ports -----------------------------------------------------------------

def _with_port(name: str, node: str = "", **port) -> Task:
    return make_pod(name, node=node, containers=[{"ports": [dict(containerPort=80, **port)]}])


def test_host_port_conflicts():
    node = make_node("n1")
    place(node, _with_port("web", node="n1", hostPort=8080, hostIP="10.0.0.1"))
    assert nodeports.host_port_conflict(_with_port("a", hostPort=8080), node)                   # wildcard
    assert nodeports.host_port_conflict(_with_port("b", hostPort=8080, hostIP="10.0.0.1"), node)
    assert not nodeports.host_port_conflict(_with_port("c", hostPort=8080, hostIP="10.0.0.2"), node)
    assert not nodeports.host_port_conflict(_with_port("d", hostPort=8080, protocol="UDP"), node)
    assert not nodeports.host_port_conflict(_with_port("e", hostPort=9090), node)
    assert not nodeports.host_port_conflict(_with_port("f"), node)  # no host port


def test_host_port_of_sidecar_counts():
    node = make_node("n1")
    sidecar = make_pod("s", node="n1", initContainers=[
        {"restartPolicy": "Always", "ports": [{"containerPort": 1, "hostPort": 7000}]}])
    place(node, sidecar)
    assert nodeports.host_port_conflict(_with_port("x", hostPort=7000, hostIP="1.2.3.4"), node)


# -- image locality -------------------------------------------------------------

def test_image_locality_score():
    images = [{"names": ["registry/app:1.0"], "sizeBytes": 500 * MI},
              {"names": ["busybox:latest"], "sizeBytes": 10 * MI}]
    node = make_node("n1", images=images)
    app = make_pod(containers=[{"image": "registry/app:1.0"}])
    states = imagelocality.cache_image_states([node])["n1"]
    assert imagelocality.image_locality_score(app, states, 1) == 100 * (500 - 23) // (1000 - 23)
    assert imagelocality.image_locality_score(app, states, 2) == 100 * (250 - 23) // (1000 - 23)
    # busybox is below the 23MB threshold; "other" is on no node.
    assert imagelocality.image_locality_score(make_pod(containers=[{"image": "busybox"}]), states, 1) == 0
    assert imagelocality.image_locality_score(make_pod(containers=[{"image": "other"}]), states, 1) == 0
    view = K8sView([node, make_node("n2")])
    assert view.image_locality_score(app, node) == 100 * (250 - 23) // (1000 - 23)


def test_image_states_are_the_caches_summaries_in_node_order():
    first = make_node("a", images=[{"names": ["app:1", "app@sha"], "sizeBytes": 600 * MI}])
    second = make_node("b", images=[{"names": ["app:1"], "sizeBytes": 500 * MI},
                                    {"names": ["app:1"], "sizeBytes": 700 * MI}])
    states = imagelocality.cache_image_states([first, second, make_node("c")])
    # The size first seen for a name; the holders counted when each node was added.
    assert states == {"a": {"app:1": (600 * MI, 1), "app@sha": (600 * MI, 1)},
                      "b": {"app:1": (600 * MI, 2)}, "c": {}}


# -- balanced allocation (Kubernetes v1.36: the change of balance) ---------------

def _requesting(name: str, node: str = "", **requests) -> Task:
    return make_pod(name, node=node, containers=[{"resources": {"requests": requests}}])


def test_balanced_allocation_scores_the_change_of_balance():
    node = make_node("n1")                                  # 4 cpu, 8Gi
    # empty node: balance 100 before; 1/4 cpu and 1/8 memory after -> 93 -> 50 + (50 + 93 - 100) // 2
    assert noderesources.balanced_allocation_score(_requesting("a", cpu="1", memory="1Gi"), node) == 71
    # a pod that restores the balance: 2 cpu / 1Gi placed (81), then 0 cpu / 3Gi -> 50% / 50% (100)
    place(node, _requesting("b", node="n1", cpu="2", memory="1Gi"))
    assert noderesources.balanced_allocation_score(_requesting("c", cpu="0", memory="3Gi"), node) == 50 + (50 + 100 - 81) // 2
    # no change scores 75 (gpus only, on a node without any); a pod requesting neither cpu,
    # memory nor gpus is skipped
    assert noderesources.balanced_allocation_score(_requesting("f", **{"nvidia.com/gpu": "1"}), node) == 75
    assert noderesources.balanced_allocation_score(_requesting("d", cpu="0", memory="0"), node) == 0
    assert noderesources.balanced_allocation_score(make_pod("e", containers=[{}]), node) == 0


def test_balanced_allocation_counts_gpus_only_when_requested():
    gpu = Node("g1", Resource(4000, 8 * 1024 * MI, {"nvidia.com/gpu": 4000}),
               Resource(4000, 8 * 1024 * MI, {"nvidia.com/gpu": 4000}), {"metadata": {"name": "g1"}},
               {}, {}, [], False, [])
    # cpu 1/4, memory 1/8, gpu 2/4: population standard deviation of the three -> 84
    with_gpus = _requesting("a", cpu="1", memory="1Gi", **{"nvidia.com/gpu": "2"})
    assert noderesources.balanced_allocation_score(with_gpus, gpu) == 50 + (50 + 84 - 100) // 2
    assert noderesources.balanced_allocation_score(_requesting("b", cpu="1", memory="1Gi"), gpu) == 71


# -- inter-pod affinity filter ----------------------------------------------------

def _pod_term(labels: dict, key: str = "kubernetes.io/hostname", **extra) -> dict:
    return dict(labelSelector={"matchLabels": labels}, topologyKey=key, **extra)


def test_conformance_pod_anti_affinity_rejects_worker3():
    snap, tasks = load_case(case_file("predicates", "TestPodAntiAffinity-000"))
    view = K8sView(list(snap.nodes.values()))
    n1 = snap.nodes["n1"]
    assert view.pod_affinity_failure(tasks["worker-3"], n1) == interpodaffinity.ANTI_AFFINITY_FAILURE


def test_existing_pod_anti_affinity():
    n1, n2 = make_node("n1", {"zone": "a"}), make_node("n2", {"zone": "b"})
    guard = make_pod("guard", node="n1", affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term({"app": "web"}, "zone")]}})
    place(n1, guard)
    view = K8sView([n1, n2])
    web = make_pod("web", labels={"app": "web"})
    assert view.pod_affinity_failure(web, n1) == interpodaffinity.EXISTING_ANTI_AFFINITY_FAILURE
    assert view.pod_affinity_failure(web, n2) is None
    assert view.pod_affinity_failure(make_pod("db", labels={"app": "db"}), n1) is None
    other_ns = make_pod("web2", namespace="elsewhere", labels={"app": "web"})
    assert view.pod_affinity_failure(other_ns, n1) is None


def test_required_pod_affinity_and_first_pod_exception():
    n1, n2, bare = make_node("n1", {"zone": "a"}), make_node("n2", {"zone": "b"}), make_node("n3", {})
    view = K8sView([n1, n2, bare])
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term({"app": "db"}, "zone")]}}
    # No db pod anywhere and the pod is not a db itself: nowhere.
    client = make_pod("client", labels={"app": "client"}, affinity=affinity)
    assert view.pod_affinity_failure(client, n1) == interpodaffinity.AFFINITY_FAILURE
    # No db pod anywhere, but the pod is one: the first of its group may go anywhere labelled.
    first = make_pod("db-0", labels={"app": "db"}, affinity=affinity)
    assert view.pod_affinity_failure(first, n1) is None
    assert view.pod_affinity_failure(first, bare) == interpodaffinity.AFFINITY_FAILURE
    # Once a db pod runs in zone a, only zone a qualifies.
    place(n1, make_pod("db-1", node="n1", labels={"app": "db"}))
    assert view.pod_affinity_failure(client, n1) is None
    assert view.pod_affinity_failure(client, n2) == interpodaffinity.AFFINITY_FAILURE
    assert view.pod_affinity_failure(first, n2) == interpodaffinity.AFFINITY_FAILURE


def test_required_pod_anti_affinity_of_incoming_pod():
    n1, n2, bare = make_node("n1", {"zone": "a"}), make_node("n2", {"zone": "b"}), make_node("n3", {})
    place(n1, make_pod("web-0", node="n1", labels={"app": "web"}))
    view = K8sView([n1, n2, bare])
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term({"app": "web"}, "zone")]}}
    web = make_pod("web-1", labels={"app": "web"}, affinity=anti)
    assert view.pod_affinity_failure(web, n1) == interpodaffinity.ANTI_AFFINITY_FAILURE
    assert view.pod_affinity_failure(web, n2) is None
    assert view.pod_affinity_failure(web, bare) is None  # no topology label: nothing to violate


def test_pod_affinity_skips_the_incoming_pod_itself():
    n1 = make_node("n1")
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term({"app": "web"})]}}
    web = make_pod("web", labels={"app": "web"}, affinity=anti)
    place(n1, web)
    assert K8sView([n1]).pod_affinity_failure(web, n1) is None


def test_affinity_term_namespaces():
    n1 = make_node("n1")
    place(n1, make_pod("db", namespace="data", node="n1", labels={"app": "db"}))
    view = K8sView([n1])

    def client(**term_extra):
        affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _pod_term({"app": "db"}, **term_extra)]}}
        return make_pod("c", namespace="apps", affinity=affinity)

    assert view.pod_affinity_failure(client(), n1) == interpodaffinity.AFFINITY_FAILURE  # own namespace only
    assert view.pod_affinity_failure(client(namespaces=["data"]), n1) is None
    assert view.pod_affinity_failure(client(namespaceSelector={}), n1) is None  # all namespaces
    labelled = {"matchLabels": {"team": "x"}}
    assert view.pod_affinity_failure(client(namespaceSelector=labelled), n1) == interpodaffinity.AFFINITY_FAILURE


# -- topology spread filter ------------------------------------------------------

def _spread(max_skew: int, key: str, labels: dict | None, when: str = "DoNotSchedule", **extra) -> dict:
    constraint = dict(maxSkew=max_skew, topologyKey=key, whenUnsatisfiable=when, **extra)
    if labels is not None:
        constraint["labelSelector"] = {"matchLabels": labels}
    return constraint


def _zones(*counts) -> tuple[list[Node], K8sView]:
    nodes = []
    for i, count in enumerate(counts):
        node = make_node(f"n{i}", {"zone": f"z{i}", "kubernetes.io/hostname": f"n{i}"})
        place(node, *(make_pod(f"w-{i}-{j}", node=node.name, labels={"app": "w"}) for j in range(count)))
        nodes.append(node)
    return nodes, K8sView(nodes)


def test_topology_spread_filter_max_skew():
    nodes, view = _zones(2, 1, 0)
    task = make_pod("new", labels={"app": "w"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    assert view.topology_spread_failure(task, nodes[0]) == podtopologyspread.SPREAD_FAILURE  # 2 + 1 - 0 > 1
    assert view.topology_spread_failure(task, nodes[1]) == podtopologyspread.SPREAD_FAILURE  # 1 + 1 - 0 > 1
    assert view.topology_spread_failure(task, nodes[2]) is None               # 0 + 1 - 0


def test_topology_spread_filter_counts_skew_exactly():
    nodes, view = _zones(2, 1, 1)
    task = make_pod("new", labels={"app": "w"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    assert view.topology_spread_failure(task, nodes[0]) == podtopologyspread.SPREAD_FAILURE  # 2 + 1 - 1 = 2
    assert view.topology_spread_failure(task, nodes[1]) is None               # 1 + 1 - 1 = 1
    # A pod the selector does not pick does not add itself.
    other = make_pod("x", labels={"app": "x"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    assert view.topology_spread_failure(other, nodes[0]) is None


def test_topology_spread_filter_missing_label_and_min_domains():
    nodes, view = _zones(1, 1)
    bare = make_node("bare", {})
    view = K8sView(nodes + [bare])
    task = make_pod("new", labels={"app": "w"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    assert view.topology_spread_failure(task, bare) == podtopologyspread.SPREAD_LABEL_FAILURE
    assert view.topology_spread_failure(task, nodes[0]) is None  # 1 + 1 - 1
    strict = make_pod("new", labels={"app": "w"},
                      topologySpreadConstraints=[_spread(1, "zone", {"app": "w"}, minDomains=3)])
    assert view.topology_spread_failure(strict, nodes[0]) == podtopologyspread.SPREAD_FAILURE  # min treated as 0


def test_topology_spread_filter_honours_node_affinity_and_ignores_soft_constraints():
    nodes, view = _zones(0, 3)
    pinned_away = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}}}
    task = make_pod("new", labels={"app": "w"}, affinity=pinned_away,
                    topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    # z0 is excluded by the pod's node affinity, so z1 is the only domain and its own minimum.
    assert view.topology_spread_failure(task, nodes[1]) is None
    ignore = make_pod("new", labels={"app": "w"}, affinity=pinned_away,
                      topologySpreadConstraints=[_spread(1, "zone", {"app": "w"}, nodeAffinityPolicy="Ignore")])
    assert view.topology_spread_failure(ignore, nodes[1]) == podtopologyspread.SPREAD_FAILURE
    soft = make_pod("new", labels={"app": "w"},
                    topologySpreadConstraints=[_spread(1, "zone", {"app": "w"}, when="ScheduleAnyway")])
    assert view.topology_spread_failure(soft, nodes[1]) is None


def test_topology_spread_counts_only_same_namespace_and_live_pods():
    node = make_node("n0", {"zone": "z0"})
    empty = make_node("n1", {"zone": "z1"})
    place(node, make_pod("other-ns", namespace="elsewhere", node="n0", labels={"app": "w"}))
    dying = make_pod("dying", node="n0", labels={"app": "w"})
    dying.pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    place(node, dying)
    view = K8sView([node, empty])
    task = make_pod("new", labels={"app": "w"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    # n0 counts none of its two pods, so placing there gives skew 0 + 1 - 0.
    assert view.topology_spread_failure(task, node) is None


# -- scores ---------------------------------------------------------------------------

def test_conformance_inter_pod_affinity_prefers_node_with_matching_pod():
    snap, tasks = load_case(case_file("plugins/nodeorder", "TestNodeOrderPlugin-005"))
    nodes = list(snap.nodes.values())
    scores = K8sView(nodes).inter_pod_affinity_scores(tasks["p2"], nodes)
    assert {n.name: s for n, s in scores.items()} == {"n1": 100, "n2": 0, "n3": 0}


def test_conformance_topology_spread_prefers_emptiest_zone():
    snap, tasks = load_case(case_file("plugins/nodeorder", "TestNodeOrderPlugin-006"))
    nodes = list(snap.nodes.values())
    scores = {n.name: s for n, s in K8sView(nodes).topology_spread_scores(tasks["p4"], nodes).items()}
    # raw: n1 round(2 * ln 5) = 3, n2 round(ln 5) = 2, n3 0
    assert scores == {"n1": 0, "n2": 33, "n3": 100}
    assert scores["n3"] > scores["n2"] > scores["n1"]


def test_inter_pod_affinity_scores_skip_without_terms():
    nodes, view = _zones(1, 0)
    assert view.inter_pod_affinity_scores(make_pod("plain"), nodes) is None


def test_inter_pod_affinity_scores_anti_and_existing_terms():
    nodes, view = _zones(1, 0, 0)
    avoid = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": _pod_term({"app": "w"}, "zone")}]}}
    scores = view.inter_pod_affinity_scores(make_pod("new", affinity=avoid), nodes)
    assert [scores[n] for n in nodes] == [0, 100, 100]
    # An existing pod's required affinity does not score (Volcano's hardPodAffinityWeight is 0):
    # with nothing else matching, the scorer skips.
    magnet = make_pod("magnet", node="n2", labels={"app": "m"}, affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term({"role": "follower"}, "zone")]}})
    place(nodes[2], magnet, view=view)
    follower = make_pod("f", labels={"role": "follower"})
    assert view.inter_pod_affinity_scores(follower, nodes) is None
    # Its preferred affinity attracts matching pods by the term's weight.
    lure = make_pod("lure", node="n2", labels={"app": "l"}, affinity={"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": _pod_term({"role": "follower"}, "zone")}]}})
    place(nodes[2], lure, view=view)
    scores = view.inter_pod_affinity_scores(follower, nodes)
    assert [scores[n] for n in nodes] == [0, 0, 100]
    # A pod no term matches leaves nothing to score: the scorer skips.
    assert view.inter_pod_affinity_scores(make_pod("stranger"), nodes) is None


def test_inter_pod_affinity_scores_normalise_min_max():
    nodes, view = _zones(0, 0, 0)
    place(nodes[0], make_pod("a0", node="n0", labels={"app": "a"}))
    place(nodes[1], make_pod("b1", node="n1", labels={"app": "b"}))
    terms = {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 30, "podAffinityTerm": _pod_term({"app": "a"}, "zone")}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 60, "podAffinityTerm": _pod_term({"app": "b"}, "zone")}]},
    }
    scores = view.inter_pod_affinity_scores(make_pod("new", affinity=terms), nodes)
    # raw 30, -60, 0 -> (s + 60) * 100 / 90
    assert [scores[n] for n in nodes] == [100, 0, int(100 * (60 / 90))]


def test_topology_spread_scores_skip_and_ignored_nodes():
    nodes, view = _zones(1, 0)
    assert view.topology_spread_scores(make_pod("plain"), nodes) is None
    hard_only = make_pod("h", labels={"app": "w"}, topologySpreadConstraints=[_spread(1, "zone", {"app": "w"})])
    assert view.topology_spread_scores(hard_only, nodes) is None
    bare = make_node("bare", {})
    view = K8sView(nodes + [bare])
    soft = make_pod("s", labels={"app": "w"},
                    topologySpreadConstraints=[_spread(1, "zone", {"app": "w"}, when="ScheduleAnyway")])
    scores = view.topology_spread_scores(soft, nodes + [bare])
    raw_n0 = round(1 * math.log(4))  # two zones among the scored candidates
    assert scores[bare] == 0
    assert scores[nodes[0]] == 100 * (raw_n0 + 0 - raw_n0) // raw_n0
    assert scores[nodes[1]] == 100


def test_topology_spread_scores_hostname_and_empty_selector():
    nodes, view = _zones(2, 0)
    by_host = make_pod("s", labels={"app": "w"}, topologySpreadConstraints=[
        _spread(2, "kubernetes.io/hostname", {"app": "w"}, when="ScheduleAnyway")])
    scores = view.topology_spread_scores(by_host, nodes)
    weight = math.log(2 + 2)
    raw = [podtopologyspread.go_round(2 * weight + 1), podtopologyspread.go_round(0 * weight + 1)]
    assert [scores[n] for n in nodes] == [100 * (raw[0] + raw[1] - r) // raw[0] for r in raw]
    # An empty labelSelector counts no pods: every node scores alike.
    everything = make_pod("e", topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}])
    assert set(view.topology_spread_scores(everything, nodes).values()) == {100}


def test_go_round_is_half_away_from_zero():
    assert podtopologyspread.go_round(2.5) == 3
    assert podtopologyspread.go_round(0.49999999999999994) == 0
    assert podtopologyspread.go_round(-1.5) == -2
