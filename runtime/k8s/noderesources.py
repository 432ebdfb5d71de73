"""Kubernetes' ``noderesources`` plugin: the non-zero requests the resource scorers count,
the requests summed over a node's k8s view, and NodeResourcesBalancedAllocation."""

from __future__ import annotations

import math

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube_convert import resize_infeasible, sidecar_aggregate
from fumarole.runtime.k8s.podspec import cached_per_spec, list_at, mapping_at, MAX_NODE_SCORE, pod_spec
from fumarole.runtime.k8s.podtopologyspread import included


DEFAULT_MILLI_CPU = 100.0  # schedutil.DefaultMilliCPURequest


DEFAULT_MEMORY = 200.0 * 1024 * 1024  # schedutil.DefaultMemoryRequest


def _nonzero(requests: dict | None) -> Resource:
    """A container's cpu/memory request list with the defaults for a request that is absent
    (None: no list, every default).

    Only a missing key gets the default: an explicit ``cpu: 0`` stays 0, as in
    Kubernetes' ``NonMissingContainerRequests``.
    """
    requests = requests or {}
    parsed = Resource.from_list({k: v for k, v in requests.items() if k in ("cpu", "memory")})
    return Resource(parsed.milli_cpu if "cpu" in requests else DEFAULT_MILLI_CPU,
                    parsed.memory if "memory" in requests else DEFAULT_MEMORY)


def _listed(owner: dict, key: str) -> dict | None:
    value = owner.get(key) if isinstance(owner, dict) else None
    return value if isinstance(value, dict) else None


def _spec_requests(container: dict, _status: dict | None, _infeasible: bool) -> dict | None:
    return _listed(mapping_at(container, "resources"), "requests")


def _allocated_requests(container: dict, status: dict | None, infeasible: bool) -> dict | None:
    """component-helpers containerAllocatedRequests."""
    allocated = _listed(status, "allocatedResources") if status is not None else None
    if allocated is not None:
        return allocated
    return None if infeasible else _spec_requests(container, status, infeasible)


def _actuated_requests(container: dict, status: dict | None, infeasible: bool) -> dict | None:
    """component-helpers containerActuatedRequests."""
    if status is not None:
        actuated = _listed(mapping_at(status, "resources"), "requests")
        if actuated is not None:
            return actuated
        allocated = _listed(status, "allocatedResources")
        if allocated is not None:
            return allocated
    return None if infeasible else _spec_requests(container, status, infeasible)


def _plain(requests: dict | None) -> Resource:
    """A container's request list as it is (every resource, no defaults)."""
    return Resource.from_list(requests or {})


def _aggregate(spec: dict, statuses: dict[str, dict], infeasible: bool, listed, amount=_nonzero) -> Resource:
    """component-helpers aggregateContainerResourcesByFn, each container counted by ``amount``
    (by default with the non-zero defaults)."""
    return sidecar_aggregate(spec, lambda container, _index, _group: amount(
        listed(container, statuses.get(str(container.get("name"))), infeasible)))


_STATUS_LISTS = ("initContainerStatuses", "containerStatuses")


def _pod_requests(spec: dict, status: dict | None, amount=_nonzero) -> Resource:
    """Kubernetes' PodRequests with the pod-level requests on (PodLevelResources) and, given the
    pod's status, UseStatusResources: the largest of the spec's, the actuated and the allocated
    aggregates (without the spec's when a resize is infeasible), each aggregated over the
    containers first.  ``amount`` counts a container: by default NonMissingContainerRequests
    (cpu/memory only, the non-zero defaults), else :func:`_plain`."""
    if status is None:
        total = _aggregate(spec, {}, False, _spec_requests, amount)
    else:
        # findContainerStatus: the first of that name, container statuses before init ones.
        statuses = {str(cs.get("name")): cs for field in _STATUS_LISTS
                    for cs in reversed(list_at(status, field)) if isinstance(cs, dict)}
        infeasible = resize_infeasible(status)
        total = _aggregate(spec, statuses, infeasible, _actuated_requests, amount)
        total.set_max(_aggregate(spec, statuses, infeasible, _allocated_requests, amount))
        if not infeasible:
            total.set_max(_aggregate(spec, statuses, infeasible, _spec_requests, amount))
    pod_level = _listed(mapping_at(spec, "resources"), "requests") or {}
    if "cpu" in pod_level or "memory" in pod_level:
        parsed = Resource.from_list({k: v for k, v in pod_level.items() if k in ("cpu", "memory")})
        total.milli_cpu = parsed.milli_cpu if "cpu" in pod_level else total.milli_cpu
        total.memory = parsed.memory if "memory" in pod_level else total.memory
    return total.add(Resource.from_list(mapping_at(spec, "overhead")))


def _pod_nonzero(spec: dict, status: dict | None) -> Resource:
    """The cpu and memory of :func:`_pod_requests` with the non-zero defaults."""
    total = _pod_requests(spec, status)
    return Resource(total.milli_cpu, total.memory)


@cached_per_spec
def nonzero_request(task: Task) -> Resource:
    """The pod's cpu/memory request as the k8s resource scorers see it.

    LeastAllocated / MostAllocated must not treat request-less pods as free, so
    every container (init containers included) without a cpu or memory request
    counts 100m / 200Mi (PodRequests' NonMissingContainerRequests).  The scorers
    read the spec alone: Volcano's nodeorder leaves the plugins'
    InPlacePodVerticalScaling feature off, and turns PodLevelResources on.
    """
    return _pod_nonzero(pod_spec(task), None)


def _statuses_of(task: Task) -> dict | None:
    """The pod's status when reading it can change what the pod counts: a container status
    carries ``resources`` or ``allocatedResources`` (a resize), or a resize is infeasible.
    Otherwise None: every container then counts its spec, as reading the spec alone gives, so
    the usual running pod (statuses without resources) skips the three aggregates."""
    pod = task.pod if isinstance(task.pod, dict) else {}
    status = pod.get("status")
    if not isinstance(status, dict):
        return None
    resized = any(isinstance(cs, dict) and (cs.get("resources") is not None or cs.get("allocatedResources") is not None)
                  for field in _STATUS_LISTS for cs in list_at(status, field))
    return status if resized or resize_infeasible(status) else None


def held_nonzero_request(task: Task) -> Resource:
    """A pod of a node's view as Kubernetes' NodeInfo counts it in NonZeroRequested: as
    :func:`nonzero_request`, reading the pod's status too (the NodeInfo reads the feature
    gates, and InPlacePodVerticalScaling is on), so a resized pod holds what its resize does."""
    status = _statuses_of(task)
    return nonzero_request(task) if status is None else _pod_nonzero(pod_spec(task), status)


def held_request(task: Task) -> Resource:
    """A pod of a node's view as Kubernetes' NodeInfo counts it in Requested (what
    BalancedAllocation reads): PodRequests with its status read, so a pod whose containers were
    resized counts the larger of its spec and status aggregates, each summed over the
    containers first -- not Volcano's request, which takes each container's larger first.  A
    pod without container statuses counts its request, which the two agree on."""
    status = _statuses_of(task)
    if status is None:
        return task.request
    return _pod_requests(pod_spec(task), status, _plain)


def view_requested(node: Node) -> Resource:
    """Sum of the requests of the pods in the node's k8s view (Kubernetes' NodeInfo.Requested: see
    :func:`held_request`), kept until the view changes."""
    return _view_sum(node, _REQUESTED)


def view_nonzero_requested(node: Node) -> Resource:
    """As :func:`view_requested`, with the non-zero defaults (k8s NodeInfo.NonZeroRequested)."""
    return _view_sum(node, _NONZERO)


# The sums kept in a node's view_cache, each under its key and, under the key and _TERMS, how
# many of its terms carry scalars while the sum is whole (else None): every cpu, memory and scalar
# amount of its terms a whole number, not negative, and the sum's below 2^53.  Whole numbers add up
# exactly in any order there, so a whole sum less one of its terms is the sum of the others
# (view_removed).
_REQUESTED, _NONZERO = ("requested", held_request), ("nonzero", held_nonzero_request)
_SUMS = (_REQUESTED, _NONZERO)
_TERMS = " terms"
_EXACT_BELOW = float(2 ** 53)  # every whole number up to here is a float


def _view_sum(node: Node, kept: tuple) -> Resource:
    key, term = kept
    cache = node.view_cache
    total = cache.get(key)
    if total is None:
        total = Resource()
        carrying: int | None = 0
        for task in node.view_pods.values():
            amount = term(task)
            total.add(amount)
            carrying = _carrying(carrying, amount)
        cache[key], cache[key + _TERMS] = total, _if_exact(carrying, total)
    return total


def _whole(amount: float) -> bool:
    """A whole number, not negative (scalars may hold ints)."""
    return amount >= 0 and (isinstance(amount, int) or amount.is_integer())


def _carrying(carrying: int | None, amount: Resource) -> int | None:
    """The terms carrying scalars with ``amount`` added, or None when it or the sum is not whole."""
    if carrying is None or not (_whole(amount.milli_cpu) and _whole(amount.memory)):
        return None
    if not amount.scalars:
        return carrying
    return carrying + 1 if all(_whole(value) for value in amount.scalars.values()) else None


def _if_exact(carrying: int | None, total: Resource) -> int | None:
    amounts = (total.milli_cpu, total.memory, *(total.scalars or {}).values())
    return carrying if carrying is not None and max(amounts) < _EXACT_BELOW else None


def view_appended(node: Node, task: Task) -> None:
    """The task joined the end of the node's view: the sums kept so far take its requests last,
    the same additions in the same order as summing the whole view again."""
    cache = node.view_cache
    kept = [(key, term, cache.get(key), cache.get(key + _TERMS)) for key, term in _SUMS]
    cache.clear()
    for key, term, total, carrying in kept:
        if total is not None:
            amount = term(task)
            cache[key] = total = total.clone().add(amount)
            cache[key + _TERMS] = _if_exact(_carrying(carrying, amount), total)


def view_removed(node: Node, task: Task) -> None:
    """The task (as the view held it) left the node's view.  A whole kept sum less the task's
    requests is the sum of the pods left, to the bit, where those requests are whole and the sum
    has one scalar at most (what adding up the rest makes of the scalars is then known: the same
    one, or none once no term carries it); any other sum is added up again when next asked."""
    cache = node.view_cache
    kept = [(key, term, cache.get(key), cache.get(key + _TERMS)) for key, term in _SUMS]
    cache.clear()
    for key, term, total, carrying in kept:
        if total is None or carrying is None or (total.scalars is not None and len(total.scalars) > 1):
            continue
        amount = term(task)
        if _carrying(0, amount) is None:
            continue
        left = total.clone().sub(amount)
        if amount.scalars:
            carrying -= 1
            left.scalars = left.scalars if carrying else None
        cache[key], cache[key + _TERMS] = left, carrying


# The resources Volcano's nodeorder plugin gives NodeResourcesBalancedAllocation.
BALANCED_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


_GPU = BALANCED_RESOURCES[2]


def _balance(cpu: float, memory: float, gpu: float | None, allocatable: Resource) -> int:
    """How evenly requests of ``cpu``, ``memory`` and ``gpu`` fill ``allocatable``: 100 minus 100
    times the spread of the fractions.

    A resource the node does not have is left out, and so is the extended
    resource when the pod does not ask for it (``gpu`` None).  With two
    fractions the spread is half their difference, with more their population
    standard deviation.  Scores every node a task is weighed against, so the
    resources are spelled out rather than looked up by name.
    """
    fractions = []
    if allocatable.milli_cpu != 0:
        fractions.append(min(cpu / allocatable.milli_cpu, 1.0))
    if allocatable.memory != 0:
        fractions.append(min(memory / allocatable.memory, 1.0))
    if gpu is not None:
        capacity = allocatable.get(_GPU)
        if capacity != 0:
            fractions.append(min(gpu / capacity, 1.0))
    spread = 0.0
    if len(fractions) == 2:
        spread = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        spread = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - spread) * MAX_NODE_SCORE)


def balanced_allocation_score(task: Task, node: Node) -> int:
    """NodeResourcesBalancedAllocation as Kubernetes v1.36 scores it, in [50, 100].

    Since v1.36 the score rewards the change of balance that placing the pod
    brings, not the balance after placement alone: no change scores 75, going
    from perfectly balanced to fully unbalanced 50, the reverse 100.  Requests
    are the actual ones (no non-zero defaults).  A pod requesting none of the
    resources is skipped (scores 0), as the scorer's PreScore does.
    """
    pod = task.request
    pod_gpu = pod.get(_GPU)
    if pod.milli_cpu == 0 and pod.memory == 0 and pod_gpu == 0:
        return 0
    before = view_requested(node)
    gpu = None if pod_gpu == 0 else before.get(_GPU)
    with_pod = _balance(before.milli_cpu + pod.milli_cpu, before.memory + pod.memory,
                        None if gpu is None else gpu + pod_gpu, node.allocatable)
    without_pod = _balance(before.milli_cpu, before.memory, gpu, node.allocatable)
    # Go's integer division; the dividend is never negative (both scores lie in [50, 100]).
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2
