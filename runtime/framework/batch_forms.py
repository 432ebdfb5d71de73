"""The fast engine's batch forms, as the compiler hands them to the runtime.

``policy_lang/vectorize.py`` emits, beside a hook or definition compiled node by node, the same
rule over a batch of nodes, and registers it with the session's :class:`BatchForms` as a
:class:`BatchForm` of the per-node function (``_rt.batch_forms.add(f, _BatchForm(...))``);
the session registers one for each node-level dispatcher (``batch_dispatch.py``).  The fast
engine asks the registry for the form of a function it is about to run node by node; the
reference engine never does.

A rule that cannot run as a batch has no form: the compiler knows it (``vectorize.Fallback``,
``fumarole check --strict`` lists them), so the runtime never tries one and falls back.  What a
form may still do at run time is stop at a policy failure (a missing map key, a division by
zero: :data:`policy_error.POLICY_FAILURES`); the runtime then runs the per-node code, which
raises it again at its policy line.  If the per-node code does not, the two engines disagree:
:class:`EngineDisagreement`.

Checking the engines against each other (the environment variable ``FUMAROLE_CHECK_ENGINES=1``
when a session starts; the test suite always sets it; docs/language.md): each batch answer the
runtime uses is compared with the per-node answer, and a difference raises
:class:`EngineDisagreement` naming the rule and the node.  Without it, a disagreement found on
the way (a form failing where the per-node code does not) takes the per-node answer, Volcano's;
the predicate helper meets a refused node's per-node answer only where it asks for the node's fit
error (``predicate_helper._predicate_batch``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

CHECK_ENGINES_VARIABLE = "FUMAROLE_CHECK_ENGINES"


def engines_checked() -> bool:
    """Whether sessions started now compare each batch answer with the per-node one."""
    return os.environ.get(CHECK_ENGINES_VARIABLE, "") not in ("", "0")


class EngineDisagreement(AssertionError):
    """A batch form and the per-node code it stands for answered differently: a fast-engine bug."""


class PerNodeOnly(Exception):
    """A batch form reached a hook that runs node by node only (a plugin hook with effects, such as
    an extender call, must be asked exactly as the per-node code asks it).  It is raised before
    anything ran, so its caller runs the per-node code instead: a hand-over, not a disagreement."""


@dataclass(frozen=True, eq=False, slots=True)
class BatchForm:
    """A node-level rule over a batch.

    ``run`` takes the per-node function's arguments with a NodeBatch (or the session's NodeList)
    where it takes a node, and answers one value per lane.  ``guard`` (a plugin's failure hook)
    and ``row_local`` (a node check, or a dispatcher over such hooks) take the per-node
    arguments with None in the node's place: while the guard is false, or while row_local is
    true, the answer for a node depends only on that node's own facts (its row), so it may be
    kept per row (``NodeColumns.memo``)."""

    run: Callable[..., Any]
    guard: Callable[..., bool] | None = None
    row_local: Callable[..., bool] | None = None

    def answers_per_row(self, *args: Any) -> bool:
        """Whether, for these arguments (None in the node's place), each node's answer depends on
        its own row alone: a guard that is false, or a row-local test that holds."""
        if self.guard is not None:
            return not self.guard(*args)
        return self.row_local is not None and self.row_local(*args)


class BatchForms:
    """One session's batch forms, by the per-node function (or dispatcher) they stand for."""

    __slots__ = ("_forms", "_per_node_only", "checked")

    def __init__(self, checked: bool = False) -> None:
        self._forms: dict[Callable[..., Any], BatchForm] = {}
        self._per_node_only: set[Callable[..., Any]] = set()
        self.checked = checked  # compare every batch answer with the per-node one (see the module)

    def add(self, per_node: Callable[..., Any], form: BatchForm) -> None:
        self._forms[per_node] = form

    def mark_per_node_only(self, per_node: Callable[..., Any]) -> None:
        """A hook (or a dispatcher over one) that has effects: never run over a batch."""
        self._per_node_only.add(per_node)

    def is_per_node_only(self, per_node: Callable[..., Any]) -> bool:
        return per_node in self._per_node_only

    def of(self, per_node: Callable[..., Any]) -> BatchForm | None:
        return self._forms.get(per_node)

    def hooks_row_local(self, dispatchers: tuple[Callable[..., Any], ...], task: Any) -> bool:
        """Whether each failure hook of a node check answers for ``task`` from its node's own
        facts (``vectorize``'s node-check test, through each dispatcher's ``row_local``)."""
        for dispatcher in dispatchers:
            form = self._forms.get(dispatcher)
            if form is None or not form.answers_per_row(task, None):
                return False
        return True


def disagreement(rule: Callable[..., Any], where: str, batch: object, per_node: object) -> EngineDisagreement:
    """The error for a batch answer that is not the per-node one."""
    name = getattr(rule, "__qualname__", repr(rule))
    return EngineDisagreement(f"the batch and per-node forms of {name} disagree on {where}: "
                              f"{batch!r} (batch) against {per_node!r} (per node)")
