"""Predicate outcomes (Volcano's FitError / FitErrors, ``api/unschedule_info.go``)."""

from __future__ import annotations

UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
ERROR = "Error"

# Statuses that exclude a node from preemption: evicting victims cannot fix them.
_BLOCKS_PREEMPTION = frozenset({UNRESOLVABLE, ERROR, "Wait", "Skip", "Invalid"})


class FitError:
    """Why one task does not fit one node: a list of (status code, reason)."""

    __slots__ = ("statuses", "has_unresolvable_status")

    def __init__(self, statuses: list[tuple[str, str]]) -> None:
        self.statuses = list(statuses)
        # Some status is UnschedulableAndUnresolvable: preempt and reclaim ask it of every failed
        # node of a task again at each of its attempts.
        self.has_unresolvable_status = any(code == UNRESOLVABLE for code, _ in self.statuses)

    @property
    def unresolvable(self) -> bool:
        return any(code in _BLOCKS_PREEMPTION for code, _ in self.statuses)

    @property
    def reasons(self) -> list[str]:
        return [reason for _, reason in self.statuses]

    def __repr__(self) -> str:
        return f"FitError({'; '.join(self.reasons)})"


class FitErrors:
    """The fit errors of one task: per node, plus an optional task-level message and the HyperNode
    whose nodes were tried (allocate names one below the cluster top)."""

    __slots__ = ("nodes", "message", "hyper_node")

    def __init__(self, nodes: dict[str, FitError] | None = None, message: str = "") -> None:
        self.nodes = nodes if nodes is not None else {}
        self.message = message
        self.hyper_node = ""

    def set_hyper_node(self, name: str) -> None:
        """FitErrors.SetHyperNode: the errors are those of the nodes of this HyperNode."""
        self.hyper_node = name

    def unresolvable_nodes(self) -> set[str]:
        """GetUnschedulableAndUnresolvableNodes: the nodes some of whose statuses are
        UnschedulableAndUnresolvable itself (evicting pods there cannot help)."""
        return {name for name, error in self.nodes.items() if error.has_unresolvable_status}

    def summary(self) -> str:
        """Volcano's one-line form (``FitErrors.Error``): ``0/3 nodes are unavailable: 1 Insufficient cpu,
        2 node(s) didn't match Pod's node affinity/selector.``  Each reason is counted once per node
        that gave it; the "count reason" strings are sorted as strings, as Go sorts them.  Errors of
        a HyperNode's nodes start ``In hyperNode <name>: `` (only when some node failed: the bare
        message stands alone)."""
        head = self.message or f"0/{len(self.nodes)} nodes are unavailable"
        if not self.nodes:
            return head
        counts: dict[str, int] = {}
        for error in self.nodes.values():
            for reason in error.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        text = f"{head}: {', '.join(sorted(f'{n} {reason}' for reason, n in counts.items()))}."
        return f"In hyperNode {self.hyper_node}: {text}" if self.hyper_node else text

    def __repr__(self) -> str:
        return f"FitErrors({self.message or len(self.nodes)})"
