"""One error model for every layer: syntax, checks, bundles, clusters, runs.

A :class:`Diagnostic` carries a stable code, a severity, a source span, a
message and an optional hint.  Whatever stage finds a problem, the user sees
the same ``file:line:col: severity[code]: message`` line with a caret excerpt.
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True)
class Span:
    """A 1-based source range; ``end_col`` is exclusive."""

    line: int = 1
    col: int = 1
    end_line: int = 0
    end_col: int = 0

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
    span: Span = field(default_factory=Span)
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

    def render(self, source: str | None = None) -> str:
        """The headline, a caret excerpt when the source is known, and the hint."""
        lines = [self.headline()]
        if source is not None:
            text_lines = source.splitlines()
            if 0 < self.span.line <= len(text_lines):
                text = text_lines[self.span.line - 1].expandtabs(1)
                width = (self.span.end_col - self.span.col) if self.span.end_line == self.span.line else 1
                width = max(1, min(width, len(text) - self.span.col + 2))
                gutter = f"{self.span.line:>4} | "
                lines.append(gutter + text)
                lines.append(" " * (len(gutter) + self.span.col - 1) + "^" * width)
        if self.hint:
            lines.append(printable(f"  hint: {self.hint}"))
        return "\n".join(lines)


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
        super().__init__("\n".join(d.headline() for d in self.diagnostics))

    def render(self) -> str:
        return "\n".join(d.render(self.sources.get(d.file)) for d in self.diagnostics)


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
