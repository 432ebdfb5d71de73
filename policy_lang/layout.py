"""What the syntax tree does not keep: comments, blank lines and logical lines.

The grammar drops comments (they are whitespace to the parser), so the
formatter recovers them from the source text by position.  A *logical line*
is what the parser sees as one line: physical lines joined inside brackets or
by a trailing backslash.  Every statement and every block header is exactly
one logical line, which is how the formatter knows which comments sit inside
a statement and where a statement ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TAB = 4  # as fumarole.policy_lang.parser.PolicyIndenter


@dataclass(frozen=True)
class Comment:
    line: int
    indent: int  # width of the whitespace before '#'
    text: str  # from '#' to the end of the line, trailing spaces dropped
    own_line: bool  # nothing but whitespace before it


@dataclass
class Layout:
    lines: list[str]
    comments: list[Comment] = field(default_factory=list)
    logical_start: dict[int, int] = field(default_factory=dict)  # physical line -> first line of its logical line
    logical_end: dict[int, int] = field(default_factory=dict)  # first line of a logical line -> its last line

    def is_blank(self, line: int) -> bool:
        return 0 < line <= len(self.lines) and not self.lines[line - 1].strip()

    def end_of(self, line: int) -> int:
        """The last physical line of the logical line that ``line`` is part of."""
        start = self.logical_start.get(line, line)
        return self.logical_end.get(start, line)

    def start_of(self, line: int) -> int:
        return self.logical_start.get(line, line)

    def next_code_line(self, after: int) -> int:
        """The first line after ``after`` that starts a logical line (len(lines) + 1 at the end)."""
        for line in range(after + 1, len(self.lines) + 1):
            if self.logical_start.get(line) == line:
                return line
        return len(self.lines) + 1

    def indent(self, line: int) -> int:
        return indent_width(self.lines[line - 1]) if 0 < line <= len(self.lines) else 0


def indent_width(text: str) -> int:
    stripped = text.lstrip(" \t")
    prefix = text[: len(text) - len(stripped)]
    return prefix.count(" ") + prefix.count("\t") * TAB


def scan(source: str) -> Layout:
    """Comments and logical lines of a policy source (which must already parse)."""
    lines = source.replace("\r\n", "\n").split("\n")
    layout = Layout(lines)
    depth = 0
    continued = False
    current = 0
    for number, text in enumerate(lines, 1):
        inside = depth > 0 or continued
        continued = False
        has_code = False
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == '"':
                i = _string_end(text, i)
                has_code = True
                continue
            if ch == "#":
                layout.comments.append(Comment(number, indent_width(text[:i]) if not has_code else 0,
                                               text[i:].rstrip(), not has_code))
                break
            if ch == "\\" and not text[i + 1:].strip():
                continued = True
                break
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth = max(0, depth - 1)
            if not ch.isspace():
                has_code = True
            i += 1
        if inside:
            layout.logical_start[number] = current
            layout.logical_end[current] = number
        elif has_code:
            current = number
            layout.logical_start[number] = number
            layout.logical_end[number] = number
    return layout


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at ``start`` (strings never span lines)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)
