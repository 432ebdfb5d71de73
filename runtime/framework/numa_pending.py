"""The CPUs numa-aware gave pods that their nodes do not report yet, carried between sessions.

Volcano's numa-aware plugin hands the scheduler cache, when a session closes,
the CPUs it chose for each pod it placed (``AddUnassignedNumaPods``): the node
keeps them as ``UnassignedNumaPods`` and every later snapshot takes them off
the node's allocatable CPUs (``NodeInfo.RefreshNumaSchedulerInfoByCrd``), until
the node's Numatopology lists every one of those pods in
``spec.podAllocations`` (the kubelet has pinned them); then they are dropped.
Without it the next session would see the CPUs free that the previous one
just gave away, until the resource exporter catches up.

fumarole keeps the same record in :class:`ProcessState` (``numa_pending``:
node -> pod UID -> its name, namespace and CPU lists), so ``fumarole serve``
and a trace replay carry it as one Volcano process does; a single ``run``
starts with none.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from fumarole.runtime.api.model import Node

from fumarole.runtime.api.numa import format_cpu_set, node_numa, parse_cpu_set


def record_pending(pending: dict[str, dict[str, dict[str, Any]]], node: str, uid: str, name: str,
                   namespace: str, sets: Mapping[str, list[int]]) -> None:
    """AddUnassignedNumaPods for one pod: its CPU lists per resource, kept for the node."""
    pending.setdefault(node, {})[uid] = {"name": name, "namespace": namespace,
                                         "cpus": {res: format_cpu_set(ids) for res, ids in sets.items()}}


def apply_pending(nodes: Mapping[str, Node], pending: dict[str, dict[str, dict[str, Any]]]) -> None:
    """RefreshNumaSchedulerInfoByCrd on the session's nodes: a node whose Numatopology lists
    every pending pod forgets them; otherwise all of them (listed or not) are taken off its
    allocatable CPUs.  A node without a Numatopology keeps its record untouched."""
    for node_name in list(pending):
        node = nodes.get(node_name)
        topology = node_numa(node) if node is not None else None
        if node is None or topology is None:
            continue
        pods = pending[node_name]
        if all(topology.lists_pod(uid, pod["name"], pod["namespace"]) for uid, pod in pods.items()):
            del pending[node_name]
            continue
        allocatable = topology.allocatable_sets
        for pod in pods.values():
            for resource, text in pod["cpus"].items():
                if resource in allocatable:
                    taken = set(parse_cpu_set(text) or ())
                    allocatable[resource] = [id for id in allocatable[resource] if id not in taken]
        node.numa = replace(topology, allocatable=tuple((r, tuple(ids)) for r, ids in allocatable.items()))


__all__ = ["record_pending", "apply_pending"]
