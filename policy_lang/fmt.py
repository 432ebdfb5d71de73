"""The canonical layout of a policy file: ``fumarole fmt``.

Formatting prints the syntax tree again -- four-space indentation, one space
around binary operators, parentheses where the grammar or a reader needs
them (``a or (b and c)``, ``not (a <= b)``), lines up to :data:`WIDTH`
columns (longer calls, lists and conditions break one item per line) -- and
puts back what the tree does not hold: comments (recovered from the source by
position, see :mod:`fumarole.policy_lang.layout`) and blank lines (kept, at most two
between declarations and one inside a block).

Formatting never changes meaning: :func:`format_source` parses its own output
and refuses to return it unless the tree is the same as the input's, and it is
idempotent because the layout depends only on the tree, the comments and the
(clamped) blank lines.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Sequence

from . import ast as A
from . import file_errors
from .diagnostics import FumaroleError, Span
from .doc import LINE, SOFT, Doc, Group, IfBreak, Nest, flat_text, render
from .layout import Comment, Layout, scan
from .parser import parse

WIDTH = 120
TOP_BLANKS, NESTED_BLANKS = 2, 1

# Binding strength, loosest first: an operand looser than its position allows gets parentheses.
LAMBDA, TERNARY, OR, AND, NOT, COMPARE, SUM, PRODUCT, UNARY, POSTFIX, ATOM = range(11)
_BINARY = {"or": OR, "and": AND, "+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT, "%": PRODUCT}


def format_source(source: str, file: str = "<policy>") -> str:
    """The canonical text of a policy file; raises FumaroleError if it does not parse."""
    module = parse(source, file)
    text = _Printer(scan(source)).module(module)
    try:
        same = same_tree(module, parse(text, file))
    except FumaroleError:
        same = False
    if not same:
        raise FumaroleError([file_errors.format_changes_meaning(file)], {file: source})
    return text


def expr_text(e: A.Expr) -> str:
    """An expression on one line, as the formatter writes it (for messages that quote code)."""
    return flat_text(expr(e))


def stmt_text(s: A.Stmt) -> str:
    """A simple statement on one line (``victim c when c.preemptable``), for reports that name a rule."""
    return flat_text(_simple(s))


def same_tree(a: object, b: object) -> bool:
    """Do two syntax trees mean the same, whatever their positions and spellings of literals?

    Iterative (a stack of pairs), so it compares trees of any depth."""
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if isinstance(x, Span) and isinstance(y, Span):
            continue
        if is_dataclass(x) and not isinstance(x, type):
            if type(x) is not type(y):
                return False
            pairs.extend((getattr(x, f.name), getattr(y, f.name)) for f in fields(x)
                         if f.name not in ("span", "name_span", "var_span", "file", "source", "text", "nid"))
        elif isinstance(x, (tuple, list)):
            if type(x) is not type(y) or len(x) != len(y):
                return False
            pairs.extend(zip(x, y))
        elif x != y:
            return False
    return True


# -- expressions -------------------------------------------------------------------------

def precedence(e: A.Expr) -> int:
    if isinstance(e, A.Lambda):
        return LAMBDA
    if isinstance(e, A.Conditional):
        return TERNARY
    if isinstance(e, A.Binary):
        return _BINARY.get(e.op, COMPARE)
    if isinstance(e, A.Unary):
        return NOT if e.op == "not" else UNARY
    if isinstance(e, (A.Attr, A.Call, A.Index)):
        return POSTFIX
    return ATOM


def expr(e: A.Expr, at_least: int = LAMBDA, top: bool = False) -> Doc:
    """The document of ``e`` where the grammar needs binding strength ``at_least``.

    ``top`` is true outside any bracket: a condition that must break there gets
    parentheses, since a policy line may only continue inside brackets.
    """
    if precedence(e) < at_least or _ambiguous_postfix(e, at_least):
        return _parenthesised(e)
    return _expr(e, top)


def _parenthesised(e: A.Expr) -> Doc:
    return Group(("(", Nest((SOFT, _expr(e, False))), SOFT, ")"))


def _for_clarity(e: A.Expr, within: str) -> bool:
    """Parentheses the grammar does not need but a reader does: ``a or (b and c)``,
    ``not (a <= b)``, ``x if c else (y if d else z)``."""
    if within == "or":
        return isinstance(e, A.Binary) and e.op == "and"
    if within == "not":
        return precedence(e) == COMPARE
    return within == "else" and isinstance(e, A.Conditional)


def _ambiguous_postfix(e: A.Expr, at_least: int) -> bool:
    """``1.x`` would lex as a float and ``- -x`` reads badly: parenthesise those operands."""
    if at_least == POSTFIX and isinstance(e, A.Literal) and e.kind in ("int", "float", "duration"):
        return True
    return at_least == UNARY and isinstance(e, A.Unary) and e.op == "-"


def _bracketed(open_: str, items: Sequence[Doc], close: str, trailing_comma: bool = True) -> Doc:
    if not items:
        return open_ + close
    body: list[Doc] = []
    for i, item in enumerate(items):
        if i:
            body += [",", LINE]
        body.append(item)
    return Group((open_, Nest((SOFT, *body, IfBreak("," if trailing_comma else ""))), SOFT, close))


def _expr(e: A.Expr, top: bool) -> Doc:
    if isinstance(e, A.Name):
        return e.id
    if isinstance(e, A.Literal):
        return e.text or repr(e.value)
    if isinstance(e, A.Attr):
        return (expr(e.obj, POSTFIX, top), ".", e.name)
    if isinstance(e, A.Index):
        return (expr(e.obj, POSTFIX, top), "[", expr(e.key), "]")
    if isinstance(e, A.Call):
        args = [expr(a) for a in e.args] + [(name, ": ", expr(value)) for name, value, _ in e.kwargs]
        return (expr(e.func, POSTFIX, top), _bracketed("(", args, ")"))
    if isinstance(e, A.Unary):
        if e.op == "not":
            if _for_clarity(e.operand, "not"):
                return ("not ", _parenthesised(e.operand))
            return ("not ", expr(e.operand, NOT, top))
        return ("-", expr(e.operand, UNARY, top))
    if isinstance(e, A.Binary):
        if e.op in ("and", "or"):
            return _chain(e, top)
        own = precedence(e)
        if own == COMPARE:  # comparisons do not chain: both sides are sums
            return (expr(e.left, SUM, top), f" {e.op} ", expr(e.right, SUM, top))
        return (expr(e.left, own, top), f" {e.op} ", expr(e.right, own + 1, top))
    if isinstance(e, A.Conditional):
        orelse = _parenthesised(e.orelse) if _for_clarity(e.orelse, "else") else expr(e.orelse, TERNARY, top)
        return (expr(e.then, OR, top), " if ", expr(e.cond, OR, top), " else ", orelse)
    if isinstance(e, A.ListLit):
        return _bracketed("[", [expr(i) for i in e.items], "]")
    if isinstance(e, A.MapLit):
        return _bracketed("{", [(expr(k, TERNARY), ": ", expr(v)) for k, v in e.entries], "}")
    if isinstance(e, A.ListComp):
        return _comprehension("[", (expr(e.elem),), e.var, e.iter, e.cond, "]")
    if isinstance(e, A.MapComp):
        return _comprehension("{", (expr(e.key, TERNARY), ": ", expr(e.value)), e.var, e.iter, e.cond, "}")
    if isinstance(e, A.Lambda):
        params = ", ".join(name if t is None else f"{name}: {type_text(t)}" for name, t, _ in e.params)
        return (f"fn({params}) => ", expr(e.body, LAMBDA, top))
    raise TypeError(f"cannot format {type(e).__name__}")


def _chain(e: A.Binary, top: bool) -> Doc:
    """``a and b and c``: one operand per line when it breaks (in parentheses outside brackets)."""
    operands: list[A.Expr] = []
    node: A.Expr = e
    while isinstance(node, A.Binary) and node.op == e.op:  # the left spine only: a and (b and c) keeps its parentheses
        operands.append(node.right)
        node = node.left
    operands.append(node)
    operands.reverse()
    own = _BINARY[e.op]
    docs = [_parenthesised(o) if _for_clarity(o, e.op) else expr(o, own if i == 0 else own + 1)
            for i, o in enumerate(operands)]
    parts: list[Doc] = [docs[0]] + [(LINE, f"{e.op} ", d) for d in docs[1:]]
    if top:  # first the whole condition on a line of its own, then one operand per line
        return Group((IfBreak("("), Nest((SOFT, Group(tuple(parts)))), SOFT, IfBreak(")")))
    return Group(tuple(parts))


def _comprehension(open_: str, head: tuple, var: str, it: A.Expr, cond: A.Expr | None, close: str) -> Doc:
    tail: list[Doc] = [LINE, f"for {var} in ", expr(it, OR)]
    if cond is not None:
        tail += [LINE, "if ", expr(cond, OR)]
    return Group((open_, Nest((SOFT, *head, *tail)), SOFT, close))


def type_text(t: A.TypeExpr) -> str:
    args = f"[{', '.join(type_text(a) for a in t.args)}]" if t.args else ""
    return t.name + args + ("?" if t.optional else "")


# -- statements and declarations -----------------------------------------------------------

def _simple(s: A.Stmt) -> Doc:
    """A statement that fits on one logical line."""
    if isinstance(s, A.When):
        return (_simple(s.stmt), " when ", _guard(s.cond))
    if isinstance(s, A.Let):
        annotation = f": {type_text(s.type)}" if s.type else ""
        return (f"let {s.name}{annotation} = ", expr(s.value, top=True))
    if isinstance(s, A.Assign):
        return (expr(s.target, top=True), " = ", expr(s.value, top=True))
    if isinstance(s, A.AugAssign):
        return (expr(s.target, top=True), f" {s.op}= ", expr(s.value, top=True))
    if isinstance(s, A.Return):
        return "return" if s.value is None else ("return ", expr(s.value, top=True))
    if isinstance(s, A.Victim):
        return "victim" if s.value is None else ("victim ", expr(s.value, top=True))
    if isinstance(s, A.Fail):
        return ("fail ", f"{s.code} " if s.code else "", expr(s.message, top=True))
    if isinstance(s, A.OrderBy):
        keys: list[Doc] = []
        for i, (key, desc) in enumerate(s.keys):
            keys += [", " if i else "", expr(key, TERNARY, top=True), " desc" if desc else ""]
        return ("order by ", *keys)
    if isinstance(s, A.ExprStmt):
        return expr(s.expr, top=True)
    if isinstance(s, A.Vote):
        return s.verdict
    return {A.Break: "break", A.Continue: "continue", A.Pass: "pass"}[type(s)]


def _guard(cond: A.Expr) -> Doc:
    """A ``when`` condition; one that does not fit moves, whole, into parentheses on its own lines."""
    if isinstance(cond, A.Binary) and cond.op in ("and", "or"):
        return expr(cond, top=True)  # a chain breaks one operand per line, in parentheses
    return Group((IfBreak("("), Nest((SOFT, expr(cond))), SOFT, IfBreak(")")))


def _decl(d: A.Decl, source_line: str) -> Doc:
    if isinstance(d, A.Use):
        return f"use {d.name}"
    if isinstance(d, A.StateDecl):
        return f"{'process ' if d.process else ''}state {d.name}: {type_text(d.type)}"
    if isinstance(d, A.ConstDecl):
        annotation = f": {type_text(d.type)}" if d.type else ""
        return (f"let {d.name}{annotation} = ", expr(d.value, top=True))
    assert isinstance(d, A.ArgDecl)
    parts: list[Doc] = [f"arg {d.name}: {type_text(d.type)}"]
    if d.default is not None:
        parts += [" = ", expr(d.default, top=True)]
    # The key and separator as written: their escapes are not kept in the tree.
    key, separator = _key_and_separator(source_line)
    if d.key is not None:
        parts.append(f" from {d.family + ' ' if d.family else ''}{' / '.join(key)}")
    if separator is not None:
        parts.append(f" split {separator}")
    if d.strict:
        parts.append(" strict")
    if d.asserted:
        parts.append(" asserted")
    return tuple(parts)


def _header(d: A.FuncDef | A.HookDef) -> Doc:
    if isinstance(d, A.FuncDef):
        params = [f"{p.name}: {type_text(p.type)}" for p in d.params]
        return (f"def {d.name}", _bracketed("(", params, ")"), f" -> {type_text(d.returns)}")
    names = ", ".join(d.names)
    if not d.params:
        return f"on {names}"
    return (f"on {names}", _bracketed("(", [name for name, _ in d.params], ")"))


def _expression_body(header: Doc, body: A.Expr) -> Doc:
    """``def f(...) -> T = body``: on one line if it fits; a long condition breaks in
    parentheses after ``=``; anything else moves to the next line, indented."""
    one_line = (header, " = ", expr(body, top=True))
    if len(flat_text(one_line)) <= WIDTH or (isinstance(body, A.Binary) and body.op in ("and", "or")):
        return one_line
    return (header, " =", Nest((LINE, expr(body, top=True))))  # a Line outside any group always breaks


def _key_and_separator(text: str) -> tuple[list[str], str | None]:
    """An argument declaration's key path after `from` (its string literals as written, and `*`)
    and its `split` separator as written (comments ignored).  Keywords are told from a default's
    strings by reading words outside strings only, past `arg NAME`."""
    key: list[str] = []
    separator = None
    i, words, part = 0, 0, ""
    while i < len(text) and text[i] != "#":
        if text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if part == "from":
                key.append(text[i:j + 1])
            elif part == "split":
                separator = text[i:j + 1]
            i = j + 1
            continue
        if text[i].isalpha() or text[i] == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            words += 1
            if words > 2 and text[i:j] in ("from", "split"):
                part = text[i:j]
            i = j
            continue
        if part == "from" and text[i] == "*":
            key.append("*")
        i += 1
    return key, separator


# -- the printer ---------------------------------------------------------------------------

class _Printer:
    """Walks the tree in source order, emitting comments and blank lines where the source had them."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.comments: list[Comment] = layout.comments
        self.next = 0  # index of the first comment not yet emitted
        self.out: list[str] = []
        self.prev_end = 0  # source line of the last thing emitted

    def module(self, m: A.Module) -> str:
        header = self.layout.next_code_line(0)
        self._item(header, self.layout.end_of(header), f"{m.kind} {m.name}", 0, first=True,
                   blanks=(0, TOP_BLANKS))
        previous: A.Decl | None = None
        for d in m.decls:
            separate = previous is None or _has_block(previous) or _has_block(d)
            self._decl(d, blanks=(1 if separate else 0, TOP_BLANKS))
            previous = d
        self._comments_before(len(self.layout.lines) + 1, 0, False, (0, TOP_BLANKS))
        return "\n".join(self.out) + "\n"

    # -- emitting --------------------------------------------------------------------------
    def _blank_lines(self, line: int, first: bool, blanks: tuple[int, int]) -> None:
        if first:
            return
        found = sum(1 for n in range(self.prev_end + 1, line) if self.layout.is_blank(n))
        self.out.extend([""] * max(blanks[0], min(found, blanks[1])))

    def _comments_before(self, line: int, level: int, first: bool, blanks: tuple[int, int],
                         min_indent: int | None = None) -> tuple[bool, tuple[int, int]]:
        """Emit the pending comments above ``line`` (only those indented at least ``min_indent``)."""
        while self.next < len(self.comments) and self.comments[self.next].line < line:
            comment = self.comments[self.next]
            if min_indent is not None and comment.indent < min_indent:
                break
            self._blank_lines(comment.line, first, blanks)
            self.out.append("    " * level + comment.text)
            self.prev_end = comment.line
            self.next += 1
            first, blanks = False, (0, blanks[1])
        return first, blanks

    def _item(self, start: int, end: int, doc: Doc, level: int, first: bool, blanks: tuple[int, int]) -> None:
        """One logical line of source as ``doc``, with its comments: trailing if it stays one line, else above."""
        first, blanks = self._comments_before(start, level, first, blanks)
        inner = []
        while self.next < len(self.comments) and self.comments[self.next].line <= end:
            inner.append(self.comments[self.next])
            self.next += 1
        lines = render(doc, 4 * level, WIDTH).split("\n")
        lines[0] = "    " * level + lines[0]
        self._blank_lines(start, first, blanks)
        if len(lines) == 1 and len(inner) == 1 and not inner[0].own_line:
            lines[0] += "  " + inner[0].text
        else:
            self.out.extend("    " * level + c.text for c in inner)
        self.out.extend(lines)
        self.prev_end = end

    # -- declarations and statements ----------------------------------------------------------
    def _decl(self, d: A.Decl, blanks: tuple[int, int]) -> None:
        start = d.span.line
        if isinstance(d, (A.FuncDef, A.HookDef)):
            if isinstance(d.body, tuple):
                self._item(start, self.layout.end_of(start), (_header(d), ":"), 0, False, blanks)
                self._block(d.body, 1)
            else:
                end = self.layout.end_of(d.body.span.line)
                self._item(start, end, _expression_body(_header(d), d.body), 0, False, blanks)
            return
        end = self.layout.end_of(start)
        source_line = " ".join(self.layout.lines[start - 1:end])
        self._item(start, end, _decl(d, source_line), 0, False, blanks)

    def _block(self, stmts: tuple, level: int) -> None:
        block_indent = self.layout.indent(stmts[0].span.line)
        for i, s in enumerate(stmts):
            self._stmt(s, level, first=(i == 0))
        after = self.layout.next_code_line(self._end(stmts[-1]))
        self._comments_before(after, level, False, (0, NESTED_BLANKS), min_indent=block_indent)

    def _end(self, s: A.Stmt) -> int:
        """The last source line of a statement, nested blocks included."""
        if isinstance(s, A.If):
            return self._end((s.orelse or s.branches[-1][1])[-1])
        if isinstance(s, (A.For, A.Drain, A.While)):
            return self._end(s.body[-1])
        return self.layout.end_of(s.span.line)

    def _compound(self, line: int, header: Doc, body: tuple, level: int, first: bool,
                  blanks: tuple[int, int] = (0, NESTED_BLANKS)) -> None:
        self._item(line, self.layout.end_of(line), (header, ":"), level, first, blanks)
        self._block(body, level + 1)

    def _stmt(self, s: A.Stmt, level: int, first: bool) -> None:
        line = s.span.line
        if isinstance(s, A.If):
            self._compound(line, ("if ", expr(s.branches[0][0], top=True)), s.branches[0][1], level, first)
            previous = s.branches[0][1]
            for cond, body in s.branches[1:]:
                elif_line = self.layout.start_of(cond.span.line)
                self._compound(elif_line, ("elif ", expr(cond, top=True)), body, level, False, (0, 0))
                previous = body
            if s.orelse:
                else_line = self.layout.next_code_line(self._end(previous[-1]))
                self._compound(else_line, "else", s.orelse, level, False, (0, 0))
        elif isinstance(s, A.For):
            self._compound(line, (f"for {s.var} in ", expr(s.iter, top=True)), s.body, level, first)
        elif isinstance(s, A.Drain):
            while_ = (" while ", expr(s.cond, top=True)) if s.cond is not None else ""
            self._compound(line, (f"drain {s.var} from ", expr(s.queue, top=True), while_), s.body, level, first)
        elif isinstance(s, A.While):
            self._compound(line, ("while ", expr(s.cond, top=True)), s.body, level, first)
        else:
            self._item(line, self.layout.end_of(line), _simple(s), level, first, (0, NESTED_BLANKS))


def _has_block(d: A.Decl) -> bool:
    return isinstance(d, (A.FuncDef, A.HookDef)) and isinstance(d.body, tuple)
