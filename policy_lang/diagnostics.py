"""One error model for every layer: syntax, checks, bundles, clusters, runs.

A :class:`Diagnostic` carries a stable code, a severity, a source span, a
message and an optional hint.  Whatever stage finds a problem, the user sees
the same ``file:line:col: severity[code]: message`` line with a caret excerpt.
"""

from __future__ import annotations

import collections
import itertools

from dataclasses import dataclass, field
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator, Mapping, Sequence


# Nodes are numbered per tree (``ast.Node.nid``): the parser numbers a file's nodes from 1, bottom
# up, so a tree's root holds its largest number and victim-rule expansion numbers the nodes it
# adds after it; the numbers, like the tree, are the same in every process (compile cache
# entries are byte for byte the same).  A node made outside a tree's numbering (an analysis's
# stand-in) takes a number far above any tree's.
_UNNUMBERED = 1 << 48
_numbers: ContextVar[Iterator[int]] = ContextVar("node_numbers", default=itertools.count(_UNNUMBERED))


def next_node_id() -> int:
    """The next number of the tree being built (``ast.Node.nid``)."""
    return next(_numbers.get())


@contextmanager
def numbered_from(first: int) -> Iterator[None]:
    """Number the nodes and spans made inside from ``first`` up (one thread's, one tree's)."""
    token = _numbers.set(itertools.count(first))
    try:
        yield
    finally:
        _numbers.reset(token)


@dataclass(frozen=True)
class Span:
    """A 1-based source range; ``end_col`` is exclusive.  ``nid`` identifies a span that stands
    for a declaration without a node of its own (a hook's or lambda's parameter), as
    ``ast.Node.nid`` does a node; spans compare by their range."""

    line: int = 1
    col: int = 1
    end_line: int = 0
    end_col: int = 0
    nid: int = field(default_factory=next_node_id, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.end_line == 0:
            object.__setattr__(self, "end_line", self.line)
        if self.end_col == 0:
            object.__setattr__(self, "end_col", self.col + 1)


# The span of a diagnostic about a whole file or a command-line argument: it has no
# line and column, so it is shown as ``path: error[...]`` rather than ``path:1:1``.
NO_POSITION = Span(0, 0)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    file: str = "<input>"
    # A diagnostic made without a span is about its file as a whole: it gets no made-up 1:1.
    span: Span = NO_POSITION
    severity: str = "error"
    hint: str | None = None

    @property
    def positioned(self) -> bool:
        """False for a diagnostic about a whole file or an argument (:data:`NO_POSITION`)."""
        return self.span.line > 0

    @property
    def location(self) -> str:
        return f"{self.file}:{self.span.line}:{self.span.col}" if self.positioned else self.file

    def headline(self) -> str:
        return printable(f"{self.location}: {self.severity}[{self.code}]: {self.message}")

    def render(self, source: str | Sequence[str] | None = None) -> str:
        """The headline, a caret excerpt when the source is known, and the hint.  ``source`` is the
        file's text or its lines (:func:`render_all` splits each file once, not once per diagnostic)."""
        lines = [self.headline()]
        if source is not None:
            text_lines = source.splitlines() if isinstance(source, str) else source
            if 0 < self.span.line <= len(text_lines):
                lines += _excerpt(self.span, text_lines[self.span.line - 1].expandtabs(1))
        if self.hint:
            lines.append(printable(f"  hint: {self.hint}"))
        return "\n".join(lines)


# A source line longer than this is shown as a window of this many characters around the caret
# (a minified or flow-style file is one line: showing all of it under each diagnostic made
# 10,000 diagnostics on a 30 KB line half a gigabyte of output).
EXCERPT_WIDTH = 120
_ELLIPSIS = "\u2026"


def _excerpt(span: Span, text: str) -> list[str]:
    """The numbered source line (or its window around the caret) and the caret line under it."""
    width = (span.end_col - span.col) if span.end_line == span.line else 1
    width = max(1, min(width, len(text) - span.col + 2))
    start = 0
    if len(text) > EXCERPT_WIDTH:
        start = max(0, min(span.col - 1 - EXCERPT_WIDTH // 2, len(text) - EXCERPT_WIDTH))
        shown = text[start:start + EXCERPT_WIDTH]
        text = (_ELLIPSIS if start else "") + shown + (_ELLIPSIS if start + EXCERPT_WIDTH < len(text) else "")
        start -= 1 if start else 0  # the leading ellipsis takes one column
        width = max(1, min(width, EXCERPT_WIDTH - (span.col - 1 - start) + 1))
    gutter = f"{span.line:>4} | "
    return [gutter + text, " " * (len(gutter) + span.col - 1 - start) + "^" * width]


# How many diagnostics a text rendering shows; the rest are counted by code on one closing line
# (compilers stop listing too: a cluster of 40,000 objects without a kind is one mistake).
SHOWN_AT_MOST = 100


def render_all(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str],
               separator: str = "\n", shown_at_most: int = SHOWN_AT_MOST) -> str:
    """Each diagnostic rendered (each source split into lines once), at most ``shown_at_most``
    of them, then one line counting the others by code."""
    split: dict[str, Sequence[str]] = {}

    def lines_of(file: str) -> Sequence[str] | None:
        if file not in split and file in sources:
            split[file] = sources[file].splitlines()
        return split.get(file)

    parts = [d.render(lines_of(d.file)) for d in diagnostics[:shown_at_most]]
    if len(diagnostics) > shown_at_most:
        parts.append(not_shown(diagnostics[shown_at_most:]))
    return separator.join(parts)


def not_shown(rest: Sequence[Diagnostic]) -> str:
    """The line that stands for the diagnostics past the shown ones: how many, by code."""
    by_code = collections.Counter(d.code for d in rest)
    counts = ", ".join(f"{code} \u00d7{n:,}" for code, n in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"... and {len(rest):,} more problems not shown ({counts})"


def printable(text: str) -> str:
    """``text`` with the bytes the OS could not decode as \\xNN: a file name or argument that is not
    UTF-8 reaches Python as lone surrogates (surrogateescape), which no terminal can show."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(_printable_char(c) for c in text)


def _printable_char(c: str) -> str:
    if not "\ud800" <= c <= "\udfff":
        return c
    return f"\\x{ord(c) - 0xDC00:02x}" if c >= "\udc80" else f"\\u{ord(c):04x}"


class FumaroleError(Exception):
    """Raised with one or more diagnostics; the CLI prints them and exits 2."""

    def __init__(self, diagnostics: Iterable[Diagnostic], sources: dict[str, str] | None = None) -> None:
        self.diagnostics = list(diagnostics)
        self.sources = sources or {}
        shown = [d.headline() for d in self.diagnostics[:SHOWN_AT_MOST]]
        hidden = len(self.diagnostics) - len(shown)
        super().__init__("\n".join(shown + ([f"... and {hidden:,} more"] if hidden else [])))

    def render(self) -> str:
        return render_all(self.diagnostics, self.sources)


def error(code: str, message: str, file: str = "<input>", line: int = 1, col: int = 1,
          hint: str | None = None) -> FumaroleError:
    """Shorthand for a FumaroleError carrying one error diagnostic."""
    return FumaroleError([Diagnostic(code, message, file, Span(line, col), hint=hint)])


# A hint costs at most HINT_CANDIDATES comparisons of names of at most HINT_NAME_LENGTH characters,
# so hinting every unknown name of a large policy takes time in proportion to the policy.
HINT_CANDIDATES = 500
HINT_NAME_LENGTH = 64


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A 'did you mean' hint for a misspelt name, or None.  Bounded: only the first HINT_CANDIDATES
    candidates (an iterable is read no further) and names up to HINT_NAME_LENGTH characters."""
    import difflib

    if len(name) > HINT_NAME_LENGTH:
        return None
    near: dict[str, None] = {}  # in order, each once
    for candidate in itertools.islice(candidates, HINT_CANDIDATES):
        if len(candidate) <= HINT_NAME_LENGTH:
            near[candidate] = None
    matches = difflib.get_close_matches(name, list(near), n=1, cutoff=0.6)
    return f"did you mean '{matches[0]}'?" if matches else None
