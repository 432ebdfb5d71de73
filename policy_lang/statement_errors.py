"""The checker's diagnostics about statements: where a statement may stand, what a body returns,
what can be assigned.  One constructor per problem (as cel-go's ``checker/errors.go``): the
message and hint are written here once, and the checker passes facts.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Span

# -- E120 statement not allowed here -----------------------------------------------------------------

def outside_a_loop(file: str, at: Span, keyword: str) -> Diagnostic:
    """``keyword``: break or continue."""
    return Diagnostic("E120", f"`{keyword}` outside a loop", file, at)


def not_in_this_hook(file: str, at: Span, what: str, where: str, kinds: tuple[str, ...]) -> Diagnostic:
    """``what`` (victim, permit, fail...) written in ``where`` (a hook, or a definition); it belongs
    in a hook of one of ``kinds``."""
    return Diagnostic("E120", f"`{what}` is not allowed in {where}", file, at,
                      hint=f"`{what}` belongs in a {' or '.join(kinds)} hook")


def job_valid_fail_code(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E120", "job_valid failures take no code: write `fail \"reason\"`", file, at)


def fit_error_with_code(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E120", "a FitError carries its own status: drop the code", file, at)


def order_by_out_of_place(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E120", "`order by` is only allowed as the body of a one-parameter order hook", file, at)


def key_order_body(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E120", "an order hook with one parameter must be exactly one `order by` line", file, at,
                      hint="or take two parameters and return an int (<0: first one first)")


# -- E122 missing return, E123 wrong kind of return -------------------------------------------------

def definition_may_not_return(file: str, at: Span, name: str, returns: object) -> Diagnostic:
    return Diagnostic("E122", f"'{name}' must return a {returns} on every path", file, at)


def hook_may_not_return(file: str, at: Span, hook: str, returns: object) -> Diagnostic:
    return Diagnostic("E122", f"hook '{hook}' must return a {returns} on every path", file, at)


def hook_needs_block(file: str, at: Span, hook: str, kind: str) -> Diagnostic:
    return Diagnostic("E123", f"hook '{hook}' ({kind}) needs a block body", file, at)


def definition_returns_no_value(file: str, at: Span, returns: object) -> Diagnostic:
    return Diagnostic("E123", f"this definition must return a {returns}", file, at)


def definition_returns_nothing(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E123", "this definition returns nothing", file, at)


def hook_returns_no_value(file: str, at: Span, hook: str, returns: object) -> Diagnostic:
    return Diagnostic("E123", f"hook '{hook}' must return a {returns}", file, at)


_KIND_HINTS = {"victims": "select victims with `victim <task>`",
               "vote": "vote with `permit` or `reject` (or `abstain`)",
               "failure": "fail with `fail \"reason\"`",
               "event": "event hooks only update state"}


def hook_returns_a_value(file: str, at: Span, hook: str, kind: str) -> Diagnostic:
    """A ``return value`` in a hook whose ``kind`` answers otherwise (the hint says how)."""
    return Diagnostic("E123", f"hook '{hook}' ({kind}) does not return a value", file, at,
                      hint=_KIND_HINTS.get(kind, ""))


# -- E131 cannot assign, E133 guarded let, W204 expression value not used --------------------------

def assign_fixed(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E131", f"'{name}' cannot be assigned (arguments and constants are fixed)", file, at)


def assign_undeclared(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E131", f"'{name}' is not declared", file, at, hint=f"declare it with `let {name} = ...`")


def read_only_attribute(file: str, at: Span, name: str, owner: str) -> Diagnostic:
    return Diagnostic("E131", f"attribute '{name}' of {owner} is read-only", file, at)


def not_assignable(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E131", "cannot assign to this expression", file, at)


def guarded_let(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E133", "`let` cannot be guarded by `when`", file, at,
                      hint="declare it first, then assign under `when`")


def value_not_used(file: str, at: Span) -> Diagnostic:
    return Diagnostic("W204", "this expression's value is not used", file, at, "warning")
