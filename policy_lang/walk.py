"""Walking the syntax tree: the one definition of what lies under a node.

Every stage that looks through a tree without rewriting it (the strict lint, the
compiler's "does this body call a definition", the batch forms' "does this
expression read a node", victim-rule expansion, the language server) walks it
with :func:`preorder` rather than listing each node's fields by hand, so a field
added to ``ast.py`` is seen by all of them at once.  :func:`children` reads the
dataclass fields of a node: syntax nodes in a field, or anywhere inside the
tuples a field holds (``If.branches``, ``Call.kwargs``, ``MapLit.entries``), in
field order.  Spans, names and numbers are not nodes and are passed over.

The walks are iterative, so a tree of any depth (a generated policy, a fuzzer's
input) cannot exhaust Python's stack.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable, Iterator, Union, cast, get_args, get_type_hints

from . import ast as A

Walkable = Union[A.Node, tuple]  # a node, or a tuple of them (a block, a module's declarations)

STATEMENTS: tuple[type, ...] = get_args(A.Stmt)
EXPRESSIONS: tuple[type, ...] = get_args(A.Expr)

_FIELDS: dict[tuple[type, type | tuple[type, ...]], tuple[str, ...]] = {}


def _may_hold(annotation: object, kinds: type | tuple[type, ...]) -> bool:
    """Whether a field of this type can hold a node of ``kinds`` (``str``, ``Span``, ``bool`` cannot)."""
    if isinstance(annotation, type):
        return issubclass(annotation, kinds)
    return any(_may_hold(arg, kinds) for arg in get_args(annotation))


def _node_fields(cls: type, kinds: type | tuple[type, ...] = A.Node) -> tuple[str, ...]:
    """The fields of a node class whose type can hold nodes of ``kinds``, in declaration order (read
    once per class from its annotations, so a field added to ``ast.py`` is walked without a word here)."""
    names = _FIELDS.get((cls, kinds))
    if names is None:
        hints = get_type_hints(cls, vars(A))
        names = _FIELDS[cls, kinds] = tuple(f.name for f in fields(cls) if _may_hold(hints[f.name], kinds))
    return names


def children(node: Walkable) -> list[A.Node]:
    """The syntax nodes directly under ``node`` (or the items of a tuple), in field order."""
    found: list[A.Node] = []
    if isinstance(node, tuple):
        _collect(node, found)
        return found
    names = _FIELDS.get((type(node), A.Node))
    for name in _node_fields(type(node)) if names is None else names:
        value = getattr(node, name)
        if isinstance(value, A.Node):
            found.append(value)
        elif isinstance(value, tuple):
            _collect(value, found)
    return found


def _collect(values: tuple, found: list[A.Node]) -> None:
    """The nodes among ``values`` and inside the tuples there (a field's tuples nest two deep at most)."""
    for value in values:
        if isinstance(value, A.Node):
            found.append(value)
        elif isinstance(value, tuple):
            _collect(value, found)


def preorder(root: Walkable, descend: Callable[[A.Node], bool] | None = None, *,
             last_child_first: bool = False) -> Iterator[A.Node]:
    """Every node under ``root`` (itself included when a node), each before the nodes under it.

    ``descend(node)`` false keeps the walk out of that node's subtree (the node itself is still
    given).  Children come in field order, or the last first with ``last_child_first`` (a
    mirrored walk: the order in which the batch forms have always listed a lambda's lane
    parameters, which the generated code depends on).
    """
    stack: list[A.Node] = children(root) if isinstance(root, tuple) else [root]
    if not last_child_first:
        stack.reverse()
    while stack:
        node = stack.pop()
        yield node
        if descend is None or descend(node):
            under = children(node)
            stack.extend(under if last_child_first else reversed(under))


def visit(root: Walkable, enter: Callable[[A.Node], bool]) -> None:
    """Calls ``enter`` on every node under ``root``, parents first; its answer says whether to go
    under that node (starlark-go's ``syntax.Walk``): for walks that stop at what they collect."""
    for _node in preorder(root, enter):
        pass


def statements(root: Walkable, *, guarded: bool = True) -> Iterator[A.Stmt]:
    """Every statement in ``root`` (a statement, a block, a declaration), each before the ones it holds.

    The walk enters the blocks of ``if``, ``for``, ``drain`` and ``while`` and, unless ``guarded``
    is false, the statement a ``when`` guards; it reads only the fields that can hold statements,
    never expressions (no statement lives there).
    """
    stack: list[A.Node] = children(root) if isinstance(root, tuple) else [root]
    stack.reverse()
    while stack:
        node = stack.pop()
        if isinstance(node, STATEMENTS):
            yield cast(A.Stmt, node)  # STATEMENTS is A.Stmt's members, read from the union
            if not guarded and isinstance(node, A.When):
                continue
            names = _FIELDS.get((type(node), STATEMENTS))
            if names is None:
                names = _node_fields(type(node), STATEMENTS)
            if names:
                under: list[A.Node] = []
                _collect(tuple(getattr(node, name) for name in names), under)
                stack.extend(n for n in reversed(under) if isinstance(n, STATEMENTS))
        elif not isinstance(node, EXPRESSIONS):  # a declaration or a module: what holds hooks and definitions
            stack.extend(reversed(children(node)))
