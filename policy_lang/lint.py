"""Strict checks on the syntax tree: conditions that can never be true (W210).

A rule whose guard can never hold (``status == "Running" and status ==
"Pending"``, ``when false``, an ``elif`` repeating an earlier test) is dead
code that looks alive -- usually a typo for ``or`` or for another value.  The
analysis is deliberately simple, so that it does not cry wolf: it compares
the atoms of one ``and`` chain (and an ``if``'s earlier single tests) on the
same attribute path against constants.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A
from . import rule_errors
from .check_core import attribute_path
from .diagnostics import Diagnostic
from .fmt import expr_text
from .walk import preorder

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


@dataclass(frozen=True)
class _Atom:
    """``path op value`` for a constant value (None stands for ``none``)."""

    path: str
    op: str
    value: object
    source: A.Expr


def never_matching(module: A.Module) -> list[Diagnostic]:
    """W210 for every condition of the module that no value can make true."""
    out: list[Diagnostic] = []
    nodes = list(preorder(module))
    nested = {id(part) for n in nodes if isinstance(n, A.Binary) and n.op == "and" for part in (n.left, n.right)}
    for node in nodes:
        if isinstance(node, A.Binary) and node.op == "and" and id(node) not in nested:
            _check_conjunction(module, node, _conjuncts(node), out)
        elif isinstance(node, A.If):
            _check_if(module, node, out)
        elif isinstance(node, (A.When, A.While)) and _is_false(node.cond):
            out.append(rule_errors.always_false(module.file, node.cond.span))
    return out


def _conjuncts(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _constant(e: A.Expr) -> tuple[bool, object]:
    if isinstance(e, A.Literal) and e.kind != "duration":
        return True, e.value
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.Literal) \
            and e.operand.kind in ("int", "float"):
        return True, -e.operand.value  # type: ignore[operator]
    return False, None


def _atom(e: A.Expr) -> _Atom | None:
    """The constraint one conjunct puts on one path, if it is that simple."""
    path = attribute_path(e)
    if path is not None:
        return _Atom(path, "==", True, e)
    if isinstance(e, A.Unary) and e.op == "not" and attribute_path(e.operand) is not None:
        return _Atom(attribute_path(e.operand), "==", False, e)  # type: ignore[arg-type]
    if isinstance(e, A.Binary) and e.op in _FLIPPED:
        for subject, other, op in ((e.left, e.right, e.op), (e.right, e.left, _FLIPPED[e.op])):
            path, (is_const, value) = attribute_path(subject), _constant(other)
            if path is not None and is_const:
                return _Atom(path, op, value, e)
    return None


def _contradiction(atoms: list[_Atom]) -> tuple[_Atom, _Atom] | None:
    """Two atoms on one path that exclude each other, or None."""
    for i, a in enumerate(atoms):
        for b in atoms[i + 1:]:
            if a.path == b.path and _exclusive(a, b):
                return a, b
    return None


def _exclusive(a: _Atom, b: _Atom) -> bool:
    if a.op == "==" and b.op == "==":
        return _differ(a.value, b.value)
    if a.op in ("==", "!=") and b.op in ("==", "!="):
        return a.value == b.value and type(a.value) is type(b.value) and a.op != b.op
    if a.op == "==":
        return _numbers(a.value, b.value) and not _holds(a.value, b.op, b.value)
    if b.op == "==":
        return _numbers(a.value, b.value) and not _holds(b.value, a.op, a.value)
    if not _numbers(a.value, b.value):
        return False
    low, high = (a, b) if a.op in (">", ">=") else (b, a)
    if low.op not in (">", ">=") or high.op not in ("<", "<="):
        return False
    if low.value < high.value:  # type: ignore[operator]
        return False
    return low.value > high.value or low.op == ">" or high.op == "<"  # type: ignore[operator]


def _numbers(*values: object) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _differ(x: object, y: object) -> bool:
    if _numbers(x, y):
        return x != y
    return type(x) is type(y) and x != y


def _holds(x: object, op: str, y: object) -> bool:
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "!=": x != y}[op]  # type: ignore[operator]


def _is_false(e: A.Expr) -> bool:
    return isinstance(e, A.Literal) and e.kind == "bool" and e.value is False


def _check_conjunction(module: A.Module, node: A.Expr, conjuncts: list[A.Expr], out: list[Diagnostic]) -> None:
    if any(_is_false(c) for c in conjuncts):
        out.append(rule_errors.contains_false(module.file, node.span))
        return
    clash = _contradiction([a for a in map(_atom, conjuncts) if a is not None])
    if clash:
        a, b = clash
        out.append(rule_errors.never_true(module.file, node.span, expr_text(a.source), expr_text(b.source)))


def _check_if(module: A.Module, node: A.If, out: list[Diagnostic]) -> None:
    """An ``elif`` whose test contradicts the negation of an earlier single test."""
    earlier: list[_Atom] = []
    for cond, _body in node.branches:
        if _is_false(cond):
            out.append(rule_errors.always_false(module.file, cond.span))
            continue
        atoms = [a for a in map(_atom, _conjuncts(cond)) if a is not None]
        clash = _contradiction(earlier + atoms)
        if earlier and clash and clash[0] in earlier and clash[1] not in earlier:
            out.append(rule_errors.branch_never_runs(module.file, cond.span, expr_text(clash[0].source),
                                                     expr_text(clash[1].source)))
        single = _atom(cond)
        if single is not None and single.op in _NEGATED and not (single.op == "==" and isinstance(single.value, bool)):
            earlier.append(_Atom(single.path, _NEGATED[single.op], single.value, single.source))
        elif single is not None:
            earlier.append(_Atom(single.path, "==", not single.value, single.source))
