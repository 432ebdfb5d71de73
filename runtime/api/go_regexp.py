"""Regular expressions from cluster data, matched as Go's ``regexp`` matches them: in linear time.

Volcano compiles a HyperNode's ``regexMatch.pattern`` with Go's ``regexp``
(``pkg/scheduler/api/hyper_node_info.go`` nodeMatchSelector) and tests node
names with ``MatchString``: an unanchored search, leftmost-first, with RE2
syntax.  Python's ``re`` backtracks, so ``^(a+)+$`` against a 34-character
name ran for minutes while holding the GIL (nothing else in the process ran,
``serve``'s ``/healthz`` included), and it differs from Go on input Go
accepts: ``$`` also matches before a final newline, ``\\d`` and ``\\w`` match
non-ASCII digits and letters.  RE2 (google-re2) is the engine Go's package
reimplements: the same syntax, the same leftmost-first matching, ASCII
``\\d \\w \\s \\b``, and matching time linear in the name whatever the pattern.

Where RE2 and Go still differ, this module follows Go: ``\\C`` (any single
byte) is RE2-only and refused.  Patterns longer than :data:`MAX_PATTERN_CHARS`
are refused before compiling: a HyperNode pattern names a family of nodes,
and a bounded pattern bounds the compiled program (RE2's own memory cap
refuses the rest, e.g. ``(a{999}){999}``, as Go refuses it as too large).
"""

from __future__ import annotations

import functools

import re2

MAX_PATTERN_CHARS = 1024

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # errors are returned to the caller, not printed on stderr


class PatternError(ValueError):
    """A pattern Go's ``regexp.Compile`` would refuse, or one over fumarole's length cap."""


def _go_rejects(pattern: str) -> str | None:
    """Why Go refuses a pattern RE2 accepts, or None."""
    escaped = False
    for char in pattern:
        if escaped and char == "C":
            return "invalid escape sequence: \\C (Go's regexp has no single-byte class)"
        escaped = not escaped and char == "\\"
    return None


@functools.lru_cache(maxsize=256)
def compile_go_regexp(pattern: str) -> "re2._Regexp":
    """The compiled pattern; PatternError with Go's reason when it is invalid or too long."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is {len(pattern)} characters long; fumarole accepts at most "
                           f"{MAX_PATTERN_CHARS}")
    reason = _go_rejects(pattern)
    if reason is not None:
        raise PatternError(reason)
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        raise PatternError(detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)) from None


def go_match_string(pattern: "re2._Regexp", text: str) -> bool:
    """Go's ``(*Regexp).MatchString``: whether the pattern matches anywhere in ``text``."""
    return pattern.search(text) is not None
