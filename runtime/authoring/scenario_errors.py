"""The diagnostics of a scenario file's shape (docs/diagnostics.md): S002, a scenario or a part of
it that is not what the runner reads, and S006, a key or hook the runner does not know.  One
constructor per problem (as policy_lang's ``declaration_errors.py``): the message and hint are
written here once; the readers (``scenario.py``, ``scenario_keys.py``, ``scenario_extenders.py``
and ``fumarole check``) pass the facts and where they found them.
"""

from __future__ import annotations

from typing import Iterable

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, Span, did_you_mean


# -- S002 a malformed scenario -----------------------------------------------------------------

def not_a_mapping(file: str) -> Diagnostic:
    return Diagnostic("S002", "a scenario must be a mapping", file, NO_POSITION)


def nothing_expected(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "a scenario needs `expect` or `expectHooks`", file, at)


def no_scheduler(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "a scenario needs `scheduler` or `bundle`", file, at)


def expect_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "`expect` must be a mapping", file, at)


def hook_calls_not_a_list(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "`expectHooks` must be a list of hook calls", file, at)


def hook_call_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "a hook call must be a mapping with `hook`", file, at)


def extenders_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("S002", "`extenders` must map URL prefixes to their verbs' answers", file, at)


def extender_not_a_mapping(file: str, at: Span, prefix: object) -> Diagnostic:
    return Diagnostic("S002", f"extender {prefix!r} must map verbs to answers", file, at)


def _answer(code: str, file: str, at: Span, prefix: object, verb: object, problem: str) -> Diagnostic:
    """A canned answer of one extender verb the stand-in cannot serve."""
    return Diagnostic(code, f"extender {prefix!r}, verb {verb!r}: {problem}", file, at)


def answer_not_a_mapping(file: str, at: Span, prefix: object, verb: object) -> Diagnostic:
    return _answer("S002", file, at, prefix, verb, "an answer is a mapping of status, body, raw, delay")


def answer_status(file: str, at: Span, prefix: object, verb: object) -> Diagnostic:
    return _answer("S002", file, at, prefix, verb, "status must be an HTTP status code")


def answer_delay(file: str, at: Span, prefix: object, verb: object, most: float) -> Diagnostic:
    return _answer("S002", file, at, prefix, verb, f"delay must be a number of seconds from 0 to {most:g}")


def answer_body_and_raw(file: str, at: Span, prefix: object, verb: object) -> Diagnostic:
    return _answer("S002", file, at, prefix, verb, "give `body` (JSON) or `raw` (text), not both")


def answer_raw_not_text(file: str, at: Span, prefix: object, verb: object) -> Diagnostic:
    return _answer("S002", file, at, prefix, verb, "raw must be a string")


# -- S006 an unknown key or hook ---------------------------------------------------------------

def unknown_key(file: str, at: Span, key: object, where: str, known: Iterable[str]) -> Diagnostic:
    """``where`` says whose key it is (a scenario, `expect`, a `job_order` call)."""
    known = sorted(known)
    return Diagnostic("S006", f"unknown key {key!r} in {where}", file, at,
                      hint=did_you_mean(str(key), known) or f"known keys: {', '.join(known)}")


def unknown_hook(file: str, at: Span, hook: object, known: Iterable[str]) -> Diagnostic:
    known = sorted(known)
    return Diagnostic("S006", f"unknown hook {hook!r}", file, at,
                      hint=did_you_mean(str(hook), known) or f"hook calls: {', '.join(known)}")


def answer_unknown_key(file: str, at: Span, prefix: object, verb: object, key: object,
                       known: Iterable[str]) -> Diagnostic:
    return _answer("S006", file, at, prefix, verb, f"unknown key {key!r} (known: {', '.join(sorted(known))})")
