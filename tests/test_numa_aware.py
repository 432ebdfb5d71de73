"""numa-aware: the Numatopology input kind, the facts it gives policies, Go's sort order, and a
volcano-scheduler.conf enabling the plugin.  Its decisions are checked by the scenarios under
tests/conformance/cases/plugins/numa-aware."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.numa import format_cpu_set, numa_topology, parse_cpu_set
from fumarole.runtime.framework.go_sort import sort_slice
from fumarole.runtime.ingest.kube import load_cluster

CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: numa-aware
    arguments:
      weight: 10
"""

TOPOLOGY = """apiVersion: nodeinfo.volcano.sh/v1alpha1
kind: Numatopology
metadata: {name: n1}
spec:
  policies: {CPUManagerPolicy: static, TopologyManagerPolicy: single-numa-node}
  resReserved: {cpu: '1'}
  numares:
    cpu: {allocatable: '0-7', capacity: 8}
  cpuDetail:
    '0': {numa: 0, socket: 0, core: 0}
    '1': {numa: 0, socket: 0, core: 0}
    '2': {numa: 0, socket: 0, core: 1}
    '3': {numa: 0, socket: 0, core: 1}
    '4': {numa: 1, socket: 1, core: 2}
    '5': {numa: 1, socket: 1, core: 2}
    '6': {numa: 1, socket: 1, core: 3}
    '7': {numa: 1, socket: 1, core: 3}
"""

CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '8', memory: 16Gi, pods: '110'}
  capacity: {cpu: '8', memory: 16Gi, pods: '110'}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1}
status: {state: Open}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {queue: default, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  namespace: ml
  annotations: {scheduling.k8s.io/group-name: pg, volcano.sh/numa-topology-policy: single-numa-node}
spec:
  containers:
  - name: main
    resources:
      requests: {cpu: '3', memory: 1Gi}
      limits: {cpu: '3', memory: 1Gi}
status: {phase: Pending}
---
""" + TOPOLOGY


def test_a_conf_enabling_numa_aware_with_its_weight_runs_and_json_shows_the_cpus(cli, tmp_path):
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF)
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["binds"] == {"ml/train-0": "n1"}
    # One CPU is reserved (taken by topology from all eight: CPU 0), so NUMA node 0 has three
    # left, 1-3, and single-numa-node takes them.
    assert document["numaAssignments"] == {"ml/train-0": {"cpu": "1-3"}}
    table = cli("run", str(cluster), "--config", str(conf))
    assert "ml/train-0  cpu       1-3" in table.out


def test_a_pod_whose_policy_the_node_does_not_run_stays_pending(cli, tmp_path):
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF)
    cluster.write_text(CLUSTER.replace("volcano.sh/numa-topology-policy: single-numa-node",
                                       "volcano.sh/numa-topology-policy: restricted"))
    result = cli("run", str(cluster), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["binds"] == {}


def test_a_weight_of_the_wrong_type_warns_and_keeps_the_default(cli, tmp_path):
    """Volcano's GetInt logs a value it cannot read and keeps the default weight (framework/arguments.go)."""
    conf, default, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "default.conf", tmp_path / "c.yaml"
    conf.write_text(CONF.replace("weight: 10", "weight: heavy"))
    default.write_text(CONF.replace("    arguments:\n      weight: 10\n", ""))
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert f"{conf}:10:15: warning[C012]: argument 'weight' of plugin 'numa-aware' must be an int, not 'heavy'; " \
           "the default 1 is used" in result.err
    expected = cli("run", str(cluster), "--config", str(default), "-o", "json")
    assert json.loads(result.out)["binds"] == json.loads(expected.out)["binds"] != {}


@pytest.mark.parametrize("field, bad, where, message", [
    ("allocatable: '0-7'", "allocatable: '0-x'", "8:24", "error[K004]: spec.numares.cpu.allocatable '0-x' is not a "
                                                          "CPU list"),
    ("allocatable: '0-7'", "allocatable: '7-0'", "8:24", "error[K004]"),
    ("'3': {numa: 0,", "'three': {numa: 0,", "13:5", "error[K004]: spec.cpuDetail key 'three' is not a CPU id"),
    ("'5': {numa: 1,", "'5': {numa: -1,", "15:17", "error[K004]: spec.cpuDetail.5.numa must not be negative"),
    ("resReserved: {cpu: '1'}", "resReserved: {cpu: one}", "6:22", "error[K003]: bad quantity in Numatopology "
                                                                   "spec.resReserved.cpu"),
    ("'7': {numa: 1, socket: 1", "'7': {numa: 1, socket: x", "17:28", "error[K007]: spec.cpuDetail.7.socket of Numatopology n1 "
                                                             "must be an integer"),
])
def test_a_bad_numatopology_is_a_positioned_error(cli, tmp_path, field, bad, where, message):
    cluster = tmp_path / "c.yaml"
    text = TOPOLOGY.replace(field, bad)
    assert text != TOPOLOGY
    cluster.write_text(text)
    result = cli("check", str(cluster))
    assert result.code != 0
    assert f"{cluster}:{where}: {message}" in result.out + result.err, result.out + result.err
    assert "Traceback" not in result.err


def test_a_numatopology_of_no_node_is_a_warning_and_counts_nowhere():
    cluster = load_cluster(CLUSTER.replace("kind: Numatopology\nmetadata: {name: n1}",
                                           "kind: Numatopology\nmetadata: {name: n9}"))
    assert [(d.code, d.severity) for d in cluster.warnings] == [("K106", "warning")]
    assert cluster.snapshot().nodes["n1"].numa is None


def test_the_topology_a_session_reads():
    cluster = load_cluster(CLUSTER)
    topology = cluster.snapshot().nodes["n1"].numa
    assert topology == numa_topology(cluster.numa_topologies[0])
    assert (topology.cpu_manager_policy, topology.topology_manager_policy) == ("static", "single-numa-node")
    assert topology.allocatable_sets == {"cpu": list(range(8))}
    assert topology.reserved_cpus == 1
    assert [(c.id, c.numa, c.socket, c.core) for c in topology.cpus][4] == (4, 1, 1, 2)


def test_cpu_lists_read_and_write_as_kubernetes_does():
    assert parse_cpu_set("0-3,8,+10,9") == [0, 1, 2, 3, 8, 9, 10]
    assert parse_cpu_set("") == []
    for bad in ("0-", "-1", "3-1", "1-2-3", " 1", "0,,1", "0-70000"):
        assert parse_cpu_set(bad) is None, bad
    assert format_cpu_set([8, 0, 1, 2, 3, 5]) == "0-3,5,8"
    assert format_cpu_set([]) == ""


def _chained(keys: list[int]):
    """The comparator Go ran for the expectations below: (a, b) by a//100 descending OR a%100
    ascending -- not a strict weak order, like Volcano's freeCPUs / freeCores comparators."""
    return lambda i, j: keys[i] // 100 > keys[j] // 100 or keys[i] % 100 < keys[j] % 100


@pytest.mark.parametrize("keys, go_order", [
    # insertion sort (13 elements: 12 or fewer is insertion sort; 13 is pdqsort's smallest)
    ([5, 105, 4, 104, 3, 103, 2, 102, 1, 101, 0, 100, 9], [11, 9, 7, 5, 10, 3, 1, 8, 6, 4, 2, 0, 12]),
    ([301, 2, 105, 400, 3, 207, 1, 106, 300, 5, 4, 202, 100, 8, 6, 201, 303, 7, 0, 204],
     [3, 8, 0, 15, 12, 18, 6, 16, 11, 1, 4, 19, 2, 5, 7, 10, 9, 14, 17, 13]),
    ([109, 105, 309, 9, 7, 208, 103, 308, 306, 103, 108, 300, 2, 4, 4, 309, 306, 309, 302, 201, 2, 303, 206, 206,
      309, 208, 309, 105, 4, 105, 3, 204, 1, 307, 5, 6, 100, 206, 301, 9, 6, 208, 208, 100, 200, 1, 3, 304, 202, 5,
      205, 106, 307, 309, 9, 206, 104, 304, 208, 200],
     [11, 59, 44, 38, 18, 21, 19, 48, 57, 47, 31, 50, 8, 16, 22, 23, 37, 55, 43, 36, 45, 32, 9, 6, 56, 27, 1, 29, 20,
      12, 51, 33, 52, 7, 26, 53, 2, 24, 17, 15, 41, 42, 5, 58, 25, 10, 0, 30, 46, 28, 14, 13, 49, 34, 40, 35, 4, 39,
      54, 3]),
])
def test_sort_like_go_matches_go_sort_slice_for_a_chained_comparator(keys, go_order):
    # The expected orders are what Go 1.19's sort.Slice printed for these keys and comparator.
    assert sort_slice(list(range(len(keys))), _chained(keys)) == go_order


def test_sort_like_go_sorts_under_a_strict_order():
    assert sort_slice([5, 3, 9, 1, 7] * 10, lambda a, b: a < b) == sorted([5, 3, 9, 1, 7] * 10)


# -- hostile input: bounded fuzz of the new kind ---------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 70000), st.text(max_size=8),
                     st.sampled_from(["0-3", "0-3,5", "1-", "7-0", "+2", "0-65536", "static", "1Gi", "1"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                       max_leaves=8)
_SPEC = st.fixed_dictionaries({}, optional={
    "policies": st.one_of(_VALUES, st.fixed_dictionaries({"CPUManagerPolicy": st.sampled_from(["static", "none"]),
                                                          "TopologyManagerPolicy": st.sampled_from(
                                                              ["none", "best-effort", "restricted",
                                                               "single-numa-node", ""])})),
    "resReserved": st.one_of(_VALUES, st.dictionaries(st.sampled_from(["cpu", "memory"]), _SCALARS, max_size=2)),
    "numares": st.one_of(_VALUES, st.dictionaries(st.sampled_from(["cpu"]), st.fixed_dictionaries(
        {"allocatable": _SCALARS}, optional={"capacity": _SCALARS}), max_size=1)),
    "cpuDetail": st.one_of(_VALUES, st.dictionaries(
        st.one_of(st.integers(0, 20).map(str), st.text(max_size=3)),
        st.fixed_dictionaries({}, optional={"numa": st.integers(-1, 3), "socket": st.integers(0, 2),
                                            "core": st.one_of(st.integers(0, 9), _SCALARS)}), max_size=12)),
    "podAllocations": _VALUES,
})


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SPEC, st.sampled_from(["single-numa-node", "restricted", "best-effort", "none", ""]),
       st.integers(0, 12))
def test_no_numatopology_crashes_the_reader_or_the_session(spec, policy, cpus):
    from fumarole.runtime.bundles.bundle import bundle_from_conf_text
    from fumarole.runtime.framework.lifecycle import new_session, run_session

    topology = {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology",
                "metadata": {"name": "n1"}, "spec": spec}
    pod = pod_object(policy, cpus)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "16", "memory": "16Gi", "pods": "110"}}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
         "spec": {"weight": 1}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "pg", "namespace": "ml"}, "spec": {"queue": "default", "minMember": 1}},
        pod, topology]}, indent=1)
    lines = text.split("\n")
    # the Numatopology is the last item: its spec runs from its "spec" key to the line before the item closes
    spec_from = max(i for i, line in enumerate(lines, 1) if line.startswith('   "spec":'))
    spec_to = len(lines) - 3
    try:
        cluster = load_cluster(text, "c.json")
    except FumaroleError as exc:
        assert exc.diagnostics
        for d in exc.diagnostics:  # each at the field of the spec it is about
            assert d.file == "c.json" and spec_from <= d.span.line <= spec_to, (d, spec_from, spec_to)
            assert 1 <= d.span.col <= len(lines[d.span.line - 1]), d
        return
    decisions = run_session(new_session(bundle_from_conf_text(CONF, "v.conf"), cluster), sources={"c.json": text})
    assert set(decisions.numa_assignments) <= {"ml/train-0"}


def pod_object(policy: str, cpus: int) -> dict:
    annotations = {"scheduling.k8s.io/group-name": "pg"}
    if policy:
        annotations["volcano.sh/numa-topology-policy"] = policy
    resources = {"cpu": str(cpus), "memory": "1Gi"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "ml",
                                                           "annotations": annotations},
            "spec": {"containers": [{"name": "main", "resources": {"requests": resources, "limits": resources}}]},
            "status": {"phase": "Pending"}}


# -- what outlives a session: the CPUs handed on (Volcano's UnassignedNumaPods) ----------------------

def _session(text: str, state):
    from fumarole.runtime.bundles.bundle import bundle_from_conf_text
    from fumarole.runtime.framework.lifecycle import new_session, run_session

    return run_session(new_session(bundle_from_conf_text(CONF, "v.conf"), load_cluster(text), process_state=state))


SECOND_POD = """
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg2, namespace: ml}
spec: {queue: default, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-1
  namespace: ml
  annotations: {scheduling.k8s.io/group-name: pg2, volcano.sh/numa-topology-policy: single-numa-node}
spec:
  containers:
  - name: main
    resources:
      requests: {cpu: '3', memory: 1Gi}
      limits: {cpu: '3', memory: 1Gi}
status: {phase: Pending}
"""


def test_the_cpus_a_session_gave_stay_taken_in_the_next_session_of_the_process():
    from fumarole.runtime.framework.process_state import ProcessState

    state = ProcessState()
    assert _session(CLUSTER, state).numa_assignments == {"ml/train-0": {"cpu": "1-3"}}
    assert state.numa_pending == {"n1": {"ml-train-0": {"name": "train-0", "namespace": "ml",
                                                         "cpus": {"cpu": "1-3"}}}}
    assert ProcessState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    # The next cycle: train-0 is bound, the node's Numatopology has not caught up (still 0-7).
    bound = CLUSTER.replace("status: {phase: Pending}\n---\napiVersion: nodeinfo",
                            "  nodeName: n1\nstatus: {phase: Running}\n---\napiVersion: nodeinfo")
    assert bound != CLUSTER
    assert _session(bound + SECOND_POD, state).numa_assignments == {"ml/train-1": {"cpu": "4-6"}}
    # A fresh process does not know about train-0's CPUs.
    assert _session(bound + SECOND_POD, ProcessState()).numa_assignments == {"ml/train-1": {"cpu": "1-3"}}


def test_pending_cpus_are_dropped_once_the_node_lists_every_pod():
    from fumarole.runtime.framework.process_state import ProcessState

    state = ProcessState()
    _session(CLUSTER, state)
    listed = CLUSTER.replace("  resReserved: {cpu: '1'}\n",
                             "  resReserved: {cpu: '1'}\n  podAllocations: [{uid: ml-train-0, name: train-0}]\n")
    assert listed != CLUSTER
    # The node lists train-0 (its allocatable CPUs have not caught up): the record goes, and a new
    # pod gets the same CPUs (4-6 had the record stayed).
    other = listed.replace("name: train-0\n  namespace: ml", "name: other\n  namespace: ml")
    assert _session(other, state).numa_assignments == {"ml/other": {"cpu": "1-3"}}
    assert state.numa_pending == {"n1": {"ml-other": {"name": "other", "namespace": "ml", "cpus": {"cpu": "1-3"}}}}


def test_a_malformed_numa_pending_block_is_s030(cli, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"""name: numa/pending
scheduler: {{actions: allocate, tiers: [{{plugins: [{{name: numa-aware}}]}}]}}
processState:
  numaPending:
    n1: {{ml-a: {{name: a, namespace: ml, cpus: {{cpu: 0-x}}}}}}
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: '8'}}}}}}
expect: {{binds: {{}}}}
""")
    result = cli("test", str(scenario))
    assert result.code != 0
    assert f"{scenario}:5:53: error[S030]: numaPending.n1.ml-a.cpus.cpu must be a CPU list" in result.out + result.err


# -- opening on many nodes ---------------------------------------------------------------------------

def _numa_node_objects(name: str, reserved: str) -> list[dict]:
    cpus = {str(i): {"numa": i // 16, "socket": i // 16, "core": i // 2} for i in range(32)}
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
             "status": {"allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"},
                        "capacity": {"cpu": "32", "memory": "64Gi", "pods": "110"}}},
            {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": name},
             "spec": {"policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "best-effort"},
                      "resReserved": {"cpu": reserved}, "numares": {"cpu": {"allocatable": "0-31", "capacity": 32}},
                      "cpuDetail": cpus}}]


def test_opening_works_out_each_cpu_layout_once_not_once_per_node():
    """numa-aware's open derives a layout's maps for its first node only: 150 nodes of two
    machine types open within a hook budget that deriving them per node (~2,500 steps a node on
    32 CPUs) overruns, and nodes of different layouts keep their own reserved CPUs."""
    from fumarole.runtime.bundles.bundle import bundle_from_conf_text
    from fumarole.runtime.framework.budget import StepBudget
    from fumarole.runtime.framework.lifecycle import new_session, open_session

    objects = [o for i in range(150) for o in _numa_node_objects(f"n{i}", "1" if i % 2 else "2")]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    cluster = load_cluster(text)
    topologies = {name: node.numa for name, node in cluster.snapshot().nodes.items()}
    assert topologies["n0"].layout_key == topologies["n2"].layout_key != topologies["n1"].layout_key
    session = new_session(bundle_from_conf_text(CONF, "v.conf"), cluster, budget=StepBudget(hook_steps=150_000))
    open_session(session, "c.json")
    state = session.plugin_state("numa-aware")
    assert state["reserved"]["n1"] == {0: True} and state["reserved"]["n0"] == {0: True, 1: True}
    assert state["reserved"]["n2"] is state["reserved"]["n0"]
