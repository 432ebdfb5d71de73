"""Python syntax-tree building blocks shared by the two code generators (``compiler``, ``vectorize``).

Generated code is built from ``ast`` nodes, never from text, so no policy
text can become code; these helpers keep that construction short to read.
"""

from __future__ import annotations

import ast as py


def load(name: str) -> py.Name:
    return py.Name(id=name, ctx=py.Load())


def store(name: str) -> py.Name:
    return py.Name(id=name, ctx=py.Store())


def const(value: str | bytes | bool | int | float | complex | None) -> py.Constant:
    return py.Constant(value=value)


def attr(obj: py.expr, name: str) -> py.Attribute:
    return py.Attribute(value=obj, attr=name, ctx=py.Load())


def call(func: py.expr | str, *args: py.expr, keywords: list[py.keyword] | None = None) -> py.Call:
    """A call; a string names the function, dotted for an attribute path (``_V.where``)."""
    if isinstance(func, str):
        head, *rest = func.split(".")
        func = load(head)
        for part in rest:
            func = attr(func, part)
    return py.Call(func=func, args=list(args), keywords=keywords or [])


def assign(target: py.expr | str, value: py.expr) -> py.Assign:
    return py.Assign(targets=[store(target) if isinstance(target, str) else target], value=value)
