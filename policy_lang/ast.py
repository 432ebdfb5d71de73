"""The syntax tree: frozen dataclasses, each with the span it came from.

Nodes compare by identity (``eq=False``) so later stages can key side tables
(types, resolved names) on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, TypeVar, Union

from .diagnostics import Span, next_node_id


class Node:
    """What every syntax node has besides its fields: ``nid``, its identity for the side tables
    later stages keep about it (the checker's types, names, calls...).  Unlike ``id()``, it is a
    field: it survives the compile cache's pickling, so tables keyed by it need no re-keying.
    Numbers come from one counter per process, so the nodes of one tree (which one process
    parses, expands and checks) never share one; a copy made by ``dataclasses.replace`` is a new
    node with a number of its own."""

    nid: int
    span: Span


if TYPE_CHECKING:
    # `node` is dataclass() with two settings fixed; said so, type checkers see each node's fields.
    from typing_extensions import dataclass_transform

    _Node = TypeVar("_Node")

    @dataclass_transform(frozen_default=True, eq_default=False)
    def node(cls: type[_Node]) -> type[_Node]: ...
else:
    def node(cls):
        cls.__annotations__["nid"] = "int"
        cls.nid = field(default_factory=next_node_id, init=False, compare=False, repr=False)
        return dataclass(frozen=True, eq=False)(cls)


# ---- types ----------------------------------------------------------------
@node
class TypeExpr(Node):
    name: str
    args: tuple["TypeExpr", ...]
    optional: bool
    span: Span


# ---- expressions ----------------------------------------------------------
@node
class Name(Node):
    id: str
    span: Span


@node
class Literal(Node):
    """int, float, string, bool, none or duration (seconds, as float)."""

    kind: str
    value: int | float | str | bool | None
    span: Span
    text: str = ""


@node
class Attr(Node):
    obj: "Expr"
    name: str
    span: Span
    name_span: Span


@node
class Call(Node):
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr", Span], ...]
    span: Span


@node
class Index(Node):
    obj: "Expr"
    key: "Expr"
    span: Span


@node
class Unary(Node):
    op: str  # "-" or "not"
    operand: "Expr"
    span: Span


@node
class Binary(Node):
    op: str  # + - * / % and or == != < <= > >= in "not in"
    left: "Expr"
    right: "Expr"
    span: Span


@node
class Conditional(Node):
    cond: "Expr"
    then: "Expr"
    orelse: "Expr"
    span: Span


@node
class ListLit(Node):
    items: tuple["Expr", ...]
    span: Span


@node
class ListComp(Node):
    elem: "Expr"
    var: str
    iter: "Expr"
    cond: Optional["Expr"]
    span: Span


@node
class MapLit(Node):
    entries: tuple[tuple["Expr", "Expr"], ...]
    span: Span


@node
class MapComp(Node):
    key: "Expr"
    value: "Expr"
    var: str
    iter: "Expr"
    cond: Optional["Expr"]
    span: Span


@node
class Lambda(Node):
    params: tuple[tuple[str, Optional[TypeExpr], Span], ...]
    body: "Expr"
    span: Span


Expr = Union[Name, Literal, Attr, Call, Index, Unary, Binary, Conditional, ListLit, ListComp,
             MapLit, MapComp, Lambda]


# ---- statements -----------------------------------------------------------
@node
class Let(Node):
    name: str
    type: Optional[TypeExpr]
    value: Expr
    span: Span


@node
class Assign(Node):
    target: Expr  # Name, Index or Attr
    value: Expr
    span: Span


@node
class AugAssign(Node):
    target: Expr
    op: str  # + - * /
    value: Expr
    span: Span


@node
class Return(Node):
    value: Optional[Expr]
    span: Span


@node
class Break(Node):
    span: Span


@node
class Continue(Node):
    span: Span


@node
class Pass(Node):
    span: Span


@node
class Victim(Node):
    """``victim x``; ``value`` is None in a one-line rule ``victim when COND`` (see victim_rules)."""

    value: Optional[Expr]
    span: Span


@node
class Vote(Node):
    verdict: str  # permit / reject / abstain
    span: Span


@node
class Fail(Node):
    code: str  # unschedulable / unresolvable / error ("" = hook default)
    message: Expr
    span: Span


@node
class OrderBy(Node):
    keys: tuple[tuple[Expr, bool], ...]  # (key, descending)
    span: Span


@node
class ExprStmt(Node):
    expr: Expr
    span: Span


@node
class When(Node):
    """A simple statement guarded by ``when cond``."""

    cond: Expr
    stmt: "Stmt"
    span: Span


@node
class If(Node):
    branches: tuple[tuple[Expr, tuple["Stmt", ...]], ...]
    orelse: tuple["Stmt", ...]
    span: Span


@node
class For(Node):
    var: str
    iter: Expr
    body: tuple["Stmt", ...]
    span: Span
    var_span: Span


@node
class Drain(Node):
    var: str
    queue: Expr
    cond: Optional[Expr]
    body: tuple["Stmt", ...]
    span: Span
    var_span: Span


@node
class While(Node):
    cond: Expr
    body: tuple["Stmt", ...]
    span: Span


Stmt = Union[Let, Assign, AugAssign, Return, Break, Continue, Pass, Victim, Vote, Fail, OrderBy,
             ExprStmt, When, If, For, Drain, While]


# ---- declarations ---------------------------------------------------------
@node
class Use(Node):
    name: str
    span: Span


@node
class ArgDecl(Node):
    name: str
    type: TypeExpr
    default: Optional[Expr]
    key: Optional[str]
    # "" for one key; "prefix" (`from prefix`) or "containing" (`from containing`) for the family of
    # keys starting with, or containing, the key text, read into a map.
    family: str
    span: Span
    # The rest of a key path into nested YAML mappings (`from "sra" / "weight"`): field names,
    # None for `*` (every entry of a mapping, as Go decodes a map of structs).
    path: tuple[Optional[str], ...] = ()
    # `split ","`: the value is one text, cut at the separator as Go's strings.Split cuts it, each
    # item without surrounding white space, empty items dropped (binpack.resources: "gpu, foo").
    split: Optional[str] = None
    # `strict`: Volcano reads the key with framework.Get (mapstructure), which stops the scheduler
    # on a value it cannot decode; such a value is a configuration error, not a kept default.
    strict: bool = False
    # `asserted`: Volcano reads the key with a bare Go type assertion (`v.(string)`), which panics on
    # a value of any other type, a null included; such a value is a configuration error.
    asserted: bool = False


@node
class StateDecl(Node):
    name: str
    type: TypeExpr
    span: Span
    process: bool = False  # `process state`: kept from one session to the next (ProcessState)


@node
class ConstDecl(Node):
    name: str
    type: Optional[TypeExpr]
    value: Expr
    span: Span


@node
class Param(Node):
    name: str
    type: TypeExpr
    span: Span


@node
class FuncDef(Node):
    name: str
    params: tuple[Param, ...]
    returns: TypeExpr
    body: Union[tuple[Stmt, ...], Expr]
    span: Span
    name_span: Span


@node
class HookDef(Node):
    names: tuple[str, ...]
    params: tuple[tuple[str, Span], ...]
    body: Union[tuple[Stmt, ...], Expr]
    span: Span
    name_span: Span


Decl = Union[Use, ArgDecl, StateDecl, ConstDecl, FuncDef, HookDef]


@node
class Module(Node):
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
