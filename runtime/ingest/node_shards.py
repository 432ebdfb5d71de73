"""Volcano's NodeShards (``shard.volcano.sh/v1alpha1``): which nodes a sharded scheduler schedules onto.

A scheduler started with ``--scheduler-sharding-mode hard`` or ``soft`` watches
the cluster's NodeShard objects and keeps, for the session, the nodes of the
NodeShard named by ``--scheduler-sharding-name`` (``cache/shard_coordinator.go``,
``getAvailableNodesFromShard``): its ``spec.nodesDesired``, less every node
another NodeShard's ``status.nodesInUse`` still lists (a node moving between
shards is used by one scheduler at a time).  ``NewNodeShardInfo`` reads no
other field.  With no NodeShard of that name the cache logs an error and keeps
the nodes it had, which for a freshly started scheduler is none: hard mode then
schedules onto no node, soft mode prefers none (K107 says so).
"""

from __future__ import annotations

from typing import Iterable

from fumarole.policy_lang.diagnostics import Diagnostic
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.kube_convert import mapping_field

KIND = "NodeShard"


def _names(obj: dict, part: str, field: str) -> frozenset[str]:
    """A list of node names of the object (typed by kube_fields: a list of scalars, or unset)."""
    return frozenset(str(name) for name in mapping_field(obj, part).get(field) or ())


def nodes_in_shard(shards: Iterable[dict], name: str) -> frozenset[str]:
    """The session's NodesInShard for the scheduler whose shard is ``name`` (empty without that shard)."""
    shards = tuple(shards)
    own = next((obj for obj in shards if obj["metadata"]["name"] == name), None)
    if own is None:
        return frozenset()
    nodes = _names(own, "spec", "nodesDesired")
    for other in shards:
        if other is not own:
            nodes -= _names(other, "status", "nodesInUse")
    return nodes


def missing_shard_warning(shards: Iterable[dict], name: str, mode: str, file: str) -> list[Diagnostic]:
    """K107 when the cluster has no NodeShard ``name`` (the caller asks only in a sharding mode)."""
    if any(obj["metadata"]["name"] == name for obj in shards):
        return []
    return [kube_errors.node_shard_missing(file, name, mode)]
