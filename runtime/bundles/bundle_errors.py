"""The diagnostics about a bundle (B codes), docs/diagnostics.md: a manifest that cannot be read,
sources it cannot find, hook overrides the catalogue does not have.  One constructor per problem (as
policy_lang's ``declaration_errors.py``): the message and hint are written here once, and the
bundle layer passes facts -- the file, where, names.  An archive's problems (A codes) are in
``archive_errors.py``.
"""

from __future__ import annotations

from fumarole.policy_lang.diagnostics import Diagnostic, Span


# -- B000 .. B002 the manifest ------------------------------------------------------------------------

def malformed_manifest(file: str, at: Span, message: str) -> Diagnostic:
    """The YAML reader's own message."""
    return Diagnostic("B000", message, file, at)


def manifest_not_a_mapping(file: str) -> Diagnostic:
    return Diagnostic("B001", "a bundle manifest must be a mapping", file)


def source_matches_nothing(file: str, at: Span, pattern: str) -> Diagnostic:
    return Diagnostic("B002", f"source '{pattern}' matches no file", file, at)


# -- B010 .. B013 hook overrides ---------------------------------------------------------------------------

def unknown_session_function(file: str, at: Span, function: str, hint: str | None) -> Diagnostic:
    return Diagnostic("B010", f"unknown session function '{function}' in hooks", file, at, hint=hint)


def unknown_combinator(file: str, at: Span, combine: object, function: str, hint: str | None) -> Diagnostic:
    return Diagnostic("B011", f"unknown combinator '{combine}' for '{function}'", file, at, hint=hint)


def combinator_kind(file: str, at: Span, combine: str, function: str, kind: str) -> Diagnostic:
    return Diagnostic("B012", f"combinator '{combine}' cannot combine '{function}' ({kind} hook)", file, at)


def bounds_nothing(file: str, at: Span, combine: str, function: str) -> Diagnostic:
    return Diagnostic("B012", f"combinator '{combine}' cannot combine '{function}' (it bounds no other session "
                      "function)", file, at)


def veto_not_listed(file: str, at: Span, plugin: object, hint: str | None) -> Diagnostic:
    return Diagnostic("B013", f"'{plugin}' vetoes but is not listed in the tiers", file, at, hint=hint)


# -- a document against its JSON Schema (B001 for a manifest; the caller's code for others) ----------------

def schema_unknown_key(code: str, file: str, at: Span, key: str, where: str, hint: str | None) -> Diagnostic:
    return Diagnostic(code, f"unknown key '{key}' at {where}", file, at, hint=hint)


def schema_violation(code: str, file: str, at: Span, where: str, message: str, hint: str | None) -> Diagnostic:
    """``message``: the JSON Schema validator's own words about the value at ``where``."""
    return Diagnostic(code, f"{where}: {message}", file, at, hint=hint)
