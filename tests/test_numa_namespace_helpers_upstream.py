"""Volcano's numa_info_test.go, namespace_info_test.go and helpers/helpers_test.go (ed72c7c8),
restated on what fumarole reads of a Numatopology (``runtime/api/numa.py``), of a ResourceQuota
(``runtime/api/constraints.py``) and on the resource standard library's ``res_max``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from fumarole.runtime.api.constraints import namespace_quota
from fumarole.runtime.api.numa import numa_topology
from fumarole.runtime.api.resource import Resource, exactly_equal, res_max

POD_ALLOCATIONS = [{"uid": "uid-1", "name": "p1", "namespace": "ns1"}, {"uid": "uid-2", "name": "p2", "namespace": "ns2"}]


def numatopo(pod_allocations: list[dict] | None) -> dict:
    """newNumatopoInfoForTest: node n1, CPUs 0-3 allocatable, the given podAllocations."""
    spec: dict = {"numares": {"cpu": {"allocatable": "0-3", "capacity": 4}}}
    if pod_allocations is not None:
        spec["podAllocations"] = pod_allocations
    return {"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": "n1"}, "spec": spec}


@pytest.mark.parametrize("allocations, uid, name, namespace, want", [
    (POD_ALLOCATIONS, "uid-1", "other", "other", True),   # "match by UID"
    (POD_ALLOCATIONS, "uid-unknown", "p2", "ns2", True),  # "match by namespace+name only"
    (POD_ALLOCATIONS, "uid-x", "p3", "ns3", False),       # "no match at all"
    (POD_ALLOCATIONS, "uid-x", "p2", "ns3", False),       # "namespace+name partial mismatch"
    (None, "uid-1", "p1", "ns1", False),                  # "empty PodAllocations lookup"
])
def test_check_numa_pod_assigned(allocations, uid, name, namespace, want):
    """TestCheckNumaPodAssigned: the node lists the pod by UID, or by name and namespace together."""
    assert numa_topology(numatopo(allocations)).lists_pod(uid, name, namespace) is want


def quota(name: str, cpu: int) -> dict:
    """newQuota: an empty spec.hard, status.hard of ``cpu`` CPUs."""
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": "testCollection"},
            "spec": {"hard": {}}, "status": {"hard": {"cpu": str(cpu)}}}


@pytest.mark.parametrize("cpu", [1, 2])
def test_namespace_collection_keeps_the_quota_status(cpu):
    """TestNamespaceCollection's reads: a quota's status.hard (not its empty spec.hard) is what the
    namespace keeps, after the first Update (1 CPU) and after the later one (2 CPUs).  The Update /
    Delete sequence itself is the scheduler cache's upkeep between sessions; a session reads the
    ResourceQuotas its cluster lists, each once."""
    kept = namespace_quota(quota("abc", cpu))
    assert (kept.namespace, kept.name, kept.hard.amounts) == ("testCollection", "abc", {"cpu": Fraction(cpu)})


def test_max():
    """helpers_test.go TestMax: each dimension's larger value, scalars over the union of both sides."""
    l = Resource(1, 1024, {"gpu": 1.0, "common": 4.0})
    r = Resource(2, 1024, {"npu": 2.0, "common": 5.0})
    expected = Resource(2, 1024, {"gpu": 1.0, "npu": 2.0, "common": 5.0})
    got = res_max(l, r)
    assert exactly_equal(got, expected) and got.scalars == expected.scalars
