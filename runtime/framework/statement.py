"""Volcano's Statement (``framework/statement.go``): a transaction over the session.

Operations take effect in the session at once (statuses, node accounting,
plugin event handlers); ``commit`` turns them into decisions the outside world
sees (binds, evictions), ``discard`` undoes them in reverse order.  As in
Volcano, ``discard`` first keeps each task's transaction (its status, node and
whether an eviction made room) as its last one (``GenerateLastTxContext``) and
``commit`` forgets it (``ClearLastTxContext``): the session's close reads it
for the node it nominates (``JobInfo.TaskSchedulingReason``).
"""

from __future__ import annotations

from typing import Protocol

from fumarole.runtime.api.model import ALLOCATED, PIPELINED, Node, Task


class SessionOperations(Protocol):
    """The session operations a statement records and undoes (implemented by ``Session``)."""

    def evict_in_session(self, task: Task) -> None: ...
    def unevict(self, task: Task) -> None: ...
    def place(self, task: Task, node: Node, status: str) -> bool: ...
    def undo_placement(self, task: Task, on_node: bool = True) -> None: ...
    def record_eviction(self, task: Task, reason: str) -> None: ...
    def bind(self, task: Task) -> None: ...

    @property
    def nodes(self) -> dict[str, Node]: ...

EVICT, PIPELINE, ALLOCATE = "evict", "pipeline", "allocate"


class SavedOperations:
    """SaveOperations: what statements did (task, node, reason), kept after they are discarded.

    Volcano saves clones of the tasks, and recovering them puts the clones in the job: each
    carries the last transaction its task had when saved, so ``recover`` gives that back."""

    __slots__ = ("operations",)

    def __init__(self, operations: list[tuple[str, Task, str, str, bool, tuple[str, str, bool] | None]]) -> None:
        self.operations = operations

    @classmethod
    def of(cls, statements: list["Statement"]) -> "SavedOperations":
        return cls([(kind, task, task.node_name, reason, task.eviction_occurred, task.last_transaction)
                    for stmt in statements for kind, task, reason in stmt.operations])


class Statement:
    __slots__ = ("ssn", "operations")

    def __init__(self, ssn: SessionOperations) -> None:
        self.ssn = ssn
        self.operations: list[tuple[str, Task, str]] = []

    # -- operations -------------------------------------------------------------
    def evict(self, task: Task, reason: str) -> bool:
        self.ssn.evict_in_session(task)
        self.operations.append((EVICT, task, reason))
        return True

    def pipeline(self, task: Task, node: Node, eviction_occurred: bool) -> bool:
        task.eviction_occurred = eviction_occurred
        if not self.ssn.place(task, node, PIPELINED):
            return False
        self.operations.append((PIPELINE, task, ""))
        return True

    def allocate(self, task: Task, node: Node) -> bool:
        if not self.ssn.place(task, node, ALLOCATED):
            return False
        self.operations.append((ALLOCATE, task, ""))
        return True

    def unpipeline(self, task: Task) -> None:
        """Undo a pipeline directly, recording nothing (backfill uses this)."""
        self.ssn.undo_placement(task)

    def recover(self, saved: "SavedOperations") -> bool:
        """RecoverOperations: redo saved operations on their recorded nodes; false at the first that fails."""
        for kind, task, node_name, reason, eviction_occurred, last_transaction in saved.operations:
            task.last_transaction = last_transaction
            if kind == EVICT:
                self.evict(task, reason)
                continue
            node = self.ssn.nodes.get(node_name)
            if node is None:
                return False
            done = self.allocate(task, node) if kind == ALLOCATE else self.pipeline(task, node, eviction_occurred)
            if not done:
                return False
        return True

    def merge(self, other: "Statement") -> None:
        self.operations.extend(other.operations)
        other.operations = []

    # -- outcome --------------------------------------------------------------------
    def commit(self) -> None:
        ssn = self.ssn
        for kind, task, reason in self.operations:
            task.last_transaction = None
            if kind == EVICT:
                ssn.record_eviction(task, reason)
            elif kind == ALLOCATE:
                ssn.bind(task)
        self.operations = []

    def discard(self) -> None:
        ssn = self.ssn
        for kind, task, _reason in reversed(self.operations):
            task.last_transaction = (task.status, task.node_name, task.eviction_occurred)
            if kind == EVICT:
                ssn.unevict(task)
            else:
                ssn.undo_placement(task)
        self.operations = []

