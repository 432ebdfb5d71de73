"""Volcano's job_info_test.go (ed72c7c8), restated on fumarole's Job: the status index, the
allocated and total requests, the gang counters and the elastic resources a session reads.

Pods are built as the upstream tests' ``buildPod`` builds them (uid ``<namespace>-<name>``, one
container requesting ``req``, the node name and phase given) and loaded by ``task_from_pod``, the
loader every session uses; the PodGroup by ``job_from_pod_group``.
"""

import pytest

from fumarole.runtime.api.model import BOUND, FAILED, PENDING, PIPELINED, RELEASING, RUNNING, SUCCEEDED, Job, Task
from fumarole.runtime.api.resource import ZERO, Resource, equal
from fumarole.runtime.ingest.kube_convert import job_from_pod_group, task_from_pod


def build_pod(ns: str, name: str, node: str, phase: str, cpu: str, memory: str, gpu: str | None = None) -> dict:
    """upstream's test_utils.go buildPod with BuildResourceList(cpu, memory) (or ...WithGPU)."""
    requests = {"cpu": cpu, "memory": memory}
    if gpu is not None:
        requests["nvidia.com/gpu"] = gpu
    return {"metadata": {"uid": f"{ns}-{name}", "name": name, "namespace": ns},
            "status": {"phase": phase},
            "spec": {"nodeName": node, "containers": [{"resources": {"requests": requests}}]}}


def new_job(min_available: int = 0, min_resources: dict | None = None) -> Job:
    spec: dict = {"minMember": min_available}
    if min_resources is not None:
        spec["minResources"] = min_resources
    return job_from_pod_group({"metadata": {"name": "job", "namespace": "ns1"}, "spec": spec}, {}, None)


def with_tasks(job: Job, *tasks: Task) -> Job:
    for task in tasks:
        job.add_task(task)
    return job


def resource(cpu: str, memory: str, pods: str) -> Resource:
    """upstream's buildResource(cpu, memory, {"pods": pods}, 0)."""
    return Resource.from_list({"cpu": cpu, "memory": memory, "pods": pods})


def index(job: Job) -> dict[str, set[str]]:
    return {status: set(tasks) for status, tasks in job.status_index.items()}


def test_add_task_info():
    """TestAddTaskInfo "add 1 pending owner pod, 1 running owner pod": a pending pod with a node
    name is Bound; Allocated counts the running and bound pods, TotalRequest all four."""
    job = with_tasks(new_job(), *(task_from_pod(pod) for pod in (
        build_pod("c1", "p1", "", "Pending", "1000m", "1G"),
        build_pod("c1", "p2", "n1", "Running", "2000m", "2G"),
        build_pod("c1", "p3", "n1", "Pending", "1000m", "1G"),
        build_pod("c1", "p4", "n1", "Pending", "1000m", "1G"))))
    assert index(job) == {RUNNING: {"c1-p2"}, PENDING: {"c1-p1"}, BOUND: {"c1-p3", "c1-p4"}}
    assert set(job.tasks) == {"c1-p1", "c1-p2", "c1-p3", "c1-p4"}
    assert equal(job.allocated, resource("4000m", "4G", "3")) and equal(resource("4000m", "4G", "3"), job.allocated)
    assert equal(job.total_request, resource("5000m", "5G", "4")) and equal(resource("5000m", "5G", "4"), job.total_request)


@pytest.mark.parametrize("ns, second_phase, expected_index", [
    ("c1", "Running", {PENDING: {"c1-p1"}, RUNNING: {"c1-p3"}}),
    ("c2", "Pending", {PENDING: {"c2-p1"}, RUNNING: {"c2-p3"}}),
])
def test_delete_task_info(ns, second_phase, expected_index):
    """TestDeleteTaskInfo: "add 1 pending owner pod, 2 running owner pod, remove 1 running owner
    pod" (c1) and "add 2 pending owner pod, 1 running owner pod, remove 1 pending owner pod" (c2,
    whose p2 has a node, so is Bound): what remains is counted as if never added."""
    pods = [build_pod(ns, "p1", "", "Pending", "1000m", "1G"),
            build_pod(ns, "p2", "n1", second_phase, "2000m", "2G"),
            build_pod(ns, "p3", "n1", "Running", "3000m", "3G")]
    tasks = [task_from_pod(pod) for pod in pods]
    job = with_tasks(new_job(), *tasks)
    job._remove_task(tasks[1])
    assert index(job) == expected_index
    assert equal(job.allocated, resource("3000m", "3G", "1")) and equal(resource("3000m", "3G", "1"), job.allocated)
    assert equal(job.total_request, resource("4000m", "4G", "2")) and equal(resource("4000m", "4G", "2"), job.total_request)


def _task(name: str, status: str, cpu: str | None, node: str = "") -> Task:
    """upstream's newTaskFunc / newTaskWithStatus: a task in a status, requesting ``cpu`` or nothing."""
    requests = {} if cpu is None else {"cpu": cpu}
    task = task_from_pod({"metadata": {"uid": name, "name": name, "namespace": "ns1"},
                          "spec": {"nodeName": node, "containers": [{"resources": {"requests": requests}}]}})
    task.status = status
    return task


@pytest.mark.parametrize("min_available, ready, pipelined, starving", [
    (5, False, True, True),   # "starving job"
    (3, True, True, False),   # "ready job"
])
def test_job_info(min_available, ready, pipelined, starving):
    """TestJobInfo: a best-effort and a 100m task in each of Pending, Pipelined and Running."""
    job = with_tasks(new_job(min_available), *(
        _task(f"{status.lower()}-{kind}-task-1", status, cpu)
        for kind, cpu in (("besteffort", None), ("unbesteffort", "100m"))
        for status in (PENDING, PIPELINED, RUNNING)))
    assert (job.pending_best_effort_task_num, job.is_ready, job.is_pipelined, job.is_starving) == (
        1, ready, pipelined, starving)


def test_releasing_scheduled_task_num():
    """TestReleasingScheduledTaskNum: releasing tasks with a node count, the one without does not."""
    job = with_tasks(new_job(), _task("scheduled-1", RELEASING, None, "node-1"), _task("unscheduled", RELEASING, None),
                     _task("scheduled-2", RELEASING, None, "node-2"), _task("running", RUNNING, None, "node-3"))
    assert job.releasing_scheduled_task_num == 2


def test_scheduled_task_num():
    """TestScheduledTaskNum: Running, Bound, Failed and Succeeded are scheduled; Pending and Releasing not."""
    job = with_tasks(new_job(), *(_task(status.lower(), status, None)
                                  for status in (RUNNING, BOUND, FAILED, SUCCEEDED, PENDING, RELEASING)))
    assert job.scheduled_task_num == 4


WITH_GPU = {"cpu": "1", "memory": "1G", "nvidia.com/gpu": "1", "pods": "1"}


@pytest.mark.parametrize("gpus, expected", [
    (["1"], {}),
    (["1", None], {"cpu": "1", "memory": "1G", "pods": "1"}),
    ([None, None], {"cpu": "1", "memory": "1G", "pods": "1"}),
    (["1", "1"], WITH_GPU),
])
def test_get_elastic_resources(gpus, expected):
    """TestGetElasticResources: running pods of 1 cpu, 1G (and a GPU where given) against
    minResources of 1 cpu, 1G, 1 GPU, 1 pod: what is allocated beyond minResources."""
    job = with_tasks(new_job(1, WITH_GPU), *(
        task_from_pod(build_pod("ns1", f"task-{i + 1}", f"node{i + 1}", "Running", "1", "1G", gpu))
        for i, gpu in enumerate(gpus)))
    assert equal(job.elastic_resources, Resource.from_list(expected)) and equal(Resource.from_list(expected), job.elastic_resources)


@pytest.mark.parametrize("min_task_member, total", [
    ({"master": 1, "worker": 2, "gpu": 1}, 4),  # "task member changed from single to multiple roles"
    ({"master": 1, "worker": 2}, 3),            # "task member decreased"
    ({"master": 2, "worker": 5, "gpu": 3}, 10),  # "task member increased"
    ({"new-master": 1, "new-worker": 3}, 4),    # "task member replaced completely"
    ({}, 0),                                    # "task member changed to empty"
])
def test_parse_min_member_info_changed(min_task_member, total):
    """TestParseMinMemberInfoChanged: the roles' minimums are the PodGroup's current minTaskMember,
    nothing kept from an earlier one (fumarole builds each session's job from the PodGroup afresh,
    so the changed map is the only one it sees)."""
    job = job_from_pod_group({"metadata": {"name": "test-job"}, "spec": {"minTaskMember": min_task_member}}, {}, None)
    assert (job.task_min_available, job.task_min_available_total) == (min_task_member, total)
