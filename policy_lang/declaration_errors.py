"""The checker's diagnostics about a file's declarations: its kind, names defined twice, modules,
arguments, types, hooks, recursion, evaluation order, what is never used.  One constructor per
problem (as cel-go's ``checker/errors.go``): the message and hint are written here once, and the
checker passes facts -- the file, where, names, types, lines.
"""

from __future__ import annotations

from typing import Iterable

from .diagnostics import Diagnostic, Span

_EVALUATION_ORDER = "constants are evaluated once, in the order they are written: "


# -- E103 unknown or malformed type ---------------------------------------------------------------

def unknown_type(file: str, at: Span, name: str, suggestion: str | None) -> Diagnostic:
    return Diagnostic("E103", f"unknown type '{name}'", file, at, hint=suggestion)


def fn_type_without_result(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E103", "fn needs at least its result type: fn[T, ..., R]", file, at)


def type_arity(file: str, at: Span, name: str, expected: int, got: int) -> Diagnostic:
    return Diagnostic("E103", f"type '{name}' takes {expected} type argument(s), not {got}", file, at)


def process_state_type(file: str, at: Span, name: str, got: object) -> Diagnostic:
    return Diagnostic("E103", f"process state '{name}' must be an int, float, duration, string or bool "
                      f"(optional or not), not {got}", file, at)


# -- E104 unknown hook, or a hook where the file kind allows none ---------------------------------

def unknown_file_kind(file: str, at: Span, kind: str) -> Diagnostic:
    return Diagnostic("E104", f"unknown file kind {kind!r}", file, at)


def action_hook(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E104", f"an action defines only 'on execute', not '{name}'", file, at)


def module_hook(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E104", "a module cannot define hooks; use a plugin or an action", file, at)


def unknown_hook(file: str, at: Span, name: str, suggestion: str | None) -> Diagnostic:
    return Diagnostic("E104", f"unknown hook '{name}'", file, at,
                      hint=suggestion or "see docs/hooks.md for the hook list")


# -- E120 a declaration the file kind does not allow ---------------------------------------------

def module_declares(file: str, at: Span, what: str) -> Diagnostic:
    """``what``: "arguments" or "state"."""
    return Diagnostic("E120", f"a module cannot declare {what}", file, at)


def process_state_outside_plugin(file: str, at: Span, kind: str) -> Diagnostic:
    return Diagnostic("E120", f"only a plugin can declare process state, not an {kind}" if kind == "action"
                      else "only a plugin can declare process state", file, at)


# -- E121 hook signature mismatch ---------------------------------------------------------------------

def hooks_cannot_share_a_body(file: str, at: Span, first: str, other: str) -> Diagnostic:
    return Diagnostic("E121", f"hooks '{first}' and '{other}' have different signatures and cannot share a body",
                      file, at)


def bound_reads_more(file: str, at: Span, hook: str, declaration: str, param: str) -> Diagnostic:
    return Diagnostic("E124", f"'{declaration}' is always true, but '{hook}' reads '{param}' beyond its queue",
                      file, at, hint=f"read only `{param}.queue` or `{param}.queue_name`, or declare it false "
                                     "where the bound reads more")


def hook_parameter_count(file: str, at: Span, hook: str, params: Iterable[object], got: int) -> Diagnostic:
    """``params``: the types the hook takes."""
    listed = [str(p) for p in params]
    return Diagnostic("E121", f"hook '{hook}' takes {len(listed)} parameter(s) ({', '.join(listed)}), not {got}",
                      file, at)


# -- E130 name defined twice -------------------------------------------------------------------------

def already_defined(file: str, at: Span, name: str, line: int) -> Diagnostic:
    return Diagnostic("E130", f"'{name}' is already defined (line {line})", file, at)


def session_name_redefined(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E130", f"'{name}' is already a session name and cannot be redefined", file, at)


def defined_by_used_module(file: str, at: Span, name: str, module: str) -> Diagnostic:
    return Diagnostic("E130", f"'{name}' is also defined by module '{module}'", file, at)


def declared_twice_in_block(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E130", f"'{name}' is already declared in this block", file, at)


def file_defined_twice(file: str, at: Span, kind: str, name: str, other_file: str) -> Diagnostic:
    """A second plugin, action or module of one name; ``other_file`` defines the first."""
    return Diagnostic("E130", f"{kind} '{name}' is also defined in {other_file}", file, at)


# -- E132 recursion, E134 evaluation order ------------------------------------------------------------

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


# -- E140 bad argument declaration -------------------------------------------------------------------

def family_argument_type(file: str, at: Span, family: str, arg_types: Iterable[str]) -> Diagnostic:
    """An argument read from a family of keys (``family`` is "prefix" or "containing") is a map."""
    return Diagnostic("E140", f"an argument read `from {family}` must have type map[string, T] "
                      "with T one of " + ", ".join(arg_types), file, at)


def wildcard_argument_type(file: str, at: Span, arg_types: Iterable[str]) -> Diagnostic:
    return Diagnostic("E140", "an argument read through `*` must have type map[string, T] with T one of "
                      f"{', '.join(arg_types)}, list[string] or map[string, T] of those (one `*` per key path)",
                      file, at)


def argument_type(file: str, at: Span, arg_types: Iterable[str], got: str) -> Diagnostic:
    return Diagnostic("E140", f"argument type must be one of {', '.join(arg_types)}, list[string] or "
                      f"map[string, T] of those, not {got}", file, at)


def split_argument_type(file: str, at: Span) -> Diagnostic:
    """`split` cuts one text into a list: only a list[string] holds what it gives."""
    return Diagnostic("E140", "an argument read with `split` must have type list[string]", file, at)


def empty_separator(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E140", "`split` needs a non-empty separator", file, at)


def strict_argument_type(file: str, at: Span) -> Diagnostic:
    """`strict` models framework.Get (mapstructure) for the types its decoding is modelled for
    (runtime/bundles/mapstructure.py); a duration is no Go type it decodes from YAML."""
    return Diagnostic("E140", "a `strict` argument must have type int, float, bool, string, list[string] "
                      "or map[string, T] of the first four", file, at,
                      hint="framework.Get decodes other types in ways fumarole does not model")


def asserted_argument_type(file: str, at: Span) -> Diagnostic:
    """`asserted` models a bare `v.(string)` of a key's value, the only such reading of Volcano's
    plugins (tdm, rescheduling), whose text may go on to time.ParseDuration (a duration)."""
    return Diagnostic("E140", "an `asserted` argument must have type string or duration, or map[string, string] read "
                      "`from prefix` or `from containing`", file, at,
                      hint="Volcano's plugins assert only texts this way (`v.(string)`)")


def optional_argument(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E140", "arguments cannot be optional: give a default instead", file, at)


def default_not_literal(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E140", "an argument default must be a literal", file, at)


def duration_default_without_unit(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E140", "a duration default needs a unit, e.g. 10m or 30s", file, at)


# -- E150 unknown module, E151 modules using each other --------------------------------------------

def unknown_module(file: str, at: Span, name: str, suggestion: str | None) -> Diagnostic:
    return Diagnostic("E150", f"unknown module '{name}'", file, at, hint=suggestion)


def modules_use_each_other(file: str, at: Span, name: str, used: str, through: list[str]) -> Diagnostic:
    """Module ``name`` uses ``used``, which leads back to it (through the modules ``through``)."""
    if used == name:
        return Diagnostic("E151", f"module '{name}' uses itself", file, at)
    via = f" through {', '.join(through)}" if through else ""
    return Diagnostic("E151", f"modules cannot use each other: '{name}' uses '{used}', which uses '{name}'{via}",
                      file, at, hint="move what they share into a module both use")


# -- W200 unused argument, W201 unused definition, W202 shadowed name -------------------------------

def unused_argument(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("W200", f"argument '{name}' is never used", file, at, "warning")


def unused_definition(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("W201", f"definition '{name}' is never used", file, at, "warning")


def shadows(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("W202", f"'{name}' shadows an outer name", file, at, "warning")
