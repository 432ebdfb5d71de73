"""A small Wadler-style pretty-printing algebra for the formatter.

A document is text with optional line breaks.  A :class:`Group` is printed
flat (each :class:`Line` as its ``flat`` text) when it fits in the remaining
width, otherwise its own lines break and its inner groups get the same choice
again.  That one rule gives the formatter its layout: short things stay on one
line, long calls put one argument per line, long conditions one operand per
line -- and the result depends only on the tree, so formatting is idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

INDENT = 4


@dataclass(frozen=True)
class Group:
    body: "Doc"


@dataclass(frozen=True)
class Nest:
    """Breaks inside ``body`` indent one level more."""

    body: "Doc"


@dataclass(frozen=True)
class Line:
    """A line break, or ``flat`` when its group fits."""

    flat: str = " "


@dataclass(frozen=True)
class IfBreak:
    """``broken`` when the enclosing group breaks, else ``flat`` (e.g. parentheses, trailing commas)."""

    broken: str
    flat: str = ""


Doc = Union[str, tuple, Group, Nest, Line, IfBreak]
SOFT = Line("")
LINE = Line(" ")


def render(doc: Doc, indent: int, width: int) -> str:
    """Lay ``doc`` out starting at column ``indent`` (already written), breaking groups that do not fit."""
    out: list[str] = []
    col = indent
    stack: list[tuple[int, bool, Doc]] = [(indent, False, doc)]
    while stack:
        ind, flat, d = stack.pop()
        if isinstance(d, str):
            out.append(d)
            col += len(d)
        elif isinstance(d, tuple):
            stack.extend((ind, flat, part) for part in reversed(d))
        elif isinstance(d, Nest):
            stack.append((ind + INDENT, flat, d.body))
        elif isinstance(d, Line):
            if flat:
                out.append(d.flat)
                col += len(d.flat)
            else:
                out.append("\n" + " " * ind)
                col = ind
        elif isinstance(d, IfBreak):
            text = d.flat if flat else d.broken
            out.append(text)
            col += len(text)
        else:
            stack.append((ind, flat or _fits(width - col, d.body, stack), d.body))
    return "".join(out)


def _fits(remaining: int, doc: Doc, rest: list[tuple[int, bool, Doc]]) -> bool:
    """Does ``doc`` flat, followed by the rest up to its next line break, fit in ``remaining`` columns?"""
    todo: list[tuple[bool, Doc]] = [(True, doc)]
    next_rest = len(rest) - 1
    while remaining >= 0:
        if not todo:
            if next_rest < 0:
                return True
            _, flat, d = rest[next_rest]
            next_rest -= 1
            todo.append((flat, d))
            continue
        flat, d = todo.pop()
        if isinstance(d, str):
            remaining -= len(d)
        elif isinstance(d, tuple):
            todo.extend((flat, part) for part in reversed(d))
        elif isinstance(d, (Nest, Group)):
            todo.append((flat, d.body))
        elif isinstance(d, Line):
            if not flat:
                return True
            remaining -= len(d.flat)
        else:
            remaining -= len(d.flat if flat else d.broken)
    return False


def flat_text(doc: Doc) -> str:
    """The one-line form of a document (for messages that quote an expression)."""
    return render(Group(doc), 0, 1 << 30)
