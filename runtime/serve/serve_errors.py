"""The diagnostics of ``fumarole serve`` (S codes) and of a session it stopped (R001),
docs/diagnostics.md: a state folder it cannot use, nothing valid to serve, a rollback with nowhere
to go, and a policy that failed, ran over its time or memory, or could not start.  One
constructor per problem (as ``bundles/bundle_errors.py``): the message and hint are written here
once, and the service passes facts -- the path, what ran, the budgets.

Only a policy's own failure has a position; the others are about a folder, the service or a whole
session, not a line.
"""

from __future__ import annotations

from fumarole.policy_lang.diagnostics import Diagnostic, Span


# -- S003 .. S005 the state folder -----------------------------------------------------------------------

def last_known_good_unreadable(file: str, reason: str | None) -> Diagnostic:
    return Diagnostic("S003", f"cannot read the last-known-good bundle: {reason}", file)


def state_folder_unusable(folder: str, reason: str | None) -> Diagnostic:
    return Diagnostic("S004", f"cannot use state folder {folder}: {reason}", folder)


def bundle_not_persisted(file: str, reason: str) -> Diagnostic:
    return Diagnostic("S005", f"cannot persist the bundle: {reason}", file, hint="the previous bundle stays active")


# -- S010 / S020 the registry --------------------------------------------------------------------------

def nothing_to_roll_back_to() -> Diagnostic:
    return Diagnostic("S010", "no previous revision to roll back to", "rollback")


def nothing_to_serve(last_attempt: str | None) -> Diagnostic:
    detail = f" (last attempt: {last_attempt})" if last_attempt else ""
    return Diagnostic("S020", f"no valid bundle to serve{detail}", "fumarole serve",
                      hint="give --bundle, --watch, or a --state-dir holding a last-known-good")


# -- R001 a session that failed or was stopped -----------------------------------------------------------

def policy_failed(file: str, at: Span, message: str) -> Diagnostic:
    """A policy raised while running (an error, a budget): at the policy line it had reached."""
    return Diagnostic("R001", f"policy failed while running: {message}", file, at)


def ran_past_timeout(what: str, timeout: float, stopped_after: float) -> Diagnostic:
    return Diagnostic("R001", f"the {what} ran past --session-timeout ({timeout:g} s) and was stopped "
                      f"after {stopped_after:g} s", what)


def ended_abnormally(what: str) -> Diagnostic:
    return Diagnostic("R001", f"the {what} ended abnormally (its process was killed, possibly for memory) and was "
                      "not answered", what)


def ran_out_of_memory(what: str, budget: str) -> Diagnostic:
    return Diagnostic("R001", f"the {what} ran out of its memory budget ({budget}) and was stopped", what)


def not_started(what: str, message: str) -> Diagnostic:
    """The service refused to start the work (shutting down, memory spoken for, no process): its reason."""
    return Diagnostic("R001", message, what)
