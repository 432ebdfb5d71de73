"""The syntax tree: frozen dataclasses, each with the span it came from.

Nodes compare by identity (``eq=False``) so later stages can key side tables
(types, resolved names) on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, TypeVar, Union

from .diagnostics import Span

if TYPE_CHECKING:
    # `node` is dataclass() with two settings fixed; said so, type checkers see each node's fields.
    from typing_extensions import dataclass_transform

    _Node = TypeVar("_Node")

    @dataclass_transform(frozen_default=True, eq_default=False)
    def node(cls: type[_Node]) -> type[_Node]: ...
else:
    node = dataclass(frozen=True, eq=False)


# ---- types ----------------------------------------------------------------
@node
class TypeExpr:
    name: str
    args: tuple["TypeExpr", ...]
    optional: bool
    span: Span


# ---- expressions ----------------------------------------------------------
@node
class Name:
    id: str
    span: Span


@node
class Literal:
    """int, float, string, bool, none or duration (seconds, as float)."""

    kind: str
    value: int | float | str | bool | None
    span: Span
    text: str = ""


@node
class Attr:
    obj: "Expr"
    name: str
    span: Span
    name_span: Span


@node
class Call:
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr", Span], ...]
    span: Span


@node
class Index:
    obj: "Expr"
    key: "Expr"
    span: Span


@node
class Unary:
    op: str  # "-" or "not"
    operand: "Expr"
    span: Span


@node
class Binary:
    op: str  # + - * / % and or == != < <= > >= in "not in"
    left: "Expr"
    right: "Expr"
    span: Span


@node
class Conditional:
    cond: "Expr"
    then: "Expr"
    orelse: "Expr"
    span: Span


@node
class ListLit:
    items: tuple["Expr", ...]
    span: Span


@node
class ListComp:
    elem: "Expr"
    var: str
    iter: "Expr"
    cond: Optional["Expr"]
    span: Span


@node
class MapLit:
    entries: tuple[tuple["Expr", "Expr"], ...]
    span: Span


@node
class MapComp:
    key: "Expr"
    value: "Expr"
    var: str
    iter: "Expr"
    cond: Optional["Expr"]
    span: Span


@node
class Lambda:
    params: tuple[tuple[str, Optional[TypeExpr], Span], ...]
    body: "Expr"
    span: Span


Expr = Union[Name, Literal, Attr, Call, Index, Unary, Binary, Conditional, ListLit, ListComp,
             MapLit, MapComp, Lambda]


# ---- statements -----------------------------------------------------------
@node
class Let:
    name: str
    type: Optional[TypeExpr]
    value: Expr
    span: Span


@node
class Assign:
    target: Expr  # Name, Index or Attr
    value: Expr
    span: Span


@node
class AugAssign:
    target: Expr
    op: str  # + - * /
    value: Expr
    span: Span


@node
class Return:
    value: Optional[Expr]
    span: Span


@node
class Break:
    span: Span


@node
class Continue:
    span: Span


@node
class Pass:
    span: Span


@node
class Victim:
    """``victim x``; ``value`` is None in a one-line rule ``victim when COND`` (see victim_rules)."""

    value: Optional[Expr]
    span: Span


@node
class Vote:
    verdict: str  # permit / reject / abstain
    span: Span


@node
class Fail:
    code: str  # unschedulable / unresolvable / error ("" = hook default)
    message: Expr
    span: Span


@node
class OrderBy:
    keys: tuple[tuple[Expr, bool], ...]  # (key, descending)
    span: Span


@node
class ExprStmt:
    expr: Expr
    span: Span


@node
class When:
    """A simple statement guarded by ``when cond``."""

    cond: Expr
    stmt: "Stmt"
    span: Span


@node
class If:
    branches: tuple[tuple[Expr, tuple["Stmt", ...]], ...]
    orelse: tuple["Stmt", ...]
    span: Span


@node
class For:
    var: str
    iter: Expr
    body: tuple["Stmt", ...]
    span: Span
    var_span: Span


@node
class Drain:
    var: str
    queue: Expr
    cond: Optional[Expr]
    body: tuple["Stmt", ...]
    span: Span
    var_span: Span


@node
class While:
    cond: Expr
    body: tuple["Stmt", ...]
    span: Span


Stmt = Union[Let, Assign, AugAssign, Return, Break, Continue, Pass, Victim, Vote, Fail, OrderBy,
             ExprStmt, When, If, For, Drain, While]


# ---- declarations ---------------------------------------------------------
@node
class Use:
    name: str
    span: Span


@node
class ArgDecl:
    name: str
    type: TypeExpr
    default: Optional[Expr]
    key: Optional[str]
    prefix: bool
    span: Span
    # The rest of a key path into nested YAML mappings (`from "sra" / "weight"`): field names,
    # None for `*` (every entry of a mapping, as Go decodes a map of structs).
    path: tuple[Optional[str], ...] = ()


@node
class StateDecl:
    name: str
    type: TypeExpr
    span: Span
    process: bool = False  # `process state`: kept from one session to the next (ProcessState)


@node
class ConstDecl:
    name: str
    type: Optional[TypeExpr]
    value: Expr
    span: Span


@node
class Param:
    name: str
    type: TypeExpr
    span: Span


@node
class FuncDef:
    name: str
    params: tuple[Param, ...]
    returns: TypeExpr
    body: Union[tuple[Stmt, ...], Expr]
    span: Span
    name_span: Span


@node
class HookDef:
    names: tuple[str, ...]
    params: tuple[tuple[str, Span], ...]
    body: Union[tuple[Stmt, ...], Expr]
    span: Span
    name_span: Span


Decl = Union[Use, ArgDecl, StateDecl, ConstDecl, FuncDef, HookDef]


@node
class Module:
    kind: str  # plugin / action / module
    name: str
    decls: tuple[Decl, ...]
    file: str
    span: Span
    source: str = field(repr=False, default="")


def receiver(call: Call) -> Expr:
    """The object a method is called on (asked of calls the checker found methods: ``obj.name(...)``)."""
    assert isinstance(call.func, Attr), "a method call's callee is an attribute"
    return call.func.obj
