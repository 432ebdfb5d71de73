"""What two sessions decided differently: binds, evictions, pipelined tasks and PodGroup phases.

``fumarole diff`` runs one cluster under two bundles; a replay compares two
bundles session by session.  Both reduce a session's :class:`Decisions` to a
list of :class:`Decision` values and keep those found on one side only, each
with the explanation of the side that made it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from fumarole.runtime.authoring.explanations import Explanation
from fumarole.runtime.framework.session import Decisions

KINDS = ("bind", "evict", "pipeline", "phase")
# The explanation that tells why a decision was made: a phase is explained by its job's pending explanation.
_EXPLAINED_BY = {"bind": "bind", "evict": "evict", "pipeline": "pipeline", "phase": "pending"}


@dataclass(frozen=True)
class Decision:
    """One thing a session decided: a pod bound to / pipelined on a node, a pod evicted (and by
    which action), a PodGroup's phase at the end of the session."""

    kind: str
    subject: str
    value: str

    def __str__(self) -> str:
        if self.kind == "evict":
            return f"evict {self.subject} ({self.value})"
        if self.kind == "phase":
            return f"phase {self.subject} {self.value}"
        return f"{self.kind} {self.subject} -> {self.value}"

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "subject": self.subject, "value": self.value}


def decision_list(decisions: Decisions) -> list[Decision]:
    """A session's decisions in a fixed order: binds, evictions, pipelined tasks, phases."""
    out = [Decision("bind", pod, node) for pod, node in decisions.binds]
    out += [Decision("evict", pod, reason) for pod, reason in decisions.evictions]
    out += [Decision("pipeline", pod, node) for _job, tasks in sorted(decisions.pipelined.items())
            for pod, node in tasks]
    out += [Decision("phase", job, phase) for job, phase in decisions.phases.items()]
    return out


@dataclass(frozen=True)
class DecisionDiff:
    """The decisions made on one side only (each in its side's order), and how many both made."""

    only_base: tuple[Decision, ...]
    only_candidate: tuple[Decision, ...]
    same: int

    @property
    def changed(self) -> bool:
        return bool(self.only_base or self.only_candidate)

    def summary(self) -> str:
        """One line: how many decisions differ, by kind, and how many are the same."""
        if not self.changed:
            return f"no difference: {self.same} decisions the same"
        count = len(self.only_base) + len(self.only_candidate)
        return (f"{count} decision{'s' * (count != 1)} differ: {_tally(self.only_base)} only in base, "
                f"{_tally(self.only_candidate)} only in candidate; {self.same} the same")


def diff_decisions(base: Decisions, candidate: Decisions) -> DecisionDiff:
    """What only ``base`` decided and what only ``candidate`` decided (as multisets)."""
    left, right = decision_list(base), decision_list(candidate)
    common = Counter(left) & Counter(right)
    return DecisionDiff(_minus(left, common), _minus(right, common), sum(common.values()))


def _minus(items: list[Decision], common: Counter) -> tuple[Decision, ...]:
    left = Counter(common)
    out = []
    for item in items:
        if left[item] > 0:
            left[item] -= 1
        else:
            out.append(item)
    return tuple(out)


def _tally(items: Sequence[Decision]) -> str:
    if not items:
        return "0"
    counts = Counter(d.kind for d in items)
    return f"{len(items)} (" + ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k]) + ")"


def explanation_of(decision: Decision, explanations: Sequence[Explanation]) -> Explanation | None:
    """The explanation of the session that made ``decision`` (none for a phase nothing held back)."""
    kind = _EXPLAINED_BY[decision.kind]
    return next((e for e in explanations if e.kind == kind and e.subject == decision.subject), None)


def diff_json(diff: DecisionDiff, base_explanations: Sequence[Explanation],
              candidate_explanations: Sequence[Explanation]) -> dict[str, Any]:
    """The diff as a document: each decision with its side's explanation (or null), and the summary."""
    def side(items: Sequence[Decision], explanations: Sequence[Explanation]) -> list[dict]:
        out = []
        for decision in items:
            explanation = explanation_of(decision, explanations)
            out.append({**decision.as_json(), "explanation": explanation.as_json() if explanation else None})
        return out
    return {"onlyInBase": side(diff.only_base, base_explanations),
            "onlyInCandidate": side(diff.only_candidate, candidate_explanations),
            "same": diff.same, "changed": diff.changed, "summary": diff.summary()}
