"""Dry runs (topology-aware preemption): a copy of a node that a policy may change directly.

A policy changes the session's nodes only through statements; a dry-run copy is the
one exception, so that preempt can try victims on a HyperNode's nodes and throw
the copies away.
"""

from __future__ import annotations

from fumarole.runtime.api.model import DryRunNode, Node, Task
from fumarole.runtime.framework.policy_error import PolicyRuntimeError


def dry_run_copy(node: Node) -> DryRunNode:
    return DryRunNode.of(node)


def remove_task(node: Node, task: Task) -> None:
    _dry_run_only(node, "remove_task").remove_task(task)


def add_task(node: Node, task: Task) -> None:
    _dry_run_only(node, "add_task").add_task(task)


def _dry_run_only(node: Node, what: str) -> DryRunNode:
    if not isinstance(node, DryRunNode):
        raise PolicyRuntimeError(f"{what} on node {node.name}: only a dry_run_copy() can be changed directly")
    return node
