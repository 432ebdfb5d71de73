"""The checker's diagnostics about expressions: names, attributes, methods and calls that do not
resolve, and values of the wrong type.  One constructor per problem (as cel-go's
``checker/errors.go``): the message and hint are written here once, and the checker passes facts
-- the file, where, names, the types involved.  A type is passed as the checker's ``Type`` (or
anything that prints as one).
"""

from __future__ import annotations

from typing import Iterable

from .diagnostics import Diagnostic, Span

_CHECK_FOR_NONE = "check it first, e.g. `continue when x == none` or `if x != none:`"


# -- E100 unknown name, E101 unknown attribute, E102 unknown method, E105 not callable ------------

def unknown_name(file: str, at: Span, name: str, hint: str | None) -> Diagnostic:
    return Diagnostic("E100", f"unknown name '{name}'", file, at, hint=hint)


def unknown_attribute(file: str, at: Span, name: str, owner: str, suggestion: str | None) -> Diagnostic:
    return Diagnostic("E101", f"unknown attribute '{name}' of {owner}", file, at, hint=suggestion)


def unknown_method(file: str, at: Span, name: str, owner: str, is_attribute: bool,
                   suggestion: str | None) -> Diagnostic:
    """``is_attribute``: ``name`` is an attribute of ``owner``, called as if a method."""
    hint = f"'{name}' is an attribute: drop the parentheses" if is_attribute else suggestion
    return Diagnostic("E102", f"unknown method '{name}' of {owner}", file, at, hint=hint)


def only_callable(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E105", f"'{name}' can only be called", file, at)


def not_callable(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E105", f"a {got} cannot be called", file, at)


# -- E110 type mismatch -------------------------------------------------------------------------------

def mismatch(file: str, at: Span, what: str, got: object, want: object) -> Diagnostic:
    return Diagnostic("E110", f"{what} has type {got}, expected {want}", file, at)


def order_key_type(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"an order key must be a number, bool or string, not {got}", file, at)


def empty_literal_type(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E110", f"cannot tell the type of '{name}' from an empty literal", file, at,
                      hint=f"annotate it: let {name}: list[Task] = []")


def holds_void(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E110", f"'{name}' would hold the result of a call that returns nothing", file, at)


def none_literal_type(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E110", f"cannot tell the type of '{name}' from none", file, at,
                      hint=f"annotate it: let {name}: Node? = none")


def lambda_parameter_type(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E110", f"cannot tell the type of parameter '{name}'", file, at,
                      hint=f"annotate it: fn({name}: Task, ...) => ...")


def assign_into(file: str, at: Span, container: object) -> Diagnostic:
    return Diagnostic("E110", f"cannot assign into a {container}", file, at)


def augmented_result(file: str, at: Span, op: str, result: object, target: object) -> Diagnostic:
    return Diagnostic("E110", f"`{op}=` gives a {result}, which cannot be stored in a {target}", file, at)


def not_iterable(file: str, at: Span, got: object, priority_queue: bool) -> Diagnostic:
    return Diagnostic("E110", f"cannot iterate over a {got}", file, at,
                      hint="use `drain x from queue:` for a priority queue" if priority_queue else None)


def drain_needs_queue(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"`drain` takes a priority queue, not a {got}", file, at)


def not_indexable(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"cannot index a {got}", file, at)


def not_negatable(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"cannot negate a {got}", file, at)


def modulo_needs_ints(file: str, at: Span) -> Diagnostic:
    return Diagnostic("E110", "`%` needs two ints", file, at)


def operator_undefined(file: str, at: Span, op: str, left: object, right: object) -> Diagnostic:
    return Diagnostic("E110", f"`{op}` is not defined for {left} and {right}", file, at)


def membership_container(file: str, at: Span, op: str, got: object) -> Diagnostic:
    return Diagnostic("E110", f"`{op}` needs a list, map or string on the right, not {got}", file, at)


def never_none(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"comparing a {got} (never none) with none", file, at)


def not_comparable(file: str, at: Span, left: object, right: object) -> Diagnostic:
    return Diagnostic("E110", f"cannot compare {left} with {right}", file, at)


def resources_ordered(file: str, at: Span, op: str) -> Diagnostic:
    return Diagnostic("E110", f"`{op}` is not defined on resources; write the comparison the other way "
                      "round (`<=`, `<`) or use less_partly / above_requested", file, at)


def not_orderable(file: str, at: Span, left: object, right: object) -> Diagnostic:
    return Diagnostic("E110", f"cannot order {left} and {right}", file, at)


def branch_types(file: str, at: Span, then: object, orelse: object) -> Diagnostic:
    return Diagnostic("E110", f"the branches have different types ({then} and {orelse})", file, at)


def list_item_types(file: str, at: Span, first: object, other: object) -> Diagnostic:
    return Diagnostic("E110", f"list items have different types ({first} and {other})", file, at)


def builtin_of(file: str, at: Span, name: str, got: object) -> Diagnostic:
    """len(), max(), min(), int() or float() of a value it does not take."""
    return Diagnostic("E110", f"{name}() of a {got}", file, at)


def sum_needs_numbers(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E110", f"sum() needs a list of numbers, not {got}", file, at)


# -- E111 wrong number of arguments, E112 unknown keyword argument ----------------------------------

def too_many_arguments(file: str, at: Span, callee: str, most: int, got: int) -> Diagnostic:
    return Diagnostic("E111", f"{callee} takes at most {most} argument(s), got {got}", file, at)


def argument_given_twice(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E111", f"parameter '{name}' given twice", file, at)


def missing_argument(file: str, at: Span, callee: str, name: str, want: object) -> Diagnostic:
    return Diagnostic("E111", f"{callee} needs argument '{name}' ({want})", file, at)


def builtin_arity(file: str, at: Span, name: str, want: int, got: int) -> Diagnostic:
    return Diagnostic("E111", f"'{name}' takes {want} argument(s), got {got}", file, at)


def extremum_arity(file: str, at: Span, name: str) -> Diagnostic:
    """max() or min() with one argument that is not a list."""
    return Diagnostic("E111", f"'{name}' takes two or more numbers, or one list of numbers", file, at)


def unknown_keyword(file: str, at: Span, callee: str, name: str, suggestion: str | None) -> Diagnostic:
    return Diagnostic("E112", f"{callee} has no parameter '{name}'", file, at, hint=suggestion)


def builtin_keyword(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("E112", f"'{name}' takes no keyword arguments", file, at)


# -- E113 optional value used without a check for none ----------------------------------------------

def may_be_none(file: str, at: Span, what: str, got: object, want: object) -> Diagnostic:
    return Diagnostic("E113", f"{what} may be none here (type {got}), but {want} is required", file, at,
                      hint=_CHECK_FOR_NONE)


def attribute_of_optional(file: str, at: Span, name: str, got: object) -> Diagnostic:
    return Diagnostic("E113", f"'{name}' is read from a value that may be none (type {got})", file, at,
                      hint=_CHECK_FOR_NONE)


def index_of_optional(file: str, at: Span, got: object) -> Diagnostic:
    return Diagnostic("E113", f"indexing a value that may be none (type {got})", file, at)


def operator_on_optional(file: str, at: Span, op: str, left: object, right: object) -> Diagnostic:
    return Diagnostic("E113", f"`{op}` on a value that may be none ({left} {op} {right})", file, at)


def method_of_optional(file: str, at: Span, name: str, got: object) -> Diagnostic:
    return Diagnostic("E113", f"'{name}' is called on a value that may be none (type {got})", file, at,
                      hint="check it first, e.g. `continue when x == none`")


# -- E141 unknown enumeration value, E142 malformed time literal ------------------------------------

def not_an_enum_value(file: str, at: Span, value: object, enum: str, values: Iterable[str],
                      suggestion: str | None) -> Diagnostic:
    listed = ", ".join(repr(v) for v in values if v)
    return Diagnostic("E141", f"'{value}' is not a {enum} (one of {listed})", file, at, hint=suggestion)


def malformed_literal(file: str, at: Span, value: object, what: str, function: str, example: str) -> Diagnostic:
    """A string literal ``function`` would refuse while the session runs (it needs ``what``)."""
    return Diagnostic("E142", f"{value!r} is not {what}, which {function}() needs", file, at,
                      hint=f"write it as {example!r}")
