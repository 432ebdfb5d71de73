"""`fumarole run --explain`: each decision and each pending job says why, naming the policy rule by file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fumarole.runtime.api.fit import FitError, FitErrors
from fumarole.runtime.authoring.explanations import run_explained
from fumarole.runtime.bundles.bundle import bundle_from_conf_text, bundle_from_volcano_conf, default_bundle, load_bundle
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import load_cluster
from fumarole.runtime.ingest.kube_convert import parse_time

ROOT = Path(__file__).resolve().parent.parent
TWO_QUEUES = ROOT / "examples/two-queues"
AT_1230 = "2026-11-21T12:30:00Z"


def line_of(policy: str, code: str) -> int:
    """The line of ``code`` in a standard-library policy (so tests follow edits to the policies)."""
    lines = (ROOT / "policies/volcano" / policy).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if code in text)


def cluster(path: Path):
    return load_cluster(path.read_text(), str(path))


def by_subject(explanations, kind: str) -> dict:
    return {e.subject: e for e in explanations if e.kind == kind}


def texts(explanation) -> list[str]:
    return [f"{r.text} [{r.at}]" for r in explanation.because]


def test_fit_errors_summary_is_volcanos_form():
    errors = FitErrors({f"n{i}": FitError([("Unschedulable", "Insufficient cpu")]) for i in range(10)})
    errors.nodes["x"] = FitError([("Unschedulable", "Insufficient memory"), ("Unschedulable", "Insufficient cpu")])
    errors.nodes["y"] = FitError([("UnschedulableAndUnresolvable", "node(s) had untolerated taint {a: b}")])
    # Go sorts the "count reason" strings as strings: "1 ..." < "11 ..."
    assert errors.summary() == ("0/12 nodes are unavailable: 1 Insufficient memory, "
                                "1 node(s) had untolerated taint {a: b}, 11 Insufficient cpu.")
    assert FitErrors(message="already predicated failed").summary() == "already predicated failed"
    assert FitErrors().summary() == "0/0 nodes are unavailable"


def test_eviction_names_the_reclaim_line_and_the_plugins_that_chose_the_victim():
    bundle = bundle_from_volcano_conf(TWO_QUEUES / "volcano-scheduler.conf")
    decisions, explanations = run_explained(bundle, cluster(TWO_QUEUES / "cluster.yaml"), parse_time(AT_1230))
    evictions = by_subject(explanations, "evict")
    assert list(evictions) == ["research/sweep-2", "research/sweep-1"]
    why = evictions["research/sweep-2"]
    assert why.summary == "research/sweep-2 evicted from node-1 by reclaim"
    evict_line = line_of("actions/reclaim.policy", 'node_stmt.evict(victim, "reclaim")')
    commit_line = line_of("actions/reclaim.policy", "stmt.commit()")
    gang_line = line_of("plugins/gang.policy", "victim candidate")
    assert texts(why)[0] == ('reclaim evicted it to make room for prod/serving-0: `node_stmt.evict(victim, "reclaim")` '
                             f"[policies/volcano/actions/reclaim.policy:{evict_line}:13]")
    assert texts(why)[1] == "victims chosen by reclaimable(prod/serving-0, 4 candidates) []"
    assert why.because[2].by == "gang"
    assert why.because[2].at == f"policies/volcano/plugins/gang.policy:{gang_line}:20"
    assert why.because[2].text.endswith("victim candidate (if spare[job] > 0 was true)")
    assert why.because[-1].at == f"policies/volcano/actions/reclaim.policy:{commit_line}:17"
    # sweep-1 made room for the second task of the gang
    assert texts(evictions["research/sweep-1"])[0].startswith("reclaim evicted it to make room for prod/serving-1")
    pipelines = by_subject(explanations, "pipeline")
    assert pipelines["prod/serving-1"].because[1].text == \
        "node-1 has room once its evicted tasks leave: research/sweep-1"


def test_pending_job_too_big_names_the_predicate_summary_with_counts():
    _decisions, explanations = run_explained(default_bundle(), cluster(ROOT / "tests/whatif/too-big-cluster.yaml"))
    pending = by_subject(explanations, "pending")["ml/big"]
    assert pending.summary == "ml/big Inqueue: 1 of 1 tasks pending"
    selector_line = line_of("plugins/predicates.policy", "when outside_node_affinity(task, node)")
    insufficient_line = line_of("actions/allocate.policy", 'fit_error("Insufficient " + missing[0])')
    assert [r.text for r in pending.because][0] == ("ml/big-0: 0/3 nodes are unavailable: 1 Insufficient cpu, "
                                                    "2 node(s) didn't match Pod's node affinity/selector.")
    ats = {r.text.split(":")[0]: (r.by, r.at) for r in pending.because[1:]}
    assert ats["Insufficient cpu"] == ("allocate", f"policies/volcano/actions/allocate.policy:{insufficient_line}:9")
    assert ats["node(s) didn't match Pod's node affinity/selector"] == \
        ("predicates", f"policies/volcano/plugins/predicates.policy:{selector_line}:84")


TOPOLOGY_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
  - name: predicates
  - name: proportion
  - name: network-topology-aware
"""


def too_big_in_racks():
    """The too-big pod's job in hard network-topology mode up to tier 1, over two tier-1 HyperNodes:
    rack-a (node-a, 4 CPUs, too small for the job's 8) and rack-bc (node-b, node-c: outside its zone)."""
    return load_cluster(too_big_in_racks_text(), "too-big-in-racks.yaml")


def too_big_in_racks_text() -> str:
    text = (ROOT / "tests/whatif/too-big-cluster.yaml").read_text().replace(
        "spec: {queue: default, minMember: 1}",
        "spec: {queue: default, minMember: 1, networkTopology: {mode: hard, highestTierAllowed: 1}}")
    racks = "".join(f"""
- apiVersion: topology.volcano.sh/v1alpha1
  kind: HyperNode
  metadata: {{name: {name}}}
  spec: {{tier: 1, members: [{", ".join(f"{{type: Node, selector: {{exactMatch: {{name: {n}}}}}}}" for n in nodes)}]}}"""
                    for name, nodes in (("rack-a", ["node-a"]), ("rack-bc", ["node-b", "node-c"])))
    return text.rstrip("\n") + racks + "\n"


def test_fit_errors_in_a_hyper_node_below_the_cluster_top_name_it():
    """api/unschedule_info.go FitErrors.Error and actions/allocate/allocate.go allocateResourcesForTasks:
    the fit errors of a HyperNode's nodes start "In hyperNode <name>: ", those of the cluster top's do
    not.  network-topology-aware's gradient leaves out rack-a (less idle CPU than the job's minimum), so
    the job is tried in rack-bc only; without the plugin it is tried at the cluster top, on every node."""
    bundle = bundle_from_conf_text(TOPOLOGY_CONF, "volcano-scheduler.conf")
    _decisions, explanations = run_explained(bundle, too_big_in_racks())
    assert by_subject(explanations, "pending")["ml/big"].because[0].text == (
        "ml/big-0: In hyperNode rack-bc: 0/2 nodes are unavailable: 2 node(s) didn't match Pod's node "
        "affinity/selector.")
    _decisions, explanations = run_explained(default_bundle(), too_big_in_racks())
    assert by_subject(explanations, "pending")["ml/big"].because[0].text == (
        "ml/big-0: 0/3 nodes are unavailable: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
        "affinity/selector.")


def test_a_job_offered_no_hyper_node_says_which_limit_left_none():
    """network_topology_aware.go's gradient for a hard job keeps the HyperNodes of its allowed tiers
    with room for its minResources; when none has (here 40 CPUs against racks of 4 and 32), allocate
    scans no node and records no fit error, so the explanation names the gradient and its limit."""
    text = too_big_in_racks_text().replace("minMember: 1, networkTopology", "minMember: 1, minResources: {cpu: '40'}, "
                                           "networkTopology")
    bundle = bundle_from_conf_text(TOPOLOGY_CONF, "volcano-scheduler.conf")
    decisions, explanations = run_explained(bundle, load_cluster(text, "cluster.yaml"))
    assert decisions.binds == []
    line = line_of("plugins/network_topology_aware.policy", "return gradients(")
    reason = by_subject(explanations, "pending")["ml/big"].because[-1]
    assert reason.text == ("ml/big-0: network-topology-aware offered no HyperNode to search "
                           "(hyper_node_gradient_for_job answered none): the job must fit in one HyperNode of tier 1 "
                           "or lower (highestTierAllowed) with room for its minimum resources (cpu 40000m)")
    assert (reason.by, reason.at) == ("network-topology-aware",
                                      f"policies/volcano/plugins/network_topology_aware.policy:{line}:5")
    # with room in rack-bc, the job is scanned there: the node scan's errors, not the gradient, explain it
    _decisions, explanations = run_explained(bundle, too_big_in_racks())
    assert "offered no HyperNode" not in " ".join(r.text for r in by_subject(explanations, "pending")["ml/big"].because)


def test_a_sub_job_offered_no_hyper_node_names_it_and_its_tasks():
    """The same for a sub-group's hard network topology (network_topology_aware.go's gradient for a
    sub-job, from its pending tasks' requests: 2 x 20 CPUs, no rack of tier 1 has 40)."""
    text = too_big_in_racks_text().replace(
        "minMember: 1, networkTopology: {mode: hard, highestTierAllowed: 1}",
        "minMember: 2, subGroupPolicy: [{name: w, networkTopology: {mode: hard, highestTierAllowed: 1}, "
        "subGroupSize: 2, minSubGroups: 1, matchLabelKeys: [volcano.sh/task-spec]}]")
    text = text.replace("group-name: big}}", "group-name: big}, labels: {volcano.sh/task-spec: w}}")
    text = text.replace("    nodeSelector: {zone: a}\n", "").replace("cpu: '8'", "cpu: '20'")
    pod = text[text.index("- apiVersion: v1\n  kind: Pod"):text.index("- apiVersion: topology")]
    text = text.replace(pod, pod + pod.replace("big-0", "big-1"))
    bundle = bundle_from_conf_text(TOPOLOGY_CONF, "volcano-scheduler.conf")
    _decisions, explanations = run_explained(bundle, load_cluster(text, "cluster.yaml"))
    reason = by_subject(explanations, "pending")["ml/big"].because[-1]
    assert reason.text == ("ml/big-0, ml/big-1: network-topology-aware offered no HyperNode to search "
                           "(hyper_node_gradient_for_sub_job answered none): sub-job ml/big/w-w must fit in one "
                           "HyperNode of tier 1 or lower (highestTierAllowed) with room for its minimum resources "
                           "(cpu 40000m, memory 2147483648, pods 2)")


HARD_JOB_WITH_CONFLICTING_NODE_NAMES = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 8Gi, pods: "10"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}}
- apiVersion: topology.volcano.sh/v1alpha1
  kind: HyperNode
  metadata: {name: s0}
  spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: q1}, spec: {weight: 1}, status: {state: Open}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: pg1, namespace: ns}
  spec: {minMember: 1, queue: q1, networkTopology: {mode: hard, highestTierAllowed: 1}}
  status: {phase: Inqueue}
- apiVersion: v1
  kind: Pod
  metadata: {name: p-0, namespace: ns, uid: ns-p-0, annotations: {scheduling.k8s.io/group-name: pg1}}
  spec:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields:
            - {key: metadata.name, operator: In, values: [n1]}
            - {key: metadata.name, operator: In, values: [n2]}
    containers: [{resources: {requests: {cpu: "1"}}}]
  status: {phase: Pending}
"""


def test_a_failed_pre_predicate_is_recorded_on_the_hyper_nodes_nodes():
    """actions/allocate/allocate.go allocateResourcesForTasks: a pre-predicate that fails (here
    NodeAffinity's PreFilter: the required term pins metadata.name to no node) is recorded on each
    node of the HyperNode being tried, not on every node of the session, and without the HyperNode's
    name.  The hard job may only use s0 (tier 1), which holds n1 alone."""
    bundle = bundle_from_conf_text(TOPOLOGY_CONF, "volcano-scheduler.conf")
    decisions, explanations = run_explained(bundle, load_cluster(HARD_JOB_WITH_CONFLICTING_NODE_NAMES,
                                                                 "cluster.yaml"))
    assert decisions.binds == []
    assert by_subject(explanations, "pending")["ns/pg1"].because[0].text == (
        "ns/p-0: 0/1 nodes are unavailable: 1 node(s) didn't match Pod's node affinity/selector.")


def test_a_task_skipped_for_its_roles_failure_says_so_as_volcano_does():
    """actions/allocate/allocate.go allocateResourcesForTasks: a task whose role already failed the
    node scan in its sub-job is skipped with the message "Task <name> with role spec <role> has
    already predicated failed, skip", which its FitErrors.Error (no node failed) is."""
    text = (ROOT / "tests/whatif/too-big-cluster.yaml").read_text().replace(
        "annotations: {scheduling.k8s.io/group-name: big}",
        "annotations: {scheduling.k8s.io/group-name: big, volcano.sh/task-spec: worker}")
    pod = text[text.index("- apiVersion: v1\n  kind: Pod"):]
    cluster = load_cluster(text.rstrip("\n") + "\n" + pod.replace("big-0", "big-1"), "two-workers.yaml")
    _decisions, explanations = run_explained(default_bundle(), cluster)
    because = [r.text for r in by_subject(explanations, "pending")["ml/big"].because]
    assert because[0].startswith("ml/big-0: 0/3 nodes are unavailable: 1 Insufficient cpu")
    assert because[-1] == "ml/big-1: Task big-1 with role spec worker has already predicated failed, skip"


def test_job_not_enqueued_names_the_rejecting_vote():
    _decisions, explanations = run_explained(default_bundle(), cluster(ROOT / "examples/cluster.yaml"))
    pending = by_subject(explanations, "pending")["batch/huge"]
    # the `permit when ...` above it was false: the unguarded `reject` after it decided
    line = line_of("plugins/overcommit.policy", "permit when within_requested(inqueue + minimum, idle, minimum)") + 1
    assert pending.because[0].by == "overcommit"
    assert pending.because[0].at.startswith(f"policies/volcano/plugins/overcommit.policy:{line}:")
    assert pending.because[0].text == "overcommit: rejected the enqueue (`reject` decided it)"


def test_site_policy_that_protects_victims_is_named_on_the_waiting_gang():
    bundle = load_bundle(ROOT / "examples/site-min-runtime")
    _decisions, explanations = run_explained(bundle, cluster(TWO_QUEUES / "cluster.yaml"),
                                             parse_time("2026-11-21T11:30:00Z"))
    pending = by_subject(explanations, "pending")["prod/serving"]
    lines = [r.text for r in pending.because]
    discard = line_of("actions/reclaim.policy", "stmt.discard()")
    assert lines[0] == "reclaim pipelined prod/serving-0 on node-1 after evicting research/sweep-0, then took it back: " \
                       "`stmt.discard()`"
    assert pending.because[0].at == f"policies/volcano/actions/reclaim.policy:{discard}:17"
    assert "the job needs 2 task(s) placed together (minAvailable)" in lines
    vetoes = [r for r in pending.because if r.by == "min_runtime"]
    assert [r.text for r in vetoes] == [
        f"min_runtime ruled out 3 victim(s) for prod/serving-{i} (reclaim_candidate): research/sweep-1, "
        "research/sweep-2, research/sweep-3: `now - task.start_time >= min_runtime` is false" for i in (0, 1)]
    assert vetoes[0].at.endswith("examples/site-min-runtime/plugins/min_runtime.policy:11:4")


def test_bind_names_the_allocate_line_and_the_scores():
    _decisions, explanations = run_explained(default_bundle(), cluster(ROOT / "examples/cluster.yaml"))
    binds = by_subject(explanations, "bind")
    placed = line_of("actions/allocate.policy", "stmt.allocate(task, best)")
    assert binds["ml/train-worker-1"].because[0].at == f"policies/volcano/actions/allocate.policy:{placed}:13"
    # the totals allocate chose by: nodeorder's batch scorers (least requested, balance, taints...) count
    assert binds["ml/train-worker-1"].because[1].text == \
        "node-b had the highest node score: node-b 430, node-a 421"
    assert binds["ml/train-worker-1"].because[2].by == "nodeorder"
    assert binds["ml/train-worker-1"].because[2].text == "nodeorder batch_node_order scored node-b 430, node-a 421"
    assert binds["tools/sidecar-0"].summary == "tools/sidecar-0 bound to node-a by backfill"


@pytest.mark.parametrize("bundle_path, now", [
    (None, None), ("examples/two-queues/volcano-scheduler.conf", AT_1230), ("examples/site-min-runtime", AT_1230),
    ("examples/site-eviction-budget", None), ("examples/site-most-overused-first", None)])
def test_explained_run_decides_exactly_as_a_plain_run(bundle_path, now):
    bundle = load_bundle(ROOT / bundle_path) if bundle_path else default_bundle()
    folder = (ROOT / bundle_path).parent if bundle_path and bundle_path.endswith(".conf") else \
        ROOT / (bundle_path or "examples")
    dump = folder / "cluster.yaml" if (folder / "cluster.yaml").exists() else TWO_QUEUES / "cluster.yaml"
    clock = parse_time(now) if now else None
    plain = run_session(new_session(bundle, cluster(dump), now=clock))
    explained, explanations = run_explained(bundle, cluster(dump), clock)
    assert (explained.binds, explained.evictions, explained.pipelined, explained.phases) == \
        (plain.binds, plain.evictions, plain.pipelined, plain.phases)
    assert len([e for e in explanations if e.kind == "evict"]) == len(plain.evictions)


def test_cli_explain_table_groups_per_job_and_json_adds_explanations(cli):
    args = ["run", str(TWO_QUEUES / "cluster.yaml"), "--config", str(TWO_QUEUES / "volcano-scheduler.conf"),
            "--now", AT_1230]
    table = cli(*args, "--explain")
    assert table.code == 0, table.err
    section = table.out.split("Explanations (4)\n", 1)[1]
    assert section.index("  research/sweep\n") < section.index("    evict: research/sweep-2 evicted from node-1")
    assert section.index("  prod/serving\n") < section.index("    pipeline: prod/serving-0 pipelined on node-1")
    plain = json.loads(cli(*args, "--format", "json").out)
    explained = json.loads(cli(*args, "--format", "json", "--explain").out)
    assert "explanations" not in plain
    assert {k: v for k, v in explained.items() if k != "explanations"} == plain
    assert [(e["kind"], e["subject"]) for e in explained["explanations"]] == [
        ("pipeline", "prod/serving-0"), ("pipeline", "prod/serving-1"),
        ("evict", "research/sweep-2"), ("evict", "research/sweep-1")]
    assert set(explained["explanations"][0]["because"][0]) == {"text", "at", "by"}
