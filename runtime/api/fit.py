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
    """The fit errors of one task: per node, plus an optional task-level message."""

    __slots__ = ("nodes", "message")

    def __init__(self, nodes: dict[str, FitError] | None = None, message: str = "") -> None:
        self.nodes = nodes if nodes is not None else {}
        self.message = message

    def summary(self) -> str:
        """Volcano's one-line form (``FitErrors.Error``): ``0/3 nodes are unavailable: 1 Insufficient cpu,
        2 node(s) didn't match Pod's node affinity/selector.``  Each reason is counted once per node
        that gave it; the "count reason" strings are sorted as strings, as Go sorts them."""
        head = self.message or f"0/{len(self.nodes)} nodes are unavailable"
        if not self.nodes:
            return head
        counts: dict[str, int] = {}
        for error in self.nodes.values():
            for reason in error.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        return f"{head}: {', '.join(sorted(f'{n} {reason}' for reason, n in counts.items()))}."

    def __repr__(self) -> str:
        return f"FitErrors({self.message or len(self.nodes)})"
