"""Volcano's sub_job_info_test.go (ed72c7c8), beyond TestGetSubJobMatchValues_* (tests/test_sub_group_match.py),
restated on fumarole's SubJob, and job_info_test.go's TestHasTopologyHardConstrain on its Job.

Volcano builds a sub-job with ``NewSubJobInfo(gid, uid, job, policy, matchValues)``; fumarole builds it
from the PodGroup's ``subGroupPolicy`` entry the pod matches (``Job._sub_job_for``, the loader's
``job_from_pod_group`` and ``task_from_pod``), so the tables' policies are written as PodGroup entries
and their match values as pod labels.  Where a test hand-builds a ``SubJobInfo`` with tasks in given
statuses, the sub-job here holds tasks in those statuses (a task requesting nothing is best-effort).
"""

from __future__ import annotations

import pytest

from fumarole.runtime.api.model import (
    ALLOCATED,
    BINDING,
    BOUND,
    FAILED,
    PENDING,
    PIPELINED,
    RUNNING,
    SUCCEEDED,
    UNKNOWN,
    Job,
    SubJob,
    Task,
)
from fumarole.runtime.ingest.kube_convert import job_from_pod_group, task_from_pod


def job_with(spec: dict, name: str = "test-job") -> Job:
    return job_from_pod_group({"metadata": {"name": name, "namespace": "ns1"}, "spec": spec}, {}, None)


def pod_task(name: str, labels: dict | None = None, cpu: str | None = "100m") -> Task:
    requests = {} if cpu is None else {"cpu": cpu}
    return task_from_pod({"metadata": {"uid": name, "name": name, "namespace": "ns1", "labels": labels or {}},
                          "spec": {"containers": [{"resources": {"requests": requests}}]}})


def sub_job_of_pod(job: Job, labels: dict) -> SubJob:
    task = pod_task("p", labels)
    job.add_task(task)
    return job.task_to_sub_job[task.uid]


def policy(name: str = "test-gid", **fields) -> dict:
    return {"name": name, "matchLabelKeys": ["idx"], **fields}


HARD_1 = {"mode": "hard", "highestTierAllowed": 1}


def topology_of(sub_job: SubJob) -> tuple | None:
    t = sub_job.network_topology
    return None if t is None else (t.mode, t.highest_tier_allowed, t.highest_tier_name)


@pytest.mark.parametrize("spec, labels, min_available, match_index, topology", [
    # "All field provided": subGroupSize 4, hard up to tier 1, match values ["1"]
    ({"subGroupPolicy": [policy(subGroupSize=4, networkTopology=HARD_1)]}, {"idx": "1"}, 4, 1, ("hard", 1, "")),
    # "No policy provided": a policy setting neither field gives NewSubJobInfo's defaults
    ({"subGroupPolicy": [policy()]}, {"idx": "1"}, 1, 1, None),
    # "No SubGroupSize provided"
    ({"subGroupPolicy": [policy(networkTopology=HARD_1)]}, {"idx": "1"}, 1, 1, ("hard", 1, "")),
    # "No NetworkTopology provided" (subGroupSize 2, no match values): Volcano gives no policy sub-job
    # empty match values (getOrCreateSubJob wants len(matchValues) > 0); the default sub-job of a job
    # without policies is the one made with them, its subGroupSize the job's minMember
    ({"minMember": 2}, {"idx": "1"}, 2, 0, None),
])
def test_new_sub_job_info(spec, labels, min_available, match_index, topology):
    """TestNewSubJobInfo: the sub-job's minimum, match index and network topology."""
    job = job_with(spec)
    sub_job = sub_job_of_pod(job, labels)
    assert (sub_job.min_available, sub_job.match_index, topology_of(sub_job)) == (min_available, match_index, topology)
    if topology is not None:  # a copy (DeepCopy): the session's rewrite of the sub-job leaves the policy's alone
        assert sub_job.network_topology is not job.sub_group_policies[0].network_topology


def test_new_sub_job_info_ids():
    """TestNewSubJobInfo's gid / uid / job, as getOrCreateSubJob names them (getSubJobGID, getSubJobID)."""
    job = job_with({"subGroupPolicy": [policy(subGroupSize=4)]})
    sub_job = sub_job_of_pod(job, {"idx": "1"})
    assert (sub_job.gid, sub_job.uid, sub_job.job) == (f"{job.uid}/test-gid", f"{job.uid}/test-gid-1", job)
    default = sub_job_of_pod(job_with({"minMember": 2}), {})
    assert (default.gid, default.uid) == (default.job.uid, default.job.uid)


@pytest.mark.parametrize("topology, hard, tier", [
    (None, False, 0),                                          # "NetworkTopology is nil"
    ({"mode": "hard"}, False, 0),                              # "HighestTierAllowed is nil"
    ({"mode": "hard", "highestTierAllowed": 1}, True, 1),      # "Mode is HardNetworkTopologyMode and ..."
    ({"mode": "soft", "highestTierAllowed": 2}, False, 2),     # "Mode is not HardNetworkTopologyMode and ..."
])
def test_sub_job_is_hard_topology_mode(topology, hard, tier):
    """TestSubJobInfo_IsHardTopologyMode (on the policy's topology as read, before a session's
    soft-to-hard rewrite)."""
    entry = policy() if topology is None else policy(networkTopology=topology)
    sub_job = sub_job_of_pod(job_with({"subGroupPolicy": [entry]}), {"idx": "0"})
    assert (sub_job.is_hard_topology, sub_job.highest_tier_allowed) == (hard, tier)


@pytest.mark.parametrize("topology, soft", [
    (None, False),             # "NetworkTopology is nil"
    ({"mode": "hard"}, False),  # "Mode is HardNetworkTopologyMode"
    ({"mode": "soft"}, True),   # "Mode is SoftNetworkTopologyMode"
])
def test_sub_job_is_soft_topology_mode(topology, soft):
    """TestSubJobInfo_IsSoftTopologyMode."""
    entry = policy() if topology is None else policy(networkTopology=topology)
    sub_job = sub_job_of_pod(job_with({"subGroupPolicy": [entry]}), {"idx": "0"})
    assert sub_job.is_soft_topology is soft


@pytest.mark.parametrize("values, suffix", [
    ({"k1": "value1", "k2": "value2"}, "policy1-value1-value2"),  # "Normale case with non-empty policy and matchValues"
    ({"k1": "value1"}, "policy1-value1"),                          # "Single matchValue"
])
def test_get_pod_sub_job_id(values, suffix):
    """TestSubJobInfo_getPodSubJobID: <job>/<policy>-<match values joined by '-'>."""
    job = job_with({"subGroupPolicy": [{"name": "policy1", "matchLabelKeys": list(values)}]}, name="job1")
    assert sub_job_of_pod(job, values).uid == f"{job.uid}/{suffix}"


def sub_job_with(min_available: int, statuses: list[tuple[str, bool]]) -> SubJob:
    """A sub-job of ``min_available`` holding one task per (status, best-effort) pair."""
    job = job_with({})
    sub_job = SubJob(job.uid, job.uid, job, min_available, None, ())
    for i, (status, best_effort) in enumerate(statuses):
        task = pod_task(f"task{i + 1}", cpu=None if best_effort else "100m")
        task.status = status
        sub_job.add_task(task)
    return sub_job


PLACED = [(ALLOCATED, False), (PIPELINED, False), (BINDING, False), (BOUND, False), (RUNNING, False)]


@pytest.mark.parametrize("min_available, statuses, expected", [
    (3, [(PIPELINED, False)] * 3, True),                                                # "All tasks are pipelined"
    (6, PLACED + [(SUCCEEDED, False)], True),                                           # "Some tasks are ready and some are pipelined"
    (3, [(PENDING, True), (PENDING, True), (PIPELINED, False)], True),                  # "... pending best-effort and some are pipelined"
    (8, [(PENDING, True), (PENDING, True)] + PLACED + [(SUCCEEDED, False)], True),      # "Some tasks are ready, some ... pending best-effort ..."
    (8, [(PENDING, True), (PENDING, False)] + PLACED + [(SUCCEEDED, False)], False),    # "Some tasks are pending not best-effort"
    (8, [(PENDING, True), (PENDING, True)] + PLACED + [(FAILED, False)], False),        # "Some tasks are failed"
    (3, [(PENDING, True), (PENDING, True), (UNKNOWN, False)], False),                   # "Some tasks are unknown"
])
def test_sub_job_is_pipelined(min_available, statuses, expected):
    """TestSubJobInfo_IsPipelined: pipelined, ready and pending best-effort tasks against the minimum."""
    assert sub_job_with(min_available, statuses).is_pipelined is expected


@pytest.mark.parametrize("min_available, statuses, expected", [
    (3, [(PENDING, False)] * 3, False),                                                 # "All tasks are pipelined" (all Pending)
    (2, [(PENDING, True)] * 2, True),                                                   # "All tasks are pending bestEffort"
    (6, [(PENDING, True), (ALLOCATED, False), (BINDING, False), (BOUND, False), (RUNNING, False),
         (SUCCEEDED, False)], True),                                                    # "... pending best-effort and some are waiting"
    (1, [(FAILED, False)], False),                                                      # "Some tasks are failed"
    (7, [(PENDING, True), (PENDING, False), (ALLOCATED, False), (BINDING, False), (BOUND, False), (RUNNING, False),
         (SUCCEEDED, False)], False),                                                   # "Some tasks are pending not best-effort"
])
def test_sub_job_is_ready(min_available, statuses, expected):
    """TestSubJobInfo_IsReady: ready and pending best-effort tasks against the minimum."""
    assert sub_job_with(min_available, statuses).is_ready is expected


@pytest.mark.parametrize("priorities, expected", [
    ([], 0),
    ([1], 1),
    ([1, 2, 3], 3),
    ([-1, -2, -3], 0),  # the highest is never below 0: Volcano starts from 0
])
def test_sub_job_task_highest_priority(priorities, expected):
    """TestSubJobInfo_getTaskHighestPriority: the sub-job's priority is its tasks' highest, at least 0."""
    job = job_with({})
    sub_job = SubJob(job.uid, job.uid, job, 1, None, ())
    for i, priority in enumerate(priorities):
        task = pod_task(f"task{i + 1}")
        task.priority = priority
        sub_job.add_task(task)
    assert sub_job.priority == expected


@pytest.mark.parametrize("topology, max_tier, expected", [
    ({"mode": "soft"}, 4, ("hard", 4, "")),                             # "soft mode is converted to hard mode"
    ({"mode": "hard", "highestTierAllowed": 2}, 4, ("hard", 2, "")),    # "hard mode is not changed"
    (None, 4, None),                                                    # "nil networkTopology is not changed"
    ({"mode": "soft", "highestTierAllowed": 1}, 5, ("hard", 5, "")),    # "soft mode with existing HighestTierAllowed is overwritten"
    ({"mode": "soft", "highestTierName": "volcano.sh/hypercluster"}, 3, ("hard", 3, "")),  # (the tier name is cleared)
])
def test_convert_to_hard_topology(topology, max_tier, expected):
    """TestConvertToHardTopology on a sub-job of subGroupSize 4: the conversion the session makes when
    it opens (``Topology.adjust_network_topology``, session.go convertSoftToHardTopology)."""
    entry = policy(subGroupSize=4) if topology is None else policy(subGroupSize=4, networkTopology=topology)
    sub_job = sub_job_of_pod(job_with({"subGroupPolicy": [entry]}), {"idx": "0"})
    if sub_job.network_topology is not None:
        sub_job.network_topology.convert_to_hard(max_tier)
    assert topology_of(sub_job) == expected
    if expected is not None:
        assert (sub_job.is_hard_topology, sub_job.highest_tier_allowed, sub_job.is_soft_topology) == (
            True, expected[1], False)


@pytest.mark.parametrize("topology, hard, tier", [
    (None, False, 0),                                      # "Nil NetworkTopologies"
    ({"mode": "hard", "highestTierAllowed": 2}, True, 2),  # "Hard Mode"
    ({"mode": "soft", "highestTierAllowed": 3}, False, 3),  # "Soft Mode"
])
def test_has_topology_hard_constrain(topology, hard, tier):
    """job_info_test.go TestHasTopologyHardConstrain: the job's IsHardTopologyMode on its PodGroup's
    networkTopology (its "Nil PodGroup" case cannot arise: every job of a session has a PodGroup)."""
    job = job_with({} if topology is None else {"networkTopology": topology})
    assert (job.is_hard_topology, job.highest_tier_allowed) == (hard, tier)


@pytest.mark.parametrize("values, suffix", [
    (["a" * 62, "b" * 63, "c"], "a" * 62 + "-" + "b" * 63 + "-c"),  # 128 bytes: kept
    (["a" * 63, "b" * 63, "c"], "5c65b47897"),                       # 129 bytes: FNV-32a 1721603453, safe-encoded
    (["z" * 63] * 3, "7f876bb8f7"),                                  # 191 bytes: FNV-32a 3943266493
])
def test_a_sub_job_id_longer_than_128_bytes_is_hashed(values, suffix):
    """sub_job_info.go getSubJobID: match values that join to more than 128 bytes are replaced by
    their FNV-32a hash in decimal, each digit mapped by apimachinery's rand.SafeEncodeString
    (``alphanums[digit % 27]``, so '0'-'5' become '4'-'9' and '6'-'9' 'b', 'c', 'd', 'f').  Label
    values are at most 63 characters, so it takes three keys to pass 128."""
    keys = [f"k{i}" for i in range(len(values))]
    job = job_with({"subGroupPolicy": [{"name": "p", "matchLabelKeys": keys}]}, name="job")
    assert sub_job_of_pod(job, dict(zip(keys, values))).uid == f"{job.uid}/p-{suffix}"


def test_the_hashed_sub_job_id_decides_the_fallback_sub_job_order():
    """SubJobOrderFn without plugins ties on the match index (0 for values that are not numbers), then
    orders by UID: the hashed "7f876bb8f7" comes before "a...", where the joined "z..." would not."""
    from fumarole.runtime.framework.fallback_orders import sub_job_fallback

    job = job_with({"subGroupPolicy": [{"name": "p", "matchLabelKeys": ["k0", "k1", "k2"]}]}, name="job")
    long = sub_job_of_pod(job, {"k0": "z" * 63, "k1": "z" * 63, "k2": "z" * 63})
    task = pod_task("q", {"k0": "a", "k1": "a", "k2": "a"})
    job.add_task(task)
    short = job.task_to_sub_job[task.uid]
    assert (long.match_index, short.match_index) == (0, 0)
    assert sub_job_fallback(long, short) and not sub_job_fallback(short, long)
