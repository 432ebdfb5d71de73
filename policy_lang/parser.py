"""Text -> syntax tree.  Lark LALR with a Python-style indenter; every node keeps its span.

Syntax errors become one :class:`Diagnostic` (code ``P001``) naming what was
found and what the grammar expected at that line and column.
"""

from __future__ import annotations

import math
import threading
import unicodedata
from functools import lru_cache, partial
from typing import Callable, Iterator

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.indenter import DedentError, Indenter

from . import ast as A
from . import syntax_errors
from .cancel import checkpoint
from .diagnostics import Diagnostic, FumaroleError, Span, numbered_from
from .durations import duration_seconds
from .parser_tables import build_parser

# A parse looks whether it was cancelled every this many tokens (a 1 MiB policy is ~500,000
# tokens and takes seconds; an editor's newer edit should not wait for it).
TOKENS_PER_CHECKPOINT = 1024


class PolicyIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 4

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """The indenter's tokens, with a cancellation checkpoint every TOKENS_PER_CHECKPOINT."""
        for count, token in enumerate(super().process(stream), 1):
            if count % TOKENS_PER_CHECKPOINT == 0:
                checkpoint()
            yield token


_PARSING = threading.Lock()


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return build_parser(PolicyIndenter())


def _span(meta) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(tok: Token) -> Span:
    assert tok.line is not None and tok.column is not None  # the lexer positions every token
    return Span(tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + len(tok))


# The deepest nesting of the syntax tree a policy may have: every later stage (checker, compiler,
# formatter) walks the tree recursively, and this keeps them far from Python's recursion limit.
MAX_NESTING = 200
MAX_INT = 2**63 - 1  # policy integers are Go's int64 where they are written down
# The largest policy file and line (docs/input-safety.md).  A string literal, a name or a number
# never spans lines, so the line cap bounds each of them: the lexer, escapes and the checker's
# hints then work on short texts, and a file is refused before any of them run.
MAX_FILE_CHARS = 1 << 20
MAX_LINE_CHARS = 4096

_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a",
                   "b": "\b", "f": "\f", "v": "\v"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class _LiteralError(Exception):
    """A literal the grammar accepts but that means nothing: reported as a diagnostic at its place."""

    def __init__(self, diagnostic: Callable[[str], Diagnostic]) -> None:
        super().__init__()
        self.diagnostic = diagnostic  # given the file, once the tree's builder is left


def unescape(tok: Token) -> str:
    """The text of a string literal token, its escapes decoded; a bad escape raises _LiteralError."""
    text = str(tok)
    assert tok.line is not None and tok.column is not None  # the lexer positions every token
    out: list[str] = []
    i, end = 1, len(text) - 1
    while i < end:
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        kind = text[i + 1]
        at = Span(tok.line, tok.column + i, tok.line, tok.column + i + 2)
        if kind in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[kind])
            i += 2
        elif kind in _HEX_ESCAPES:
            digits = text[i + 2:i + 2 + _HEX_ESCAPES[kind]]
            if len(digits) != _HEX_ESCAPES[kind] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _LiteralError(partial(syntax_errors.escape_needs_hex_digits, at, kind, _HEX_ESCAPES[kind]))
            out.append(_code_point(int(digits, 16), at))
            i += 2 + len(digits)
        elif kind == "N":
            close = text.find("}", i)
            if not text.startswith("{", i + 2) or close < 0:
                raise _LiteralError(partial(syntax_errors.escape_needs_braced_name, at))
            name = text[i + 3:close]
            try:
                out.append(unicodedata.lookup(name))
            except KeyError:
                raise _LiteralError(partial(syntax_errors.unknown_character_name, at, name)) from None
            i = close + 1
        else:
            raise _LiteralError(partial(syntax_errors.unknown_escape, at, kind))
    return "".join(out)


def _code_point(value: int, at: Span) -> str:
    if value > 0x10FFFF:
        raise _LiteralError(partial(syntax_errors.beyond_unicode, at, value))
    if 0xD800 <= value <= 0xDFFF:
        raise _LiteralError(partial(syntax_errors.surrogate, at, value))
    return chr(value)


def _int_literal(tok: Token) -> int:
    text = str(tok)
    if len(text) > 19 or int(text) > MAX_INT:
        raise _LiteralError(partial(syntax_errors.integer_out_of_range, _tok_span(tok), MAX_INT))
    return int(text)


def _finite(value: float, tok: Token) -> float:
    if not math.isfinite(value):
        raise _LiteralError(partial(syntax_errors.float_out_of_range, _tok_span(tok)))
    return value


def _block(items) -> tuple:
    return tuple(items)


@v_args(meta=True)
class _Build(Transformer):
    """Lark tree -> fumarole.policy_lang.ast nodes."""

    def __init__(self, file: str, source: str) -> None:
        super().__init__()
        self.file, self.source = file, source

    # -- module and declarations ---------------------------------------------
    def start(self, meta, items):
        header, *decls = items
        kind, name = header
        return A.Module(kind, name, tuple(decls), self.file, _span(meta), self.source)

    def header(self, meta, items):
        return str(items[0]), str(items[1])

    def use_decl(self, meta, items):
        return A.Use(str(items[0]), _span(meta))

    def arg_decl(self, meta, items):
        name, typ, default, key, split, reader = items
        key_text, family, path = (key if key else (None, "", ()))
        reading = reader.type if reader is not None else ""
        return A.ArgDecl(str(name), typ, default, key_text, family, _span(meta), tuple(path), split,
                         strict=reading == "STRICT", asserted=reading == "ASSERTED")

    def arg_key(self, meta, items):
        return unescape(items[0]), "", items[1:]

    def arg_prefix(self, meta, items):
        return unescape(items[0]), "prefix", ()

    def arg_containing(self, meta, items):
        return unescape(items[0]), "containing", ()

    def arg_split(self, meta, items):
        return unescape(items[0])

    def arg_field(self, meta, items):
        return unescape(items[0])

    def arg_each(self, meta, items):
        return None

    def state_decl(self, meta, items):
        return A.StateDecl(str(items[1]), items[2], _span(meta), process=items[0] is not None)

    def const_decl(self, meta, items):
        return A.ConstDecl(str(items[0]), items[1], items[2], _span(meta))

    def def_decl(self, meta, items):
        name, params, returns, body = items
        return A.FuncDef(str(name), tuple(params or ()), returns, body, _span(meta), _tok_span(name))

    def hook_decl(self, meta, items):
        (names, names_span), params, body = items
        return A.HookDef(names, tuple(params or ()), body, _span(meta), names_span)

    def hook_names(self, meta, items):
        return tuple(str(n) for n in items), _span(meta)

    def params(self, meta, items):
        return [p for p in items if p is not None]

    def param(self, meta, items):
        return A.Param(str(items[0]), items[1], _span(meta))

    def names(self, meta, items):
        return [(str(t), _tok_span(t)) for t in items if t is not None]

    def block_body(self, meta, items):
        return items[0]

    def expr_body(self, meta, items):
        return items[0]

    def suite(self, meta, items):
        return _block(items)

    def type(self, meta, items):
        name, *rest = items
        optional = bool(rest and isinstance(rest[-1], Token) and rest[-1].type == "OPTIONAL")
        args = tuple(t for t in rest if isinstance(t, A.TypeExpr))
        return A.TypeExpr(str(name), args, optional, _span(meta))

    # -- statements -----------------------------------------------------------
    def simple_stmt(self, meta, items):
        stmt, cond = items
        if cond is None:
            return stmt
        return A.When(cond, stmt, Span(stmt.span.line, stmt.span.col, cond.span.end_line, cond.span.end_col))

    def let_stmt(self, meta, items):
        return A.Let(str(items[0]), items[1], items[2], _span(meta))

    def assign_stmt(self, meta, items):
        return A.Assign(items[0], items[1], _span(meta))

    def aug_stmt(self, meta, items):
        return A.AugAssign(items[0], str(items[1])[0], items[2], _span(meta))

    def name_target(self, meta, items):
        return A.Name(str(items[0]), _span(meta))

    def index_target(self, meta, items):
        return A.Index(items[0], items[1], _span(meta))

    def attr_target(self, meta, items):
        return A.Attr(items[0], str(items[1]), _span(meta), _tok_span(items[1]))

    def return_stmt(self, meta, items):
        return A.Return(items[0], _span(meta))

    def break_stmt(self, meta, items):
        return A.Break(_span(meta))

    def continue_stmt(self, meta, items):
        return A.Continue(_span(meta))

    def pass_stmt(self, meta, items):
        return A.Pass(_span(meta))

    def victim_stmt(self, meta, items):
        return A.Victim(items[0], _span(meta))

    def permit_stmt(self, meta, items):
        return A.Vote("permit", _span(meta))

    def reject_stmt(self, meta, items):
        return A.Vote("reject", _span(meta))

    def abstain_stmt(self, meta, items):
        return A.Vote("abstain", _span(meta))

    def fail_stmt(self, meta, items):
        return A.Fail(str(items[0]) if items[0] else "", items[1], _span(meta))

    def order_stmt(self, meta, items):
        return A.OrderBy(tuple(items), _span(meta))

    def order_key(self, meta, items):
        return items[0], bool(items[1] and str(items[1]) == "desc")

    def expr_stmt(self, meta, items):
        return A.ExprStmt(items[0], _span(meta))

    def if_stmt(self, meta, items):
        cond, body, *rest = items
        branches = [(cond, body)]
        orelse: tuple = ()
        for item in rest:
            if item is None:
                continue
            if isinstance(item, tuple) and len(item) == 2 and item[0] == "else":
                orelse = item[1]
            else:
                branches.append(item)
        return A.If(tuple(branches), orelse, _span(meta))

    def elif_clause(self, meta, items):
        return items[0], items[1]

    def else_clause(self, meta, items):
        return "else", items[0]

    def for_stmt(self, meta, items):
        return A.For(str(items[0]), items[1], items[2], _span(meta), _tok_span(items[0]))

    def drain_stmt(self, meta, items):
        return A.Drain(str(items[0]), items[1], items[2], items[3], _span(meta), _tok_span(items[0]))

    def while_stmt(self, meta, items):
        return A.While(items[0], items[1], _span(meta))

    # -- expressions ----------------------------------------------------------
    def lambda_params(self, meta, items):
        return items

    def lambda_param(self, meta, items):
        return str(items[0]), items[1], _span(meta)

    def conditional(self, meta, items):
        return A.Conditional(items[1], items[0], items[2], _span(meta))

    def or_op(self, meta, items):
        return A.Binary("or", items[0], items[1], _span(meta))

    def and_op(self, meta, items):
        return A.Binary("and", items[0], items[1], _span(meta))

    def not_op(self, meta, items):
        return A.Unary("not", items[0], _span(meta))

    def compare(self, meta, items):
        return A.Binary(str(items[1]), items[0], items[2], _span(meta))

    def in_op(self, meta, items):
        return A.Binary("in", items[0], items[1], _span(meta))

    def not_in_op(self, meta, items):
        return A.Binary("not in", items[0], items[1], _span(meta))

    def binop(self, meta, items):
        return A.Binary(str(items[1]), items[0], items[2], _span(meta))

    def neg(self, meta, items):
        return A.Unary("-", items[0], _span(meta))

    def attr(self, meta, items):
        return A.Attr(items[0], str(items[1]), _span(meta), _tok_span(items[1]))

    def call(self, meta, items):
        func, args = items
        positional, keywords = [], []
        for arg in args or ():
            if isinstance(arg, tuple):
                keywords.append(arg)
            else:
                positional.append(arg)
        return A.Call(func, tuple(positional), tuple(keywords), _span(meta))

    def args(self, meta, items):
        return [a for a in items if a is not None]

    def kwarg(self, meta, items):
        return str(items[0]), items[1], _tok_span(items[0])

    def index(self, meta, items):
        return A.Index(items[0], items[1], _span(meta))

    def name(self, meta, items):
        return A.Name(str(items[0]), _span(meta))

    def int_lit(self, meta, items):
        return A.Literal("int", _int_literal(items[0]), _span(meta), str(items[0]))

    def float_lit(self, meta, items):
        return A.Literal("float", _finite(float(items[0]), items[0]), _span(meta), str(items[0]))

    def duration_lit(self, meta, items):
        seconds = _finite(duration_seconds(str(items[0])), items[0])
        return A.Literal("duration", seconds, _span(meta), str(items[0]))

    def string_lit(self, meta, items):
        return A.Literal("string", unescape(items[0]), _span(meta), str(items[0]))

    def true_lit(self, meta, items):
        return A.Literal("bool", True, _span(meta), "true")

    def false_lit(self, meta, items):
        return A.Literal("bool", False, _span(meta), "false")

    def none_lit(self, meta, items):
        return A.Literal("none", None, _span(meta), "none")

    def list_lit(self, meta, items):
        return A.ListLit(tuple(i for i in items if i is not None), _span(meta))

    def list_comp(self, meta, items):
        elem, var, it, cond = items
        return A.ListComp(elem, str(var), it, cond, _span(meta))

    def map_lit(self, meta, items):
        return A.MapLit(tuple(i for i in items if i is not None), _span(meta))

    def entry(self, meta, items):
        return items[0], items[1]

    def map_comp(self, meta, items):
        key, value, var, it, cond = items
        return A.MapComp(key, value, str(var), it, cond, _span(meta))

    def __default__(self, data, children, meta):
        if data == "lambda":
            params, body = children
            out = []
            for name, typ, span in params or ():
                out.append((name, typ, span))
            return A.Lambda(tuple(out), body, _span(meta))
        return super().__default__(data, children, meta)


_TOKEN_NAMES = {
    "_NL": "end of line", "_INDENT": "indented block", "_DEDENT": "end of block", "$END": "end of file",
    "NAME": "name", "INT": "integer", "FLOAT": "number", "STRING": "string", "DURATION": "duration",
    "COLON": "':'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'",
    "RBRACE": "'}'", "COMMA": "','", "EQUAL": "'='", "DOT": "'.'", "COMPOP": "comparison",
}


def _describe_expected(expected: set[str]) -> str:
    names = sorted({_TOKEN_NAMES.get(e, e.lower().strip("_") if e.isupper() else e) for e in expected})
    if len(names) > 8:
        names = names[:8] + ["..."]
    return ", ".join(names)


def _describe_token(tok: Token) -> str:
    if tok.type == "_NL":
        return "end of line"
    if tok.type in ("_INDENT", "_DEDENT"):
        return "change of indentation"
    if tok.type == "$END":
        return "end of file"
    return repr(str(tok))


def parse(source: str, file: str = "<policy>") -> A.Module:
    """Parse one policy file; raises FumaroleError with a P001 diagnostic on a syntax error."""
    text = source if source.endswith("\n") else source + "\n"
    too_large = _size_problem(text, file)
    if too_large is not None:
        raise FumaroleError([too_large], {file: source})
    try:
        with _PARSING:  # the indenter keeps per-parse state: one parse at a time (serve, lsp threads)
            tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise FumaroleError([_syntax_diagnostic(exc, file, text)], {file: source}) from None
    except DedentError as exc:
        line = _dedent_line(text)
        raise FumaroleError([syntax_errors.inconsistent_indentation(file, line, exc)], {file: source}) from None
    reserved, deep = _survey(tree)
    diagnostics = [syntax_errors.reserved_name(file, _tok_span(tok), str(tok)) for tok in reserved]
    if deep is not None:
        diagnostics.append(syntax_errors.nested_too_deeply(file, deep, MAX_NESTING))
    if diagnostics:
        raise FumaroleError(diagnostics, {file: source})
    try:
        with numbered_from(1):  # bottom up: the module node, made last, holds the largest number
            return _Build(file, source).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, _LiteralError):
            raise FumaroleError([exc.orig_exc.diagnostic(file)], {file: source}) from None
        raise


def _size_problem(text: str, file: str) -> Diagnostic | None:
    """A P007 when the file or one of its lines is longer than the caps, else None."""
    if len(text) > MAX_FILE_CHARS:
        return syntax_errors.file_too_long(file, len(text), MAX_FILE_CHARS)
    start, line = 0, 1
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > MAX_LINE_CHARS:
            return syntax_errors.line_too_long(file, line, end - start, MAX_LINE_CHARS)
        start, line = end + 1, line + 1
    return None


def _survey(tree: Tree) -> tuple[list[Token], Span | None]:
    """One iterative walk of the parse tree (any depth): the names starting with two underscores
    (Python's own, ``__class__``, ``__globals__``..., are never policy names) and the position of
    the first subtree nested deeper than MAX_NESTING, or None."""
    reserved: list[Token] = []
    deep: Span | None = None
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING and deep is None:
            deep = Span(node.meta.line, node.meta.column) if not node.meta.empty else Span(1, 1)
        for child in node.children:
            if isinstance(child, Tree):
                stack.append((child, depth + 1))
            elif isinstance(child, Token) and child.type == "NAME" and child.startswith("__"):
                reserved.append(child)
    reserved.sort(key=lambda tok: (tok.line, tok.column))
    return reserved, deep


def _dedent_line(text: str) -> int:
    """Best guess at the line an indentation error is on: the first dedent to an unseen level."""
    levels = [0]
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if indent > levels[-1]:
            levels.append(indent)
        else:
            while indent < levels[-1]:
                levels.pop()
            if indent != levels[-1]:
                return number
    return 1


def _syntax_diagnostic(exc: UnexpectedInput, file: str, text: str) -> Diagnostic:
    if isinstance(exc, UnexpectedCharacters):
        assert exc.pos_in_stream is not None  # the lexer says where it stopped
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        return syntax_errors.unexpected_character(file, Span(exc.line, exc.column), char)
    if isinstance(exc, UnexpectedEOF):
        lines = text.rstrip("\n").splitlines() or [""]
        return syntax_errors.unexpected_end_of_file(file, Span(len(lines), len(lines[-1]) + 1),
                                                    _describe_expected(set(exc.expected)))
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    line = tok.line if tok.line is not None else 1
    col = tok.column if tok.column is not None else 1
    if tok.type == "_INDENT" and tok.line is not None:
        line, col = _indented_line(text, tok.line)
        return syntax_errors.unexpected_indentation(file, Span(line, col))
    if tok.type in ("_INDENT", "_DEDENT", "$END") or tok.line is None:
        line, col = _previous_token_end(text, getattr(exc, "state", None), exc)
    width = max(1, len(str(tok))) if tok.type not in ("_NL", "_INDENT", "_DEDENT", "$END") else 1
    return syntax_errors.unexpected_token(file, Span(line, col, line, col + width), _describe_token(tok),
                                          _describe_expected(set(exc.expected)))


def _indented_line(text: str, after: int) -> tuple[int, int]:
    """The first non-blank, non-comment line after line ``after``, and its first column."""
    lines = text.splitlines()
    for number in range(after + 1, len(lines) + 1):
        content = lines[number - 1]
        stripped = content.lstrip(" \t")
        if stripped and not stripped.startswith("#"):
            return number, len(content) - len(stripped) + 1
    return after, 1


def _previous_token_end(text: str, state, exc: UnexpectedToken) -> tuple[int, int]:
    """Position for errors on synthetic tokens: the end of the last non-blank line before them."""
    tok = exc.token
    limit = tok.line if tok.line else len(text.splitlines())
    lines = text.splitlines()
    for number in range(min(limit, len(lines)), 0, -1):
        content = lines[number - 1].split("#", 1)[0].rstrip()
        if content:
            return number, len(content) + 1
    return 1, 1
