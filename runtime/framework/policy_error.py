"""The error a policy raises while it runs, with the policy position it happened at."""

from __future__ import annotations


class PolicyRuntimeError(Exception):
    """A policy failed while running (a budget ran out, a missing map key...), with its position."""

    def __init__(self, message: str, file: str = "", line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.file, self.line, self.col = message, file, line, col


class BudgetExhausted(PolicyRuntimeError):
    """The session's steps, time or memory ran out where this was raised.

    Unlike any other policy failure, running the same work again another way
    cannot succeed: the budget stays spent, so a retry (the per-node code a
    batch form falls back to) would only trip it again at its own first step,
    and the error would name that place instead of the one that spent it.
    """


# What a fallback from a batch form to per-node code lets through instead of retrying.
NOT_RETRIED = (BudgetExhausted, MemoryError)

# What policy code raises at its own line on values it cannot take: a missing map key or list
# index, a division by zero, a number too large, a text that is not a number, or a library's
# PolicyRuntimeError.  A batch form may stop at one where the per-node code never asks (a node
# beyond the sample the scan takes, a row no rule reads); the runtime then runs the per-node
# code, which raises it again at its policy line or answers.  Anything else a batch form raises
# is a fumarole bug, never a reason to fall back.
POLICY_FAILURES = (PolicyRuntimeError, KeyError, IndexError, ZeroDivisionError, OverflowError, ValueError)
