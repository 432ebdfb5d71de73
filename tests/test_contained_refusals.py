"""How a contained child ends, each as the one R001 diagnostic ``serve_errors`` words it: the work's
process killed from outside, its memory budget, a service that is stopping, a budget spoken for.
None has a position: they are about the whole session, not a policy line."""

from __future__ import annotations

import os
import signal

import pytest

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.serve.contained import MiB, Containment


def _refusal(containment: Containment, work, what: str = "session") -> list[Diagnostic]:
    with pytest.raises(FumaroleError) as refused:
        containment.run(work, what)
    return refused.value.diagnostics


def test_a_child_killed_from_outside_ended_abnormally():
    def killed() -> None:
        os.kill(os.getpid(), signal.SIGKILL)
    assert _refusal(Containment(None), killed) == [Diagnostic(
        "R001", "the session ended abnormally (its process was killed, possibly for memory) and was not answered",
        "session")]


def test_a_child_past_its_memory_budget_is_stopped():
    assert _refusal(Containment(None, memory_bytes=64 * MiB), lambda: bytearray(1 << 30), "smoke run") == [
        Diagnostic("R001", "the smoke run ran out of its memory budget (64 MiB) and was stopped", "smoke run")]


def test_a_stopping_service_starts_nothing():
    containment = Containment(None)
    containment.stop()
    assert _refusal(containment, lambda: 1) == [Diagnostic(
        "R001", "the service is shutting down; the session did not run", "session")]


def test_a_budget_spoken_for_starts_nothing():
    assert _refusal(Containment(None, memory_bytes=64 * MiB, total_bytes=32 * MiB), lambda: 1, "shadow session") == [
        Diagnostic("R001", "the service's memory budget (32 MiB, --memory-budget) is spoken for by 0 running "
                   "sessions of 64 MiB each; the shadow session did not run", "shadow session")]
