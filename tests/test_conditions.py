"""Pod and PodGroup conditions, the times read from them, and queue.spec (runtime/api/conditions.py,
runtime/api/object_fields.py): what a site's policy reads to know how long a job has waited, when a pod
was scheduled or evicted, and the queue settings no schema attribute names."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.conditions import conditions_of, seconds
from fumarole.runtime.api.object_fields import text_of

CLUSTER = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {cpu: '8', memory: 16Gi, pods: '110'}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: Queue
  metadata: {name: q}
  spec: {weight: 1, tier: gold, department: {name: ml, budget: 3}, burst: 1.5, capability: {cpu: '8'}}
  status: {state: Open}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: g, namespace: ns, creationTimestamp: '2026-11-21T08:00:00Z'}
  spec: {queue: q, minMember: 1}
  status:
    phase: Inqueue
    conditions:
    - {type: Scheduled, status: 'True', reason: ok, lastTransitionTime: 2026-11-21T09:00:00Z}
    - {type: Unschedulable, status: 'True', reason: NotEnoughResources, message: 1/1 tasks,
       lastTransitionTime: '2026-11-21T11:00:00+01:00'}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: ns
    uid: p
    annotations: {scheduling.k8s.io/group-name: g}
    creationTimestamp: '2026-11-21T08:00:00Z'
  spec:
    containers:
    - {name: main, image: x, resources: {requests: {cpu: '1', memory: 1Gi}}}
  status:
    phase: Pending
    conditions:
    - {type: PodScheduled, status: 'False', reason: Unschedulable, lastTransitionTime: '2026-11-21T10:15:00Z'}
    - {type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler, lastTransitionTime: '2026-11-21T10:00:00Z'}
"""
BUNDLE = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: facts}
uses: [volcano]
sources: [plugins/*.policy]
actions: [enqueue, allocate]
tiers:
- plugins: [{name: priority}, {name: gang}, {name: facts}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
# Every fact, written into the refusal the explanation shows.
FACTS = """plugin facts

on predicate(task, node):
    let job = task.job
    if job != none:
        let spec = job.queue.spec
        let c = job.condition("Unschedulable")
        let reason = c.reason + "@" + str(c.last_transition_time) if c != none else "-"
        spec["tier"] = "changed"
        fail "facts " + str(task.pending_since) + " " + str(job.pending_since) + " " + str(job.scheduled_at) + " " + str(task.evicted_at) + " " + str(job.evicted_at) + " " + job.queue.spec.get("tier", "?") + " " + spec.get("department", "?") + " " + spec.get("burst", "") + " " + spec.get("weight", "") + " " + str(len(job.conditions)) + " " + str(len(task.conditions)) + " " + reason + " " + str(task.condition("Ready") == none) + " " + str(task.scheduled_at) when true
"""


def at(text: str) -> int:
    from fumarole.policy_lang.timestamps import rfc3339_seconds
    return int(rfc3339_seconds(text))


def write(tmp_path: Path, cluster: str = CLUSTER, policy: str = FACTS) -> tuple[Path, Path]:
    (tmp_path / "b/plugins").mkdir(parents=True)
    (tmp_path / "b/bundle.yaml").write_text(BUNDLE)
    (tmp_path / "b/plugins/facts.policy").write_text(policy)
    (tmp_path / "cluster.yaml").write_text(cluster)
    return tmp_path / "cluster.yaml", tmp_path / "b"


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_every_fact_reads_what_the_cluster_says(cli, tmp_path, engine):
    cluster, bundle = write(tmp_path)
    result = cli("run", str(cluster), "--bundle", str(bundle), "--now", "2026-11-21T12:30:00Z", "--explain",
                 "--engine", engine)
    assert result.code == 0, result.err
    expected = " ".join([
        "facts", str(at("2026-11-21T10:15:00Z")),  # the pod waits since its PodScheduled=False transition
        str(at("2026-11-21T10:00:00Z")),  # the job: Unschedulable (11:00+01:00) is newer than Scheduled (09:00Z)
        str(at("2026-11-21T09:00:00Z")), str(at("2026-11-21T10:00:00Z")), str(at("2026-11-21T10:00:00Z")),
        "gold", '{"name":"ml","budget":3}', "1.5", "1", "2", "2",
        f"NotEnoughResources@{at('2026-11-21T10:00:00Z')}", "true", "none"])
    assert expected in result.out


def test_pending_since_follows_the_latest_word_of_the_cluster(cli, tmp_path):
    # Scheduled after the last Unschedulable: the job is not waiting; the pod on a node is not either.
    cluster = CLUSTER.replace("2026-11-21T11:00:00+01:00", "2026-11-21T08:30:00+00:00").replace(
        "    conditions:\n    - {type: PodScheduled, status: 'False'",
        "    conditions:\n    - {type: PodScheduled, status: 'True'")
    policy = ("plugin facts\n\non predicate(task, node):\n    let job = task.job\n    if job != none:\n"
              "        fail \"facts \" + str(job.pending_since) + \" \" + str(task.pending_since) + \" \""
              " + str(task.scheduled_at) when true\n")
    paths = write(tmp_path, cluster, policy)
    result = cli("run", str(paths[0]), "--bundle", str(paths[1]), "--now", "2026-11-21T12:30:00Z", "--explain")
    assert f"facts none {at('2026-11-21T08:00:00Z')} {at('2026-11-21T10:15:00Z')}" in result.out


def test_a_job_never_scheduled_waits_since_its_creation(cli, tmp_path):
    cluster = CLUSTER.replace("    - {type: Scheduled, status: 'True', reason: ok, lastTransitionTime: 2026-11-21T09:00:00Z}\n",
                              "")
    policy = ("plugin facts\n\non predicate(task, node):\n    let job = task.job\n    if job != none:\n"
              "        fail \"facts \" + str(job.pending_since) + \" \" + str(job.scheduled_at) when true\n")
    paths = write(tmp_path, cluster, policy)
    result = cli("run", str(paths[0]), "--bundle", str(paths[1]), "--now", "2026-11-21T12:30:00Z", "--explain")
    assert f"facts {at('2026-11-21T08:00:00Z')} none" in result.out


def test_a_malformed_transition_time_is_a_positioned_load_error(cli, tmp_path):
    cluster, bundle = write(tmp_path, CLUSTER.replace("'2026-11-21T10:15:00Z'", "'a while ago'"))
    result = cli("run", str(cluster), "--bundle", str(bundle))
    assert result.code != 0
    assert "Traceback" not in result.err
    assert "K007" in result.err and "lastTransitionTime" in result.err and f"{cluster}:" in result.err


def test_the_session_keeps_a_condition_time_while_the_condition_holds():
    from fumarole.runtime.api.conditions import job_pending_since
    from fumarole.runtime.api.model import Job

    job = Job(creation=0.0, conditions=[{"type": "Scheduled", "status": "True", "lastTransitionTime": 100.0}])

    class Clock:  # the two fields set_condition reads of the session
        uid, now = "s2", 500.0
    from fumarole.runtime.framework.job_info import set_condition
    set_condition(Clock(), job, "Unschedulable", "True", "NotEnoughResources")
    assert job_pending_since(job) == 500.0
    Clock.now = 900.0
    set_condition(Clock(), job, "Unschedulable", "True", "NotEnoughResources")
    assert job_pending_since(job) == 500.0
    set_condition(Clock(), job, "Unschedulable", "True", "NotEnoughPodsOfTask")
    assert job_pending_since(job) == 900.0


VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30) |
                      st.datetimes(), lambda inner: st.lists(inner, max_size=3) |
                      st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_whatever_a_status_holds_reads_without_failing(raw):
    for condition in conditions_of(raw if isinstance(raw, list) else [raw, {"lastTransitionTime": raw}]):
        assert isinstance(condition.type, str) and isinstance(condition.status, str)
        assert condition.last_transition_time is None or isinstance(condition.last_transition_time, float)
    assert seconds(raw) is None or isinstance(seconds(raw), float)
    assert isinstance(text_of(raw), str)
