"""The diagnostics of rules: victim-rule expansion (victim_rules.py: E160, E161, W220), the
rules that can never fire (lint.py: W210) and node rules without a batch form (W230).  One constructor per problem (as cel-go's
``checker/errors.go``): the message and hint are written here once, the stage passes facts.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Span


# -- E160 ambiguous name in a victim rule --------------------------------------------------------

def self_without_preemptor(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E160", "`self` is the task that needs room: this hook has none", file, at)


def name_clash(file: str, at: Span, name: str, meaning: str, what: str, line: int) -> Diagnostic:
    """``name`` in a rule means ``meaning`` (the candidate, or one of its attributes) and is also
    the ``what`` (a local, a definition...) declared at ``line``."""
    return Diagnostic("E160", f"'{name}' is both {meaning} and the {what} declared at line {line}", file, at,
                      hint=f"rename the {what}, or write candidate.{name} for the attribute")


# -- E161 victim rule out of place ------------------------------------------------------------------

def rule_without_candidates(file: str, at: Span, hook: str) -> Diagnostic:
    return Diagnostic("E161", f"`victim when` is a rule over candidates: hook '{hook}' has none", file, at,
                      hint="write it in preemptable, reclaimable, victim_tasks or a candidate hook")


def nested_rule(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E161", "`victim when` belongs at the top of the hook body, not inside a block", file, at,
                      hint="move it out, or write `victim <task> when ...` in a loop of your own")


def bare_victim(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E161", "a bare `victim` needs the candidate or a condition", file, at,
                      hint="write `victim when <condition>` or `victim <task>`")


# -- W210 rule that can never match ------------------------------------------------------------------

_NEVER_FIRES = "a rule guarded by it never fires: fix the condition (perhaps `or` was meant) or remove the rule"


def always_false(file: str, at: Span) -> Diagnostic:
    return Diagnostic("W210", "this condition is always false", file, at, "warning", _NEVER_FIRES)


def contains_false(file: str, at: Span) -> Diagnostic:
    return Diagnostic("W210", "this condition is always false: it contains `false`", file, at, "warning",
                      _NEVER_FIRES)


def never_true(file: str, at: Span, first: str, second: str) -> Diagnostic:
    """``first`` and ``second``: the texts of two tests that contradict each other."""
    return Diagnostic("W210", f"this condition can never be true: `{first}` and `{second}` cannot both hold",
                      file, at, "warning", _NEVER_FIRES)


def branch_never_runs(file: str, at: Span, earlier: str, covered: str) -> Diagnostic:
    """An ``elif`` whose test ``covered`` is taken by the ``earlier`` test (both as text)."""
    return Diagnostic("W210", f"this branch can never run: an earlier test `{earlier}` already took every case of "
                      f"`{covered}`", file, at, "warning", _NEVER_FIRES)


# -- W220 a victim rule's none check turned around by `not` ------------------------------------------

def none_under_not(file: str, at: Span) -> Diagnostic:
    return Diagnostic("W220", "under `not`, a candidate whose value here is none satisfies the rule", file, at,
                      "warning", "test it first: `x != none and not ...`, or say which way none should go")


# -- W230 node rule without a batch form ---------------------------------------------------------------

def no_batch_form(file: str, at: Span, rule: str, reason: str) -> Diagnostic:
    """Node rule ``rule`` has no batch form (``reason``: why vectorising it stopped)."""
    return Diagnostic("W230", f"'{rule}' has no batch form: {reason}", file, at, "warning",
                      "the fast engine runs this rule node by node (same decisions, slower)")
