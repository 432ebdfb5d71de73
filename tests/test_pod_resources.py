"""A pod's request and limit as Volcano's pod_info.go works them out with the pod-level
resources and in-place resizes of the Kubernetes it builds with (PodLevelResources and
InPlacePodVerticalScaling on): pod_info_test.go TestGetPodResourceRequest's pod-level cases and
TestGetPodResourceWithResize, restated against kube_convert.pod_request / pod_limit."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from fumarole.runtime.api.quantity import QuantityError
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube_convert import pod_limit, pod_request

GI = 1024.0 ** 3


def _container(name: str, cpu: str, memory: str) -> dict:
    return {"name": name, "resources": {"requests": {"cpu": cpu, "memory": memory}}}


def _status(cpu: str, memory: str, condition: tuple[str, str] | None = None) -> dict:
    status: dict = {"containerStatuses": [{"name": "c1", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if condition is not None:
        status["conditions"] = [{"type": condition[0], "status": "True", "reason": condition[1]}]
    return status


def _cpu_memory(resource: Resource) -> tuple[float, float]:
    return resource.milli_cpu, resource.memory


def test_restartable_init_init_and_regular_containers_with_pod_level_resources() -> None:
    spec = {
        "resources": {"requests": {"cpu": "250", "memory": "100Mi", "hugepages-1Mi": "2Gi", "hugepages-1Ki": "2Gi"}},
        "initContainers": [
            {"name": "restartable-init-1", "restartPolicy": "Always", "resources": {"requests": {"cpu": "10"}}},
            {"name": "init-1", "resources": {"requests": {"cpu": "200"}}},
        ],
        "containers": [{"name": "container-1", "resources": {"requests": {"cpu": "100"}}}],
    }
    request = pod_request(spec)
    assert _cpu_memory(request) == (250_000.0, 100 * 1024.0 ** 2)
    assert request.get("hugepages-1Mi") == request.get("hugepages-1Ki") == 2 * GI * 1000
    assert request.get("pods") == 1.0


def test_pod_level_requests_with_overhead_add_the_overhead() -> None:
    spec = {"resources": {"requests": {"cpu": "2"}}, "overhead": {"cpu": "500m"},
            "containers": [_container("c1", "1", "1Gi")]}
    assert _cpu_memory(pod_request(spec)) == (2_500.0, GI)


def test_unsupported_pod_level_resources_leave_the_containers_sum() -> None:
    spec = {"resources": {"requests": {"nvidia.com/gpu": "1"}}, "containers": [_container("c1", "1", "1Gi")]}
    request = pod_request(spec)
    assert _cpu_memory(request) == (1_000.0, GI)
    assert request.get("nvidia.com/gpu") == 0


# TestGetPodResourceWithResize: (spec requests, status requests, condition, pod-level) -> request.
RESIZE_TABLE = [
    ("no pending resize", ("2", "2Gi"), ("1", "1Gi"), None, None, (2_000.0, 2 * GI)),
    ("pod-level resources and no pending resize", ("2", "2Gi"), ("1", "1Gi"), None, ("4", "4Gi"), (4_000.0, 4 * GI)),
    ("resize in infeasible", ("2", "2Gi"), ("1", "1Gi"), ("PodResizePending", "Infeasible"), None, (1_000.0, GI)),
    ("pod-level resources and resize in infeasible", ("2", "2Gi"), ("1", "1Gi"),
     ("PodResizePending", "Infeasible"), ("4", "4Gi"), (4_000.0, 4 * GI)),
    ("resize in progress", ("1", "1Gi"), ("1", "1Gi"), ("PodResizeInProgress", "Infeasible"), None, (1_000.0, GI)),
    ("resize in deferred", ("2", "2Gi"), ("1", "1Gi"), ("PodResizePending", "Deferred"), None, (2_000.0, 2 * GI)),
]


def test_resize_table() -> None:
    for name, spec_req, status_req, condition, pod_level, expected in RESIZE_TABLE:
        spec: dict = {"containers": [_container("c1", *spec_req)]}
        if pod_level is not None:
            spec["resources"] = {"requests": {"cpu": pod_level[0], "memory": pod_level[1]}}
        got = pod_request(spec, status=_status(*status_req, condition=condition))
        assert _cpu_memory(got) == expected, name


def test_allocated_resources_count_only_with_status_resources() -> None:
    spec = {"containers": [_container("c1", "1", "1Gi")]}
    with_resources = {"containerStatuses": [{"name": "c1", "resources": {}, "allocatedResources": {"cpu": "3"}}]}
    without = {"containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "3"}}]}
    assert pod_request(spec, status=with_resources).milli_cpu == 3_000.0
    assert pod_request(spec, status=without).milli_cpu == 1_000.0


def test_limits_take_the_larger_of_spec_and_status_and_the_pod_level_ones() -> None:
    spec = {"containers": [{"name": "c1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
            "resources": {"limits": {"memory": "4Gi"}}}
    status = {"containerStatuses": [{"name": "c1", "resources": {"limits": {"cpu": "2"}}}]}
    assert _cpu_memory(pod_limit(spec, status)) == (2_000.0, 4 * GI)


_QUANTITIES = st.one_of(st.sampled_from(["1", "250m", "2Gi", "0", "-1", "x", ""]), st.integers(-3, 3), st.none(),
                        st.lists(st.integers(), max_size=2))
_LISTS = st.one_of(st.none(), st.integers(), st.dictionaries(st.sampled_from(["cpu", "memory", "hugepages-2Mi", "pods"]),
                                                             _QUANTITIES, max_size=3))


@settings(max_examples=150, deadline=None)
@given(requests=_LISTS, allocated=_LISTS, pod_level=_LISTS,
       reason=st.sampled_from([None, "Infeasible", "Deferred"]), name=st.sampled_from(["c1", "other", None]))
def test_any_status_shape_gives_a_request_or_a_quantity_error(requests, allocated, pod_level, reason, name) -> None:
    spec = {"containers": [_container("c1", "1", "1Gi")], "resources": {"requests": pod_level}}
    status: dict = {"containerStatuses": [{"name": name, "resources": {"requests": requests},
                                           "allocatedResources": allocated}]}
    if reason is not None:
        status["conditions"] = [{"type": "PodResizePending", "reason": reason}]
    try:
        request = pod_request(spec, status=status)
    except QuantityError:
        return
    assert request.milli_cpu >= 0 and request.memory >= 0


# The Kubernetes resource scorers' non-zero request (runtime/k8s/noderesources.py): the incoming
# pod's from its spec (Volcano's nodeorder leaves InPlacePodVerticalScaling off for the plugins),
# a pod already on the node as Kubernetes' NodeInfo counts it (status read, aggregated first).

def _task(spec: dict, status: dict | None = None):
    from fumarole.runtime.ingest.kube_convert import task_from_pod

    return task_from_pod({"metadata": {"name": "p", "namespace": "n"}, "spec": spec, "status": status or {}})


def test_nonzero_request_takes_pod_level_cpu_and_keeps_defaults_elsewhere() -> None:
    from fumarole.runtime.k8s.noderesources import DEFAULT_MEMORY, nonzero_request

    spec = {"resources": {"requests": {"cpu": "3"}}, "containers": [{"name": "c1"}, {"name": "c2"}]}
    assert _cpu_memory(nonzero_request(_task(spec))) == (3_000.0, 2 * DEFAULT_MEMORY)


def test_held_nonzero_request_aggregates_before_the_maximum() -> None:
    from fumarole.runtime.k8s.noderesources import held_nonzero_request, nonzero_request

    spec = {"containers": [_container("c1", "1", "1Gi"), _container("c2", "1", "1Gi")]}
    # c1 was resized up in its status, c2 down: Kubernetes takes the larger aggregate (spec 2 CPU,
    # actuated 3 + 0.5 = 3.5 CPU), where a per-container maximum would give 3 + 1 = 4.
    status = {"containerStatuses": [
        {"name": "c1", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
        {"name": "c2", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}
    task = _task(spec, status)
    assert _cpu_memory(held_nonzero_request(task)) == (3_500.0, 2 * GI)
    assert _cpu_memory(nonzero_request(task)) == (2_000.0, 2 * GI)
    infeasible = dict(status, conditions=[{"type": "PodResizePending", "reason": "Infeasible"}])
    assert _cpu_memory(held_nonzero_request(_task(spec, infeasible))) == (3_500.0, 2 * GI)
