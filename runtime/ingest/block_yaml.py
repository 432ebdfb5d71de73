"""A YAML cluster in the block style kubectl and ``yaml.dump`` write, read a line at a time.

Reading a dump through libyaml's events (:mod:`.plain_yaml`) costs a Python
event object and two marks per key, value and collection: on a 4 MB dump
libyaml itself takes a tenth of a second and the objects it hands over most of
a second.  The dumps kubectl and ``yaml.dump`` print are almost all one form
-- a key, a colon and one scalar on a line, nested blocks indented under
their key, ``- `` starting an item -- and repeat the same lines thousands of
times.  So this reader cuts each distinct line once into its indentation,
items, key and value, and builds plain dicts and lists from the indentation.

It reads only the lines it can read exactly as libyaml would, and gives up
(None) on everything else, so the event reader, then the careful loader, read
the text again: each line is ASCII without tabs; a key is a plain or quoted
scalar on one line; a value is a plain scalar on one line (no ``#``, no
``: ``), a single-quoted one, a double-quoted one without a backslash, ``{}``,
``[]``, an alias, or nothing (a nested block follows, or the value is null);
an anchor is written alone after its key or ``- `` and names the block below
it.  A blank or comment line, a line continuing a scalar, a flow collection,
a block scalar, a tag, a document marker or directive, a duplicate key, an
indentation the block above does not allow: each gives up.  Plain scalars
are resolved as the event reader resolves them (PyYAML's safe rules, each
distinct text once); aliases share their anchor's object and are bounded as
there, never less strictly.
"""

from __future__ import annotations

import re
from typing import Any

from fumarole.runtime.ingest.plain_yaml import _LOADER, _GiveUp, _Scalars
from fumarole.runtime.ingest.yamlpos import MAX_ALIAS_NODES, MAX_DEPTH, nesting_depth

# A plain scalar on one line, in block context: not starting with an indicator (a '-' only
# before a non-space), no ': ' or ':' at its end, no '#' at all, no trailing space.  Each
# character is taken by one alternative only, so matching stays linear.
_PLAIN = r"(?:[^\s\-?:,\[\]{}#&*!|>'\"%@`]|-(?=\S))(?:[^\s:#]+|:(?=[^\s#])| +(?=[^\s:#]))*"
_SINGLE = r"'[^'\n]*(?:''[^'\n]*)*'"
_DOUBLE = r'"[^"\\\n]*"'
_SCALAR = rf"{_PLAIN}|{_SINGLE}|{_DOUBLE}"
_NAME = r"[0-9A-Za-z_-]+"
# A line as libyaml would cut it: its indentation, its '- ' (each opening an item), a key and its
# ': ' (or ':' ending the line), and a value written alone on it (an anchor alone: a block below
# it).  Keys and values can hold no ': ', so a line is cut one way only.
_LINE = re.compile(rf"( *)((?:- )*)(?:({_SCALAR}):(?: +|$))?({_SCALAR}|\{{\}}|\[\]|[*&]{_NAME})? *")
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"  # what libyaml reads, less tabs, CR and the non-ASCII
_CHUNK = 1 << 20  # characters of lines split at a time
_LONGEST_KEY = 1000  # libyaml refuses an implicit key longer than 1024 characters
_KEPT = 200_000  # distinct lines (and scalar texts) remembered

# What a line's value is: a scalar (its value), nothing written (a block may follow; the anchor
# written alone, or ''), ``{}``, ``[]``, or an alias (its anchor).
_SCALAR_VALUE, _PENDING, _EMPTY_MAPPING, _EMPTY_LIST, _ALIAS = range(5)
_NO_KEY = object()


def block_yaml(text: str) -> list[Any] | None:
    """The one document of a block-style YAML text, if every line has the shape described above."""
    if not text.isascii() or text.encode("ascii").translate(None, _PRINTABLE) \
            or text.startswith(("---", "...", "%")) or "\n---" in text or "\n..." in text:
        return None  # something not read here, or a document marker (or directive)
    loader = _LOADER("")
    try:
        return [_Reader(text, _Scalars(loader)).read()]
    except (_GiveUp, RecursionError):
        return None
    finally:
        loader.dispose()


_Line = tuple[int, int, Any, int, Any]  # column, items opened ('- '), key (or _NO_KEY), what the value is, value


class _Reader:
    """The lines of one text folded into the open collections: ``cur`` with its column
    (``cur_col``: a mapping's keys', a list's dashes') and the enclosing ones on ``stack``."""

    def __init__(self, text: str, scalars: _Scalars) -> None:
        self.text, self.scalars = text, scalars
        self.lines: dict[str, _Line] = {}  # each distinct line, cut
        self.values: dict[str, Any] = {}  # a scalar's text as written (quotes included) -> its value
        self.named: dict[str, tuple[Any, int]] = {}  # anchor -> (collection, nodes it stands for, at most)
        self.open_anchors: dict[int, tuple[str, int, int]] = {}  # id(collection) -> (anchor, line, expanded)
        self.expanded = 0  # nodes the aliases read so far stand for, at most
        # The longest line (and its newline) of the slices of lines an anchored block spans.
        self.widest, self.measured = 0, -1

    def read(self) -> Any:
        """The document: the collection the first line opens (a lone scalar gives up)."""
        text = self.text
        end = len(text) - 1 if text.endswith("\n") else len(text)
        if end <= 0:
            raise _GiveUp
        known, cut = self.lines, self.cut
        open_anchors = self.open_anchors
        # The document is the block the first line opens in a holder: as if a key waited for it.
        holder: list[Any] = []
        stack: list[tuple[Any, bool, int]] = []
        cur: Any = holder
        cur_list, cur_col = True, -1
        pending = True  # the last line left a key or an item waiting for a block below it
        pending_key: Any = None
        pending_anchor = ""
        depth_limit = MAX_DEPTH - 2  # the event reader's limit, with room to spare
        line_no, pos, chunk, tail = 0, 0, 0, 0  # tail: the length of the last line split
        while pos < end:
            stop = text.find("\n", min(pos + _CHUNK, end), end)
            if stop < 0:
                stop = end
            lines = text[pos:stop].split("\n")
            pos, chunk = stop + 1, chunk + 1
            before, tail = tail, len(lines[-1])  # an anchor may be written on the slice before's last line
            if open_anchors:
                self.widen(lines, chunk, before)
            for line in lines:
                line_no += 1
                col, items, key, kind, value = known[line] if line in known else cut(line)
                if pending:
                    pending = False
                    if col > cur_col or (col == cur_col and items and not cur_list):
                        # a block below the key or item (a list may start at its key's column)
                        if len(stack) >= depth_limit or not items and key is _NO_KEY:
                            raise _GiveUp
                        block: Any = [] if items else {}
                        if cur_list:
                            cur.append(block)
                        else:
                            cur[pending_key] = block
                        if pending_anchor:
                            self.named.pop(pending_anchor, None)  # an alias inside it: given up
                            open_anchors[id(block)] = (pending_anchor, line_no - 1, self.expanded)
                            self.widen(lines, chunk, before)
                        stack.append((cur, cur_list, cur_col))
                        cur, cur_list, cur_col = block, bool(items), col
                    elif pending_anchor:
                        raise _GiveUp  # an anchored null: left to the event reader
                    elif cur_list:
                        cur.append(self.null())
                    else:
                        cur[pending_key] = self.null()
                while cur_col > col:
                    if not stack:
                        raise _GiveUp
                    if open_anchors:
                        self.close_anchor(cur, line_no)
                    cur, cur_list, cur_col = stack.pop()
                if items:
                    if not cur_list or cur_col != col:
                        raise _GiveUp
                    for extra in range(1, items):  # '- - ': a list as the item
                        if len(stack) >= depth_limit:
                            raise _GiveUp
                        inner: list[Any] = []
                        cur.append(inner)
                        stack.append((cur, cur_list, cur_col))
                        cur, cur_col = inner, col + 2 * extra
                    if key is _NO_KEY:
                        if kind:
                            if kind == _PENDING:
                                pending, pending_anchor = True, value
                                continue
                            value = self.collection(kind, value, len(stack))
                        cur.append(value)
                        continue
                    if len(stack) >= depth_limit:
                        raise _GiveUp
                    mapping: dict[Any, Any] = {}
                    cur.append(mapping)
                    stack.append((cur, cur_list, cur_col))
                    cur, cur_list, cur_col = mapping, False, col + 2 * items
                elif cur_list:
                    if cur_col == col and stack:  # a key after a list written at its key's column
                        if open_anchors:
                            self.close_anchor(cur, line_no)
                        cur, cur_list, cur_col = stack.pop()
                    if cur_list or cur_col != col or key is _NO_KEY:
                        raise _GiveUp
                elif cur_col != col or key is _NO_KEY:
                    raise _GiveUp
                if key in cur:
                    raise _GiveUp  # a duplicate key: the careful loader's error
                if kind:
                    if kind == _PENDING:
                        pending, pending_key, pending_anchor = True, key, value
                        continue
                    value = self.collection(kind, value, len(stack))
                cur[key] = value
        if pending:
            if pending_anchor:
                raise _GiveUp
            if cur_list:
                cur.append(self.null())
            else:
                cur[pending_key] = self.null()
        while stack:
            if open_anchors:
                self.close_anchor(cur, line_no)
            cur, cur_list, cur_col = stack.pop()
        return holder[0]

    def cut(self, line: str) -> _Line:
        """A line's column, items, key and value (each distinct line once)."""
        match = _LINE.fullmatch(line)
        if match is None:
            raise _GiveUp
        indent, dashes, key_text, text = match.groups()
        key: Any = _NO_KEY
        if key_text is not None:
            if len(key_text) > _LONGEST_KEY:
                raise _GiveUp
            key = self.scalar(key_text)
        kind, value = _SCALAR_VALUE, None
        if text is None:
            if key is _NO_KEY and not dashes:
                raise _GiveUp  # a blank line
            kind, value = _PENDING, ""
        else:
            first = text[0]
            if first == "&":
                kind, value = _PENDING, text[1:]
            elif first == "*":
                kind, value = _ALIAS, text[1:]
            elif first == "{":
                kind = _EMPTY_MAPPING
            elif first == "[":
                kind = _EMPTY_LIST
            else:
                value = self.scalar(text)
        cut = (len(indent), len(dashes) // 2, key, kind, value)
        if len(self.lines) < _KEPT:
            self.lines[line] = cut
        return cut

    def scalar(self, text: str) -> Any:
        """A scalar's value from its text as written (each distinct text once)."""
        values = self.values
        if text in values:
            return values[text]
        first = text[0]
        if first == "'":
            value: Any = text[1:-1].replace("''", "'")
        elif first == '"':
            value = text[1:-1]
        else:
            value = self.scalars.plain(text)
        if len(values) < _KEPT:
            values[text] = value
        return value

    def null(self) -> Any:
        """A value written as nothing: a null by PyYAML's rules."""
        return self.scalars.plain("")

    def collection(self, kind: int, value: Any, depth: int) -> Any:
        """A new ``{}`` or ``[]``, or the block an alias names."""
        if kind == _ALIAS:
            return self.alias(value, depth)
        if depth >= MAX_DEPTH - 2:
            raise _GiveUp
        return {} if kind == _EMPTY_MAPPING else []

    def close_anchor(self, block: Any, line_no: int) -> None:
        """An anchored block ends before line ``line_no`` (or with it, at the text's end)."""
        opened = self.open_anchors.pop(id(block), None)
        if opened is None:
            return
        name, first_line, expanded_before = opened
        # Its lines, the anchor's to the one after it, each counted as the widest: never fewer
        # than the characters libyaml's marks span, the event reader's bound.
        span = (line_no - first_line + 1) * self.widest
        self.named[name] = (block, span + self.expanded - expanded_before)

    def widen(self, lines: list[str], chunk: int, tail: int) -> None:
        """Count the widest line of a slice (and the last of the one before) in ``widest``."""
        if self.measured != chunk:
            self.widest = max(self.widest, max(map(len, lines)) + 1, tail + 1)
            self.measured = chunk

    def alias(self, name: str, depth: int) -> Any:
        if name not in self.named:
            raise _GiveUp  # unknown, or a block still open
        block, nodes = self.named[name]
        self.expanded += nodes
        if self.expanded > MAX_ALIAS_NODES or depth + 2 + nesting_depth(block) > MAX_DEPTH:
            raise _GiveUp
        return block
