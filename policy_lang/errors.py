"""Typed constructors of diagnostics, one per code (as cel-go's ``checker/errors.go``): a code's
message and hint are written once, here, and a caller passes facts -- names, lines, the path a
problem was found along -- never text.  The codes made here so far: P007, E132, E134, E151.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Span

_EVALUATION_ORDER = "constants are evaluated once, in the order they are written: "


def file_too_long(file: str, chars: int, limit: int) -> Diagnostic:
    return Diagnostic("P007", f"this file has {chars:,} characters; a policy file may have at most {limit:,}",
                      file, Span(1, 1), hint="split it into modules (`use`)")


def line_too_long(file: str, line: int, chars: int, limit: int) -> Diagnostic:
    return Diagnostic("P007", f"this line has {chars:,} characters; a line (and so a string literal) may have "
                      f"at most {limit:,}", file, Span(line, limit + 1))


def recursion(file: str, at: Span, cycle: list[str], others: int) -> Diagnostic:
    """Definitions calling each other: one shortest ``cycle`` (first name repeated at its end) and
    how many ``others`` of the group it leaves out."""
    more = f" (and {others} more definition{'s' if others > 1 else ''} calling each other)" if others else ""
    return Diagnostic("E132", "recursion is not allowed: " + " -> ".join(cycle) + more, file, at,
                      hint="policies always terminate; rewrite with a loop over a finite collection")


def constant_in_own_value(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E134", f"constant '{name}' is used in its own value", file, at,
                      hint="a constant cannot be defined by itself")


def constant_before_declaration(file: str, at: Span, name: str, line: int, user: str) -> Diagnostic:
    """Constant ``user``'s value reads constant ``name``, declared at ``line`` below it."""
    return Diagnostic("E134", f"constant '{name}' is used before its declaration (line {line})", file, at,
                      hint=_EVALUATION_ORDER + f"declare it above '{user}'")


def reaches_below(file: str, at: Span, user: str, kind: str, below: str, through: list[str],
                  line: int) -> Diagnostic:
    """Constant ``user``'s value reaches the ``kind`` ``below`` (declared at ``line``) through the
    definitions ``through``."""
    via = f" through {' -> '.join(through)}" if through else ""
    return Diagnostic("E134", f"'{user}' uses {kind} '{below}'{via}, which is declared below it (line {line})",
                      file, at, hint=_EVALUATION_ORDER + f"declare '{below}' above '{user}'")


def modules_use_each_other(file: str, at: Span, name: str, used: str, through: list[str]) -> Diagnostic:
    """Module ``name`` uses ``used``, which leads back to it (through the modules ``through``)."""
    if used == name:
        return Diagnostic("E151", f"module '{name}' uses itself", file, at)
    via = f" through {', '.join(through)}" if through else ""
    return Diagnostic("E151", f"modules cannot use each other: '{name}' uses '{used}', which uses '{name}'{via}",
                      file, at, hint="move what they share into a module both use")
