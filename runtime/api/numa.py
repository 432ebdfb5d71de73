"""The NUMA facts Volcano's numa-aware plugin reads: ``Numatopology`` objects and CPU requests.

A node's resource-exporter publishes one cluster-scoped
``nodeinfo.volcano.sh/v1alpha1`` ``Numatopology`` per node, named after it:
the kubelet's CPU-manager and topology-manager policies
(``spec.policies``), per resource the CPUs still allocatable
(``spec.numares.cpu.allocatable``, a CPU list such as ``"0-3,8"``), each
CPU's NUMA node, socket and core (``spec.cpuDetail``) and what the kubelet
reserves (``spec.resReserved``).  Volcano's cache keeps it as the node's
``NumatopoInfo`` (``api/numa_info.go``); a session reads it as ``node.numa``.
``spec.podAllocations`` names the pods whose CPUs the kubelet has pinned: the
CPUs numa-aware gave a pod count as taken until its node lists it
(``runtime/framework/numa_pending.py``).

A cluster input is validated here when it is read: a CPU list, CPU id or
reserved quantity that does not parse is a positioned error instead of the
empty set Volcano logs and goes on with.  Which CPUs a pod gets is decided in
``policies/volcano/plugins/numa_aware.policy``; nothing here decides.
"""

from __future__ import annotations

import hashlib
import math
import re
from fractions import Fraction
from dataclasses import dataclass
from typing import Any

from fumarole.runtime.api.quantity import milli_value, parse_quantity, value

KIND = "Numatopology"
CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
# CPU ids above this are refused: a CPU list is expanded CPU by CPU, and no machine has more.
MAX_CPU_ID = 65535
_NUMBER = re.compile(r"\+?[0-9]+")


@dataclass(frozen=True, slots=True)
class NumaCpu:
    """One logical CPU of a node (an entry of ``spec.cpuDetail``)."""

    id: int
    numa: int
    socket: int
    core: int


@dataclass(frozen=True, slots=True)
class NumaTopology:
    """A node's ``Numatopology`` as Volcano's ``NumatopoInfo`` holds it."""

    name: str
    cpu_manager_policy: str
    topology_manager_policy: str
    cpus: tuple[NumaCpu, ...]  # by id
    allocatable: tuple[tuple[str, tuple[int, ...]], ...]  # resource -> its allocatable CPU ids, ascending
    reserved_cpus: int  # spec.resReserved.cpu in whole CPUs, rounded up (0 when absent)
    pod_allocations: tuple[tuple[str, str, str], ...] = ()  # spec.podAllocations: (uid, name, namespace)

    def lists_pod(self, uid: str, name: str, namespace: str) -> bool:
        """Volcano's CheckNumaPodAssigned: the kubelet reports the pod's CPUs (same UID, or
        same name and namespace)."""
        return any(u == uid or (n == name and ns == namespace) for u, n, ns in self.pod_allocations)

    @property
    def cpu_list(self) -> list[NumaCpu]:
        return list(self.cpus)

    @property
    def allocatable_sets(self) -> dict[str, list[int]]:
        return {name: list(ids) for name, ids in self.allocatable}

    @property
    def layout_key(self) -> str:
        """A short text equal for two topologies exactly when their CPUs (id, NUMA node, socket,
        core) and reserved CPU count are: numa-aware works out what it derives from them once per
        layout, not once per node (a SHA-256 digest, 32 hex digits, of the canonical text)."""
        text = ";".join(f"{c.id},{c.numa},{c.socket},{c.core}" for c in self.cpus) + f"|{self.reserved_cpus}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class ContainerCpu:
    """What one container (not an init container) requests of CPUs, as the CPU manager reads it."""

    name: str
    cpu_milli: int  # Quantity.MilliValue() of requests.cpu (0 when absent)
    cpu_value: int  # Quantity.Value() of requests.cpu, whole CPUs rounded up (0 when absent)


def parse_cpu_set(text: str) -> list[int] | None:
    """Kubernetes' ``cpuset.Parse``: ``"0-3,8"`` as ascending ids; None when it is not a CPU list
    (or names an id above MAX_CPU_ID)."""
    ids: set[int] = set()
    if text == "":
        return []
    for part in text.split(","):
        bounds = part.split("-", 1)
        if not all(_NUMBER.fullmatch(b) for b in bounds):
            return None
        start, end = int(bounds[0]), int(bounds[-1])
        if start > end or end > MAX_CPU_ID:
            return None
        ids.update(range(start, end + 1))
    return sorted(ids)


def format_cpu_set(ids: list[int]) -> str:
    """Kubernetes' ``CPUSet.String()``: ascending ids, runs written as ranges (``"0-3,8"``)."""
    out: list[str] = []
    ordered = sorted(set(ids))
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            first, last = ordered[start], ordered[i - 1]
            out.append(str(first) if first == last else f"{first}-{last}")
            start = i
    return ",".join(out)


def _spec(obj: Any) -> dict:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec if isinstance(spec, dict) else {}


def cpu_id(key: Any) -> int | None:
    """A ``spec.cpuDetail`` key as the CPU id Volcano parses it to, None when it is not one."""
    text = str(key)
    return int(text) if _NUMBER.fullmatch(text) and int(text) <= MAX_CPU_ID else None


def numa_topology(obj: dict) -> NumaTopology:
    """The NumatopoInfo of a validated Numatopology object."""
    spec = _spec(obj)
    policies = spec.get("policies") or {}
    cpus = []
    for key, detail in (spec.get("cpuDetail") or {}).items():
        detail = detail or {}
        cpus.append(NumaCpu(int(str(key)), int(detail.get("numa") or 0), int(detail.get("socket") or 0),
                            int(detail.get("core") or 0)))
    allocatable = []
    for resource, info in (spec.get("numares") or {}).items():
        ids = parse_cpu_set(str((info or {}).get("allocatable") or ""))
        allocatable.append((str(resource), tuple(ids or ())))
    reserved = (spec.get("resReserved") or {}).get("cpu")
    reserved_cpus = math.ceil(milli_value(parse_quantity(reserved)) / 1000) if reserved is not None else 0
    pods = tuple((str(p.get("uid") or ""), str(p.get("name") or ""), str(p.get("namespace") or ""))
                 for p in spec.get("podAllocations") or [] if isinstance(p, dict))
    return NumaTopology(str(obj["metadata"]["name"]), str(policies.get(CPU_MANAGER_POLICY) or ""),
                        str(policies.get(TOPOLOGY_MANAGER_POLICY) or ""),
                        tuple(sorted(cpus, key=lambda cpu: cpu.id)), tuple(allocatable), reserved_cpus, pods)


def node_numa(node: Any) -> NumaTopology | None:
    """The node's Numatopology (Volcano's NumaSchedulerInfo), None when the cluster has none for it."""
    topology = getattr(node, "numa", None)
    return topology if isinstance(topology, NumaTopology) else None


def container_cpus(task: Any) -> list[ContainerCpu]:
    """Per container of the pod (``spec.containers``, in order) its CPU request."""
    if "container_cpus" not in task.derived:
        spec = task.pod.get("spec") if isinstance(task.pod, dict) else None
        containers = spec.get("containers") if isinstance(spec, dict) else None
        out = []
        for container in containers if isinstance(containers, list) else []:
            if not isinstance(container, dict):
                continue
            resources = container.get("resources")
            requests = resources.get("requests") if isinstance(resources, dict) else None
            amount = requests.get("cpu") if isinstance(requests, dict) else None
            quantity = parse_quantity(amount) if amount is not None else Fraction(0)
            out.append(ContainerCpu(str(container.get("name") or ""), milli_value(quantity), value(quantity)))
        task.derived["container_cpus"] = out
    return list(task.derived["container_cpus"])


__all__ = ["NumaCpu", "NumaTopology", "ContainerCpu", "parse_cpu_set", "format_cpu_set", "cpu_id",
           "numa_topology", "node_numa", "container_cpus"]
