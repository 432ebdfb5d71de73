"""The error a policy raises while it runs, with the policy position it happened at."""

from __future__ import annotations


class PolicyRuntimeError(Exception):
    """A policy failed while running (a budget ran out, a missing map key...), with its position."""

    def __init__(self, message: str, file: str = "", line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.file, self.line, self.col = message, file, line, col
