"""Names, types, hook signatures and arguments: everything knowable before a session runs.

The checker walks one module against an :class:`~fumarole.policy_lang.env.Environment`,
reports every problem it finds (it never stops at the first) and records, for
the compiler, the type of every expression and what every name refers to.

Optional types (``Job?``) must be narrowed before use: ``x != none`` in an
``if``, an ``and`` chain, a conditional expression or a guard such as
``continue when x == none`` makes ``x`` non-optional where it must be.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterable, Iterator, TypeVar

from . import ast as A
from . import declaration_errors, statement_errors, type_errors
from .cancel import checkpoint
from .diagnostics import Diagnostic, Span, did_you_mean
from .env import AttrInfo, Environment, FuncSig, HookSig, Param, builtin_type_arity
from .timestamps import LAYOUT as RFC3339_LAYOUT, rfc3339_seconds
from .types import (
    BOOL, FLOAT, INT, NONE, NUMERIC, STRING, UNKNOWN, VOID, Type, assignable, fn_of, join, list_of,
    map_of, substitute, unify,
)

ARG_TYPES = ("int", "float", "bool", "string", "duration")
_EXITING_VOTES = ("permit", "reject", "abstain")
# The functions every policy can call, typed by the checker itself (not in the hook catalogue).
BUILTIN_FUNCTIONS = ("len", "max", "min", "range", "str", "int", "float", "sum")
_PYTHON_RESERVED = frozenset({"lambda", "class", "def", "del", "global", "import", "is", "nonlocal",
                              "raise", "try", "with", "yield", "assert", "async", "await", "except",
                              "finally", "from", "as", "pass", "None", "True", "False", "elif", "else",
                              "for", "if", "in", "not", "or", "and", "return", "while", "break", "continue"})


# Expressions checked between two looks at whether the check was cancelled (policy_lang/cancel.py).
CHECKPOINT_EVERY = 256

# The did-you-mean hints one module gets; the errors after them come without one.
MAX_HINTS = 20

# What a `process state` may hold: JSON scalars, so the state can be shown and restated.
# The text formats a schema function's `literal` may name: what the text must be, a test of it, an example.
_LITERAL_FORMATS = {"rfc3339": ("an RFC 3339 time", lambda text: rfc3339_seconds(text) is not None, RFC3339_LAYOUT)}
PROCESS_STATE_TYPES = frozenset({"int", "float", "duration", "string", "bool"})


@dataclass(frozen=True)
class Ref:
    """What a name refers to: kind is local/arg/state/const/def/global/dispatch/function/builtin/hookparam."""

    kind: str
    py: str
    type: Type
    sig: FuncSig | None = None
    module: str = ""


@dataclass(frozen=True)
class CallInfo:
    """How to compile a call: kind is def/dispatch/function/method/builtin/container/value."""

    kind: str
    py: str = ""
    sig: FuncSig | None = None
    name: str = ""


@dataclass
class HookInfo:
    decl: A.HookDef
    name: str
    sig: HookSig
    key_form: bool  # order hooks written as `order by`


_Entry = TypeVar("_Entry")  # what a side table holds per node

@dataclass
class CheckedModule:
    module: A.Module
    diagnostics: list[Diagnostic] = field(default_factory=list)
    types: dict[int, Type] = field(default_factory=dict)
    refs: dict[int, Ref] = field(default_factory=dict)
    attrs: dict[int, AttrInfo] = field(default_factory=dict)
    calls: dict[int, CallInfo] = field(default_factory=dict)
    pynames: dict[int, str] = field(default_factory=dict)
    hooks: list[HookInfo] = field(default_factory=list)
    defs: dict[str, A.FuncDef] = field(default_factory=dict)
    def_types: dict[str, Type] = field(default_factory=dict)
    args: dict[str, A.ArgDecl] = field(default_factory=dict)
    states: dict[str, Type] = field(default_factory=dict)
    process_states: tuple[str, ...] = ()  # the states declared `process state`, in order
    consts: dict[str, A.ConstDecl] = field(default_factory=dict)
    uses: list["CheckedModule"] = field(default_factory=list)
    assigned_states: dict[int, set[str]] = field(default_factory=dict)  # function node (nid) -> states assigned
    arg_types: dict[str, Type] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    # The side tables as later stages read them: keyed by the nodes' ``nid``, and a node the
    # checker left without an entry is a fumarole bug named with its position, never a default.
    def type_of(self, node: A.Node) -> Type:
        return self._entry(self.types, node, "type")

    def ref_of(self, node: A.Name) -> Ref:
        return self._entry(self.refs, node, "name resolution")

    def attr_of(self, node: A.Node) -> AttrInfo:
        return self._entry(self.attrs, node, "attribute")

    def call_of(self, node: A.Call) -> CallInfo:
        return self._entry(self.calls, node, "call")

    def pyname_of(self, declaring: A.Node | Span) -> str:
        """The Python name of what ``declaring`` declares (a local, a parameter: a span stands
        for a hook's or a lambda's parameter)."""
        return self._entry(self.pynames, declaring, "Python name")

    def _entry(self, table: dict[int, _Entry], node: A.Node | Span, what: str) -> _Entry:
        found = table.get(node.nid)
        if found is None:
            span = node if isinstance(node, Span) else node.span
            raise CheckerContractError(f"{self.module.file}:{span.line}:{span.col}: the checker left no {what} "
                                       f"for this {type(node).__name__}")
        return found


class CheckerContractError(AssertionError):
    """A later stage asked about a node the checker has no entry for: a fumarole bug (code is
    generated only from a module that checked, where every node it asks about has one)."""


def _literal_default(e: A.Expr) -> bool:
    """A default the bundle reads without evaluating it (runtime/bundles/bundle.py): a literal, a
    negated number, or a list or map of those.  Anything else (a constant's name, ``not true``)
    would be read there as something it is not."""
    if isinstance(e, A.Literal):
        return True
    if isinstance(e, A.Unary):
        return e.op == "-" and isinstance(e.operand, A.Literal) and e.operand.kind in ("int", "float", "duration")
    if isinstance(e, A.ListLit):
        return all(_literal_default(item) for item in e.items)
    if isinstance(e, A.MapLit):
        return all(_literal_default(k) and _literal_default(v) for k, v in e.entries)
    return False


def _plain_arg_type(t: A.TypeExpr) -> bool:
    """A type one YAML value converts to: a scalar argument type or list[string]."""
    return (t.name in ARG_TYPES and not t.args) or (t.name == "list" and len(t.args) == 1 and t.args[0].name == "string")


def _plain_map_type(t: A.TypeExpr) -> bool:
    """map[string, T] of a plain argument type: a YAML mapping of such values."""
    return t.name == "map" and len(t.args) == 2 and t.args[0].name == "string" and _plain_arg_type(t.args[1])


class _Scope:
    """A lexical block: declared locals and narrowed paths."""

    def __init__(self, parent: "_Scope | None" = None) -> None:
        self.parent = parent
        self.vars: dict[str, tuple[Type, str]] = {}
        self.narrowed: dict[str, Type] = {}

    def lookup(self, name: str) -> tuple[Type, str] | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None

    def narrowed_type(self, path: str) -> Type | None:
        scope: _Scope | None = self
        while scope is not None:
            if path in scope.narrowed:
                return scope.narrowed[path]
            if path.split(".", 1)[0] in scope.vars:
                return None
            scope = scope.parent
        return None


@dataclass
class _Context:
    """Where we are: inside which hook / def, and what the body may do."""

    hook: HookSig | None = None
    returns: Type | None = None  # for defs
    in_loop: int = 0
    func_id: int = 0


def attribute_path(expr: A.Expr) -> str | None:
    """``a.b.c`` for a name or a chain of attributes of one (narrowing keys on it), else None."""
    if isinstance(expr, A.Name):
        return expr.id
    if isinstance(expr, A.Attr):
        base = attribute_path(expr.obj)
        return f"{base}.{expr.name}" if base else None
    return None


class Checker:
    def __init__(self, env: Environment, module: A.Module, modules: dict[str, CheckedModule] | None = None) -> None:
        self.env = env
        self.module = module
        self.modules = modules or {}
        self.out = CheckedModule(module)
        self.counter: dict[str, int] = {}
        self.call_graph: dict[str, set[str]] = {}
        self.current_def: str | None = None
        self.current_const: tuple[str, int] | None = None  # the constant whose value is checked, its place
        self.declared_at: dict[str, int] = {}  # this module's constants and definitions -> place in the file
        self.reaches: dict[str, dict[str, Span]] = {}  # constant or def -> module names its body uses (first use)
        self.ctx = _Context()
        self.used_names: set[str] = set()
        self.hints_left = MAX_HINTS
        self.until_checkpoint = CHECKPOINT_EVERY

    # -- diagnostics --------------------------------------------------------------
    @property
    def file(self) -> str:
        return self.module.file

    def report(self, diagnostic: Diagnostic) -> None:
        """Record a problem, made by its constructor (declaration_errors, statement_errors,
        type_errors) from the facts found here."""
        self.out.diagnostics.append(diagnostic)

    def _hint(self, name: str, candidates: Iterable[str]) -> str | None:
        """A did-you-mean hint while the module's hint budget lasts (MAX_HINTS): a policy with
        thousands of unknown names is checked in time proportional to its size."""
        if self.hints_left <= 0:
            return None
        self.hints_left -= 1
        return did_you_mean(name, candidates)

    # -- entry point ----------------------------------------------------------------
    def check(self) -> CheckedModule:
        m = self.module
        if m.kind not in ("plugin", "action", "module"):
            self.report(declaration_errors.unknown_file_kind(self.file, m.span, m.kind))
        self._collect()
        for place, decl in enumerate(m.decls):
            if isinstance(decl, A.ConstDecl):
                self.current_const = (decl.name, place)
                self._check_const(decl)
                self.current_const = None
        for decl in m.decls:
            if isinstance(decl, A.FuncDef):
                self._check_def(decl)
            elif isinstance(decl, A.HookDef):
                self._check_hook(decl)
        self._check_recursion()
        self._check_evaluation_order()
        self._check_unused()
        return self.out

    # -- declarations ---------------------------------------------------------------
    def _declare_top(self, name: str, span: Span, seen: dict[str, Span]) -> bool:
        if name in seen:
            self.report(declaration_errors.already_defined(self.file, span, name, seen[name].line))
            return False
        seen[name] = span
        return True

    def _collect(self) -> None:
        seen: dict[str, Span] = {}
        for place, decl in enumerate(self.module.decls):
            if isinstance(decl, A.Use):
                used = self.modules.get(decl.name)
                if used is None:
                    self.report(declaration_errors.unknown_module(self.file, decl.span, decl.name,
                                                        self._hint(decl.name, self.modules)))
                else:
                    self.out.uses.append(used)
            elif isinstance(decl, A.ArgDecl):
                if self.module.kind == "module":
                    self.report(declaration_errors.module_declares(self.file, decl.span, "arguments"))
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.args[decl.name] = decl
                    self.out.arg_types[decl.name] = self._check_arg(decl)
            elif isinstance(decl, A.StateDecl):
                if self.module.kind == "module":
                    self.report(declaration_errors.module_declares(self.file, decl.span, "state"))
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.states[decl.name] = self.resolve_type(decl.type)
                    if decl.process:
                        self._check_process_state(decl, self.out.states[decl.name])
            elif isinstance(decl, A.ConstDecl):
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.consts[decl.name] = decl
                    self.declared_at[decl.name] = place
            elif isinstance(decl, A.FuncDef):
                if self._declare_top(decl.name, decl.name_span, seen):
                    self.out.defs[decl.name] = decl
                    self.declared_at[decl.name] = place
                    params = [self.resolve_type(p.type) for p in decl.params]
                    self.out.def_types[decl.name] = fn_of(params, self.resolve_type(decl.returns))
        for name, span in seen.items():
            if name in self.env.dispatch or name in self.env.functions or name in self.env.globals:
                self.report(declaration_errors.session_name_redefined(self.file, span, name))
        for used in self.out.uses:
            for name in list(used.defs) + list(used.consts):
                if name in seen:
                    self.report(declaration_errors.defined_by_used_module(self.file, seen[name], name,
                                                                          used.module.name))

    def _check_process_state(self, decl: A.StateDecl, t: Type) -> None:
        """Process state outlives the session: only a plugin's, and only values a status page can show."""
        if self.module.kind != "plugin":
            self.report(declaration_errors.process_state_outside_plugin(self.file, decl.span, self.module.kind))
        elif t.name not in PROCESS_STATE_TYPES:
            self.report(declaration_errors.process_state_type(self.file, decl.type.span, decl.name, t))
        else:
            self.out.process_states += (decl.name,)

    def _check_arg(self, decl: A.ArgDecl) -> Type:
        t = decl.type
        declared = self.resolve_type(t)
        if decl.prefix:
            ok = t.name == "map" and len(t.args) == 2 and t.args[0].name == "string" and t.args[1].name in ARG_TYPES
            if not ok:
                self.report(declaration_errors.prefix_argument_type(self.file, t.span, ARG_TYPES))
        elif None in decl.path:
            ok = decl.path.count(None) == 1 and t.name == "map" and len(t.args) == 2 \
                and t.args[0].name == "string" and (_plain_arg_type(t.args[1]) or _plain_map_type(t.args[1]))
            if not ok:
                self.report(declaration_errors.wildcard_argument_type(self.file, t.span, ARG_TYPES))
        elif not _plain_arg_type(t) and not _plain_map_type(t):
            self.report(declaration_errors.argument_type(self.file, t.span, ARG_TYPES, t.name))
        if t.optional:
            self.report(declaration_errors.optional_argument(self.file, t.span))
        if decl.default is not None:
            if not _literal_default(decl.default):
                self.report(declaration_errors.default_not_literal(self.file, decl.default.span))
            else:
                got = self.expr(decl.default, _Scope(), declared)
                self.expect(got, declared, decl.default.span, "argument default", decl.default)
                if t.name == "duration" and isinstance(decl.default, A.Literal) and decl.default.kind != "duration":
                    self.report(declaration_errors.duration_default_without_unit(self.file, decl.default.span))
        elif decl.prefix:
            pass
        return declared

    def _check_const(self, decl: A.ConstDecl) -> None:
        declared = self.resolve_type(decl.type) if decl.type else None
        got = self.expr(decl.value, _Scope(), declared)
        if declared is not None:
            self.expect(got, declared, decl.value.span, f"'{decl.name}'", decl.value)
            got = declared
        self.out.types[decl.nid] = got

    # -- types ----------------------------------------------------------------------
    def resolve_type(self, t: A.TypeExpr) -> Type:
        name = t.name
        if name == "duration":
            name = "float"
        args = tuple(self.resolve_type(a) for a in t.args)
        arity = builtin_type_arity(name)
        info = self.env.types.get(name)
        if arity is None and info is None and name not in self.env.enums:
            known = list(self.env.types) + list(self.env.enums) + ["bool", "int", "float", "string",
                                                                    "duration", "list", "map"]
            self.report(declaration_errors.unknown_type(self.file, t.span, t.name, self._hint(t.name, known)))
            return UNKNOWN
        expected = arity if arity is not None else (len(info.params) if info else 0)
        if name == "fn":
            if not args:
                self.report(declaration_errors.fn_type_without_result(self.file, t.span))
                return UNKNOWN
        elif len(args) != expected:
            self.report(declaration_errors.type_arity(self.file, t.span, t.name, expected, len(args)))
            return UNKNOWN
        return Type(name, args, t.optional)

    def expect(self, got: Type, want: Type, span: Span, what: str, expr: A.Expr | None = None) -> bool:
        if got.name == "unknown" or want.name == "unknown":
            return True
        if expr is not None and isinstance(expr, A.Literal) and expr.kind == "string" and want.name in self.env.enums:
            return self._check_enum_literal(expr, want.name)
        if assignable(got, want, self.env.enum_names) or (got.name == "float" and want.name == "duration"):
            return True
        if got.optional and assignable(got.required, want, self.env.enum_names):
            self.report(type_errors.may_be_none(self.file, span, what, got, want))
        else:
            self.report(type_errors.mismatch(self.file, span, what, got, want))
        return False

    def _check_enum_literal(self, lit: A.Literal, enum: str) -> bool:
        values = self.env.enums[enum]
        if lit.value not in values:
            self.report(type_errors.not_an_enum_value(self.file, lit.span, lit.value, enum, values,
                                                        self._hint(str(lit.value), values)))
            return False
        return True

    # -- defs and hooks -----------------------------------------------------------------
    def _local_name(self, name: str) -> str:
        n = self.counter.get(name, 0)
        self.counter[name] = n + 1
        return f"v_{name}" if n == 0 else f"v_{name}_{n}"

    def _declare_local(self, scope: _Scope, name: str, t: Type, span: Span, node_id: int) -> str:
        if name in scope.vars:
            self.report(declaration_errors.declared_twice_in_block(self.file, span, name))
        elif scope.lookup(name) is not None or self._module_level(name):
            self.report(declaration_errors.shadows(self.file, span, name))
        py = self._local_name(name)
        scope.vars[name] = (t, py)
        self.out.pynames[node_id] = py
        return py

    def _check_def(self, decl: A.FuncDef) -> None:
        fn_type = self.out.def_types[decl.name]
        scope = _Scope()
        for param, t in zip(decl.params, fn_type.args[:-1]):
            self._declare_local(scope, param.name, t, param.span, param.nid)
        returns = fn_type.args[-1]
        self.current_def = decl.name
        self.call_graph.setdefault(decl.name, set())
        self.ctx = _Context(hook=None, returns=returns, func_id=decl.nid)
        if isinstance(decl.body, tuple):
            self.block(decl.body, scope)
            if returns.name != "void" and not self._always_exits(decl.body, returns_only=True):
                self.report(statement_errors.definition_may_not_return(self.file, decl.name_span, decl.name, returns))
        else:
            got = self.expr(decl.body, scope, returns)
            self.expect(got, returns, decl.body.span, f"the result of '{decl.name}'", decl.body)
        self.current_def = None

    def _check_hook(self, decl: A.HookDef) -> None:
        kind = self.module.kind
        sigs: list[HookSig] = []
        for name in decl.names:
            if kind == "action":
                if name != "execute":
                    self.report(declaration_errors.action_hook(self.file, decl.name_span, name))
                    continue
                sigs.append(HookSig("execute", (), "event", None))
            elif kind == "module":
                self.report(declaration_errors.module_hook(self.file, decl.name_span))
            else:
                sig = self.env.hooks.get(name)
                if sig is None:
                    self.report(declaration_errors.unknown_hook(self.file, decl.name_span, name,
                                                      self._hint(name, self.env.hooks)))
                    continue
                sigs.append(sig)
        if not sigs:
            return
        first = sigs[0]
        for other in sigs[1:]:
            if other.params != first.params or other.kind != first.kind:
                self.report(declaration_errors.hooks_cannot_share_a_body(self.file, decl.name_span, first.name,
                                                                         other.name))
                return
        key_form = first.kind == "order" and len(decl.params) == 1 and len(first.params) == 2
        if not key_form and len(decl.params) != len(first.params):
            self.report(declaration_errors.hook_parameter_count(self.file, decl.name_span, first.name, first.params,
                                                      len(decl.params)))
            return
        scope = _Scope()
        for (pname, pspan), ptype in zip(decl.params, first.params):
            self._declare_local(scope, pname, ptype, pspan, pspan.nid)
        for sig in sigs:
            self.out.hooks.append(HookInfo(decl, sig.name, sig, key_form))
        self.ctx = _Context(hook=first, func_id=decl.nid)
        self.current_def = None
        if key_form:
            self._check_key_order(decl, scope)
            return
        if isinstance(decl.body, tuple):
            self.block(decl.body, scope)
            if first.kind in ("bool", "score", "scores", "hyper-scores", "gradients") or (first.kind == "order"):
                if not self._always_exits(decl.body, returns_only=True):
                    self.report(statement_errors.hook_may_not_return(self.file, decl.name_span, first.name,
                                                               self._hook_result(first)))
        else:
            want = self._hook_result(first)
            if want is None:
                self.report(statement_errors.hook_needs_block(self.file, decl.body.span, first.name, first.kind))
                return
            got = self.expr(decl.body, scope, want)
            self.expect(got, want, decl.body.span, f"the result of hook '{first.name}'", decl.body)

    def _hook_result(self, sig: HookSig) -> Type | None:
        return {"bool": BOOL, "score": FLOAT.maybe(), "order": INT,
                "scores": map_of(Type("Node"), FLOAT).maybe(),
                "hyper-scores": map_of(Type("HyperNode"), FLOAT).maybe(),
                "gradients": list_of(list_of(Type("HyperNode"))),
                "victims": list_of(Type("Task"))}.get(sig.kind)

    def _check_key_order(self, decl: A.HookDef, scope: _Scope) -> None:
        body = decl.body
        if not (isinstance(body, tuple) and len(body) == 1 and isinstance(body[0], A.OrderBy)):
            self.report(statement_errors.key_order_body(self.file, decl.name_span))
            return
        for key, _desc in body[0].keys:
            t = self.expr(key, scope)
            if t.name not in ("int", "float", "bool", "string", "unknown") or t.optional:
                self.report(type_errors.order_key_type(self.file, key.span, t))

    # -- statements ---------------------------------------------------------------------
    def block(self, stmts: Iterable[A.Stmt], scope: _Scope) -> None:
        inner = _Scope(scope)
        for stmt in stmts:
            self.stmt(stmt, inner)

    def _always_exits(self, stmts: tuple, returns_only: bool = False) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, A.Return):
            return True
        if returns_only:
            if isinstance(last, A.If):
                return bool(last.orelse) and all(self._always_exits(b, True) for _, b in last.branches) \
                    and self._always_exits(last.orelse, True)
            return False
        if isinstance(last, (A.Break, A.Continue)):
            return True
        if isinstance(last, A.Vote):
            return True
        if isinstance(last, A.Fail) and last.code != "unschedulable":
            return True
        if isinstance(last, A.If):
            return bool(last.orelse) and all(self._always_exits(b) for _, b in last.branches) \
                and self._always_exits(last.orelse)
        return False

    def _exits(self, stmt: A.Stmt) -> bool:
        return self._always_exits((stmt,))

    def stmt(self, stmt: A.Stmt, scope: _Scope) -> None:
        method = getattr(self, "_stmt_" + type(stmt).__name__)
        method(stmt, scope)

    def _stmt_When(self, stmt: A.When, scope: _Scope) -> None:
        if isinstance(stmt.stmt, A.Let):
            self.report(statement_errors.guarded_let(self.file, stmt.span))
        self.cond(stmt.cond, scope)
        guarded = _Scope(scope)
        guarded.narrowed.update(self.narrowing(stmt.cond, True, scope))
        self.stmt(stmt.stmt, guarded)
        if self._exits(stmt.stmt):
            scope.narrowed.update(self.narrowing(stmt.cond, False, scope))

    def _stmt_Let(self, stmt: A.Let, scope: _Scope) -> None:
        declared = self.resolve_type(stmt.type) if stmt.type else None
        got = self.expr(stmt.value, scope, declared)
        if declared is not None:
            self.expect(got, declared, stmt.value.span, f"'{stmt.name}'", stmt.value)
            t = declared
        else:
            t = got
            if self._has_unknown(t) and isinstance(stmt.value, (A.ListLit, A.MapLit)):
                self.report(type_errors.empty_literal_type(self.file, stmt.span, stmt.name))
            elif t.name == "void":
                self.report(type_errors.holds_void(self.file, stmt.value.span, stmt.name))
            elif t.name == "none":
                self.report(type_errors.none_literal_type(self.file, stmt.span, stmt.name))
        self._declare_local(scope, stmt.name, t, stmt.span, stmt.nid)

    @staticmethod
    def _has_unknown(t: Type) -> bool:
        return t.name == "unknown" and not t.args or any(a.name == "unknown" for a in t.args)

    def _target(self, target: A.Expr, scope: _Scope) -> Type:
        if isinstance(target, A.Name):
            found = scope.lookup(target.id)
            if found is not None:
                t, py = found
                self.out.refs[target.nid] = Ref("local", py, t)
                self._invalidate(scope, target.id)
                return t
            if target.id in self.out.states:
                t = self.out.states[target.id]
                self.out.refs[target.nid] = Ref("state", "s_" + target.id, t)
                self.out.assigned_states.setdefault(self.ctx.func_id, set()).add(target.id)
                self._invalidate(scope, target.id)
                return t
            if target.id in self.out.args or target.id in self.out.consts:
                self.report(statement_errors.assign_fixed(self.file, target.span, target.id))
                return UNKNOWN
            self.report(statement_errors.assign_undeclared(self.file, target.span, target.id))
            return UNKNOWN
        if isinstance(target, A.Index):
            container = self.expr(target.obj, scope)
            if container.name == "map":
                key_t, value_t = container.args
                got = self.expr(target.key, scope, key_t)
                self.expect(got, key_t, target.key.span, "the key", target.key)
                return value_t
            if container.name == "list":
                self.expect(self.expr(target.key, scope), INT, target.key.span, "a list index")
                return container.args[0]
            if container.name != "unknown":
                self.report(type_errors.assign_into(self.file, target.span, container))
            return UNKNOWN
        if isinstance(target, A.Attr):
            obj_t = self.expr(target.obj, scope)
            info = self._attr_info(obj_t, target)
            if info is None:
                return UNKNOWN
            if not info.writable:
                self.report(statement_errors.read_only_attribute(self.file, target.name_span, target.name, obj_t.name))
            self.out.attrs[target.nid] = info
            return info.type
        self.report(statement_errors.not_assignable(self.file, target.span))
        return UNKNOWN

    @staticmethod
    def _invalidate(scope: _Scope, root: str) -> None:
        s: _Scope | None = scope
        while s is not None:
            for path in [p for p in s.narrowed if p == root or p.startswith(root + ".")]:
                del s.narrowed[path]
            if root in s.vars:
                break
            s = s.parent

    def _stmt_Assign(self, stmt: A.Assign, scope: _Scope) -> None:
        t = self._target(stmt.target, scope)
        got = self.expr(stmt.value, scope, t)
        self.expect(got, t, stmt.value.span, "the assigned value", stmt.value)

    def _stmt_AugAssign(self, stmt: A.AugAssign, scope: _Scope) -> None:
        t = self._target(stmt.target, scope)
        self.out.types[stmt.target.nid] = t  # the compiler charges `s += ...` and `n *= ...` by this type
        got = self.expr(stmt.value, scope)
        result = self._arith(stmt.op, t, got, stmt.span)
        if result.name != "unknown" and not assignable(result, t) and t.name != "unknown":
            self.report(type_errors.augmented_result(self.file, stmt.span, stmt.op, result, t))

    def _stmt_Return(self, stmt: A.Return, scope: _Scope) -> None:
        ctx = self.ctx
        want: Type | None
        if ctx.hook is None:
            want = ctx.returns or VOID
            if stmt.value is None:
                if want.name != "void":
                    self.report(statement_errors.definition_returns_no_value(self.file, stmt.span, want))
            elif want.name == "void":
                self.report(statement_errors.definition_returns_nothing(self.file, stmt.value.span))
            else:
                got = self.expr(stmt.value, scope, want)
                self.expect(got, want, stmt.value.span, "the returned value", stmt.value)
            return
        hook = ctx.hook
        want = self._hook_result(hook)
        if hook.kind == "victims":
            want = None
        if stmt.value is None:
            if want is not None:
                self.report(statement_errors.hook_returns_no_value(self.file, stmt.span, hook.name, want))
        elif want is None:
            self.report(statement_errors.hook_returns_a_value(self.file, stmt.value.span, hook.name, hook.kind))
        else:
            got = self.expr(stmt.value, scope, want)
            self.expect(got, want, stmt.value.span, f"the result of hook '{hook.name}'", stmt.value)

    def _stmt_Break(self, stmt: A.Break, scope: _Scope) -> None:
        if not self.ctx.in_loop:
            self.report(statement_errors.outside_a_loop(self.file, stmt.span, "break"))

    def _stmt_Continue(self, stmt: A.Continue, scope: _Scope) -> None:
        if not self.ctx.in_loop:
            self.report(statement_errors.outside_a_loop(self.file, stmt.span, "continue"))

    def _stmt_Pass(self, stmt: A.Pass, scope: _Scope) -> None:
        pass

    def _require_kind(self, kinds: tuple[str, ...], what: str, span: Span) -> bool:
        hook = self.ctx.hook
        if hook is None or hook.kind not in kinds:
            where = f"hook '{hook.name}' ({hook.kind})" if hook else "a definition"
            self.report(statement_errors.not_in_this_hook(self.file, span, what, where, kinds))
            return False
        return True

    def _stmt_Victim(self, stmt: A.Victim, scope: _Scope) -> None:
        self._require_kind(("victims",), "victim", stmt.span)
        assert stmt.value is not None, "a one-line `victim when` rule is expanded before checking"
        got = self.expr(stmt.value, scope, Type("Task"))
        self.expect(got, Type("Task"), stmt.value.span, "a victim", stmt.value)

    def _stmt_Vote(self, stmt: A.Vote, scope: _Scope) -> None:
        kinds = ("vote", "victims") if stmt.verdict == "abstain" else ("vote",)
        self._require_kind(kinds, stmt.verdict, stmt.span)

    def _stmt_Fail(self, stmt: A.Fail, scope: _Scope) -> None:
        if self._require_kind(("failure",), "fail", stmt.span):
            hook = self.ctx.hook
            assert hook is not None  # _require_kind found one
            if stmt.code and hook.name == "job_valid":
                self.report(statement_errors.job_valid_fail_code(self.file, stmt.span))
        got = self.expr(stmt.message, scope, STRING)
        if got.name == "FitError" and not got.optional:
            if stmt.code:
                self.report(statement_errors.fit_error_with_code(self.file, stmt.span))
            return
        self.expect(got, STRING, stmt.message.span, "a failure message", stmt.message)

    def _stmt_OrderBy(self, stmt: A.OrderBy, scope: _Scope) -> None:
        self.report(statement_errors.order_by_out_of_place(self.file, stmt.span))

    def _stmt_ExprStmt(self, stmt: A.ExprStmt, scope: _Scope) -> None:
        if not isinstance(stmt.expr, A.Call):
            self.report(statement_errors.value_not_used(self.file, stmt.span))
        self.expr(stmt.expr, scope)

    def _stmt_If(self, stmt: A.If, scope: _Scope) -> None:
        falsy: dict[str, Type] = {}
        all_exit = True
        for cond, body in stmt.branches:
            cond_scope = _Scope(scope)
            cond_scope.narrowed.update(falsy)
            self.cond(cond, cond_scope)
            branch = _Scope(cond_scope)
            branch.narrowed.update(self.narrowing(cond, True, cond_scope))
            self.block(body, branch)
            all_exit = all_exit and self._always_exits(body)
            falsy = {**falsy, **self.narrowing(cond, False, cond_scope)}
        if stmt.orelse:
            else_scope = _Scope(scope)
            else_scope.narrowed.update(falsy)
            self.block(stmt.orelse, else_scope)
        elif all_exit:
            scope.narrowed.update(falsy)

    def _iter_type(self, t: Type, span: Span) -> Type:
        if t.name in ("list",) and not t.optional:
            return t.args[0]
        if t.name == "map" and not t.optional:
            return t.args[0]
        if t.name != "unknown":
            self.report(type_errors.not_iterable(self.file, span, t, t.name == "PriorityQueue"))
        return UNKNOWN

    def _stmt_For(self, stmt: A.For, scope: _Scope) -> None:
        it = self.expr(stmt.iter, scope)
        elem = self._iter_type(it, stmt.iter.span)
        body = _Scope(scope)
        self._declare_local(body, stmt.var, elem, stmt.var_span, stmt.nid)
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1

    def _stmt_Drain(self, stmt: A.Drain, scope: _Scope) -> None:
        q = self.expr(stmt.queue, scope)
        elem = UNKNOWN
        if q.name == "PriorityQueue" and not q.optional:
            elem = q.args[0]
        elif q.name != "unknown":
            self.report(type_errors.drain_needs_queue(self.file, stmt.queue.span, q))
        if stmt.cond is not None:
            self.cond(stmt.cond, scope)
        body = _Scope(scope)
        self._declare_local(body, stmt.var, elem, stmt.var_span, stmt.nid)
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1

    def _stmt_While(self, stmt: A.While, scope: _Scope) -> None:
        self.cond(stmt.cond, scope)
        body = _Scope(scope)
        body.narrowed.update(self.narrowing(stmt.cond, True, scope))
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1

    # -- narrowing ----------------------------------------------------------------------
    def narrowing(self, cond: A.Expr, truthy: bool, scope: _Scope) -> dict[str, Type]:
        if isinstance(cond, A.Unary) and cond.op == "not":
            return self.narrowing(cond.operand, not truthy, scope)
        if isinstance(cond, A.Binary):
            if cond.op in ("==", "!=") and (self._is_none(cond.right) or self._is_none(cond.left)):
                other = cond.left if self._is_none(cond.right) else cond.right
                path = attribute_path(other)
                t = self.out.types.get(other.nid)
                if path and t is not None and t.optional:
                    non_none = (cond.op == "!=") == truthy
                    if non_none:
                        return {path: t.required}
                return {}
            if cond.op == "and" and truthy:
                return {**self.narrowing(cond.left, True, scope), **self.narrowing(cond.right, True, scope)}
            if cond.op == "or" and not truthy:
                return {**self.narrowing(cond.left, False, scope), **self.narrowing(cond.right, False, scope)}
            if cond.op == "in" and truthy and isinstance(cond.right, A.Name):
                return {}
        return {}

    @staticmethod
    def _is_none(expr: A.Expr) -> bool:
        return isinstance(expr, A.Literal) and expr.kind == "none"

    # -- expressions ----------------------------------------------------------------------
    def cond(self, expr: A.Expr, scope: _Scope) -> None:
        t = self.expr(expr, scope, BOOL)
        self.expect(t, BOOL, expr.span, "a condition")

    def expr(self, expr: A.Expr, scope: _Scope, expected: Type | None = None) -> Type:
        self.until_checkpoint -= 1
        if self.until_checkpoint <= 0:
            self.until_checkpoint = CHECKPOINT_EVERY
            checkpoint()
        t = getattr(self, "_expr_" + type(expr).__name__)(expr, scope, expected)
        self.out.types[expr.nid] = t
        return t

    def _expr_Literal(self, e: A.Literal, scope: _Scope, expected: Type | None) -> Type:
        if e.kind == "string" and expected is not None and expected.required.name in self.env.enums:
            self._check_enum_literal(e, expected.required.name)
            return expected.required
        return {"int": INT, "float": FLOAT, "duration": FLOAT, "string": STRING, "bool": BOOL,
                "none": NONE}[e.kind]

    def _module_level(self, name: str) -> bool:
        ref = self._top_level(name)
        return ref is not None and ref.kind in ("arg", "state", "const", "def")

    def _top_level(self, name: str) -> Ref | None:
        out = self.out
        if name in out.args:
            return Ref("arg", "a_" + name, out.arg_types[name])
        if name in out.states:
            return Ref("state", "s_" + name, out.states[name])
        if name in out.consts:
            return Ref("const", "c_" + name, self._own_const_type(name))
        if name in out.defs:
            return Ref("def", "f_" + name, out.def_types[name])
        for used in out.uses:
            if name in used.defs:
                return Ref("def", "f_" + name, used.def_types[name], module=used.module.name)
            if name in used.consts:
                return Ref("const", "c_" + name, used.type_of(used.consts[name]), module=used.module.name)
        env = self.env
        if name in env.globals:
            g = env.globals[name]
            return Ref("global", g.py, g.type)
        if name in env.dispatch:
            sig = env.dispatch[name]
            return Ref("dispatch", sig.py, sig.fn_type, sig)
        if name in env.functions:
            sig = env.functions[name]
            return Ref("function", sig.py, sig.fn_type, sig)
        return None

    def _own_const_type(self, name: str) -> Type:
        """The type of this module's constant ``name``: known once its value is checked.  Before
        that it can be read only from a constant's value at or above it, which _note_module_use
        reports (E134); any other read of it unchecked is a fumarole bug."""
        decl = self.out.consts[name]
        if decl.nid in self.out.types:
            return self.out.types[decl.nid]
        if self.current_const is not None and self.declared_at[name] >= self.current_const[1]:
            return UNKNOWN  # read before it is evaluated: the E134 reported where it is read
        return self.out.type_of(decl)  # raises CheckerContractError, naming the constant's position

    def _note_module_use(self, name: str, ref: Ref, span: Span) -> bool:
        """Record that the body being checked uses this module's constant or definition ``name``
        (the evaluation-order check follows these); False, with an E134, when a constant's value
        reads a constant that is not yet evaluated at that point (written at or below it)."""
        if ref.module or ref.kind not in ("const", "def") or name not in self.declared_at:
            return True
        owner = self.current_const[0] if self.current_const is not None else self.current_def
        if owner is not None:
            self.reaches.setdefault(owner, {}).setdefault(name, span)
        if self.current_const is None or ref.kind != "const" or self.declared_at[name] < self.current_const[1]:
            return True
        const, file = self.current_const[0], self.module.file
        self.report(declaration_errors.constant_in_own_value(file, span, name) if name == const else
                                    declaration_errors.constant_before_declaration(file, span, name,
                                                                       self.out.consts[name].span.line, const))
        return False

    def _all_names(self, scope: _Scope) -> Iterator[str]:
        """Every name visible here, innermost first, made as the hint reads them (it reads only
        its first candidates: a large module's names are never all listed for one hint)."""
        s: _Scope | None = scope
        while s is not None:
            yield from s.vars
            s = s.parent
        out = self.out
        yield from itertools.chain(out.args, out.states, out.consts, out.defs)
        for used in out.uses:
            yield from itertools.chain(used.defs, used.consts)
        yield from itertools.chain(self.env.globals, self.env.dispatch, self.env.functions, BUILTIN_FUNCTIONS)

    def _expr_Name(self, e: A.Name, scope: _Scope, expected: Type | None) -> Type:
        self.used_names.add(e.id)
        found = scope.lookup(e.id)
        if found is not None:
            t, py = found
            narrowed = scope.narrowed_type(e.id)
            self.out.refs[e.nid] = Ref("local", py, t)
            return narrowed or t
        ref = self._top_level(e.id)
        if ref is None:
            if e.id in BUILTIN_FUNCTIONS:
                self.report(type_errors.only_callable(self.file, e.span, e.id))
                return UNKNOWN
            self.report(type_errors.unknown_name(self.file, e.span, e.id, self._rule_only_hint(e.id)
                                                   or self._hint(e.id, self._all_names(scope))))
            return UNKNOWN
        if not self._note_module_use(e.id, ref, e.span):
            return UNKNOWN
        if ref.kind == "def" and self.current_def is not None:
            self.call_graph.setdefault(self.current_def, set()).add(e.id)
        self.out.refs[e.nid] = ref
        narrowed = scope.narrowed_type(e.id)
        return narrowed or ref.type

    def _attr_info(self, obj_t: Type, e: A.Attr) -> AttrInfo | None:
        if obj_t.name == "unknown":
            return None
        if obj_t.optional:
            self.report(type_errors.attribute_of_optional(self.file, e.span, e.name, obj_t))
            return None
        info = self.env.types.get(obj_t.name)
        attr = info.attributes.get(e.name) if info else None
        if attr is None:
            candidates = list(info.attributes) + list(info.methods) if info else []
            self.report(type_errors.unknown_attribute(self.file, e.name_span, e.name, obj_t.name,
                                                        self._hint(e.name, candidates)))
            return None
        assert info is not None  # it has the attribute
        if info.params:
            bindings = dict(zip(info.params, obj_t.args))
            attr = AttrInfo(attr.name, substitute(attr.type, bindings), attr.py, attr.writable, attr.doc)
        return attr

    def _expr_Attr(self, e: A.Attr, scope: _Scope, expected: Type | None) -> Type:
        obj_t = self.expr(e.obj, scope)
        path = attribute_path(e)
        if path:
            narrowed = scope.narrowed_type(path)
            if narrowed is not None:
                info = self._attr_info(obj_t, e)
                if info is not None:
                    self.out.attrs[e.nid] = info
                return narrowed
        info = self._attr_info(obj_t, e)
        if info is None:
            return UNKNOWN
        self.out.attrs[e.nid] = info
        return info.type

    def _expr_Index(self, e: A.Index, scope: _Scope, expected: Type | None) -> Type:
        obj_t = self.expr(e.obj, scope)
        if obj_t.name == "unknown":
            self.expr(e.key, scope)
            return UNKNOWN
        if obj_t.optional:
            self.report(type_errors.index_of_optional(self.file, e.span, obj_t))
            return UNKNOWN
        if obj_t.name == "map":
            key_t = self.expr(e.key, scope, obj_t.args[0])
            self.expect(key_t, obj_t.args[0], e.key.span, "the key", e.key)
            return obj_t.args[1]
        if obj_t.name == "list":
            self.expect(self.expr(e.key, scope), INT, e.key.span, "a list index")
            return obj_t.args[0]
        self.report(type_errors.not_indexable(self.file, e.span, obj_t))
        return UNKNOWN

    def _expr_Unary(self, e: A.Unary, scope: _Scope, expected: Type | None) -> Type:
        if e.op == "not":
            self.cond(e.operand, scope)
            return BOOL
        t = self.expr(e.operand, scope)
        if t.name not in NUMERIC and t.name != "unknown":
            self.report(type_errors.not_negatable(self.file, e.span, t))
            return UNKNOWN
        return t

    def _arith(self, op: str, l: Type, r: Type, span: Span) -> Type:
        if "unknown" in (l.name, r.name):
            return UNKNOWN
        if l.optional or r.optional:
            self.report(type_errors.operator_on_optional(self.file, span, op, l, r))
            return UNKNOWN
        if l.name in NUMERIC and r.name in NUMERIC:
            if op == "/":
                return FLOAT
            if op == "%" and (l.name != "int" or r.name != "int"):
                self.report(type_errors.modulo_needs_ints(self.file, span))
            return INT if l.name == r.name == "int" else FLOAT
        if l.name == "Resource":
            if op in "+-" and r.name == "Resource":
                return l
            if op == "*" and r.name in NUMERIC:
                return l
        if op == "+" and l.name == r.name == "string":
            return STRING
        if op == "+" and l.name == r.name == "list" and assignable(r, l):
            return l
        self.report(type_errors.operator_undefined(self.file, span, op, l, r))
        return UNKNOWN

    def _expr_Binary(self, e: A.Binary, scope: _Scope, expected: Type | None) -> Type:
        op = e.op
        if op in ("and", "or"):
            self.cond(e.left, scope)
            right_scope = _Scope(scope)
            right_scope.narrowed.update(self.narrowing(e.left, op == "and", scope))
            self.cond(e.right, right_scope)
            return BOOL
        if op in ("in", "not in"):
            container = self.expr(e.right, scope)
            item = self.expr(e.left, scope, container.args[0] if container.args else None)
            if container.name in ("list", "map") and not container.optional:
                self.expect(item, container.args[0], e.left.span, "the searched value", e.left)
            elif container.name == "string":
                self.expect(item, STRING, e.left.span, "the searched value", e.left)
            elif container.name != "unknown":
                self.report(type_errors.membership_container(self.file, e.right.span, op, container))
            return BOOL
        if op in ("==", "!="):
            l = self.expr(e.left, scope)
            r = self.expr(e.right, scope, l if l.name in self.env.enums else None)
            if isinstance(e.left, A.Literal) and e.left.kind == "string" and r.required.name in self.env.enums:
                self._check_enum_literal(e.left, r.required.name)
            if not (assignable(l, r, self.env.enum_names) or assignable(r, l, self.env.enum_names)
                    or (l.name in NUMERIC and r.name in NUMERIC)
                    or (l.name == "none" and r.optional) or (r.name == "none" and l.optional)):
                if r.name == "none" or l.name == "none":
                    self.report(type_errors.never_none(self.file, e.span, l if r.name == "none" else r))
                else:
                    self.report(type_errors.not_comparable(self.file, e.span, l, r))
            return BOOL
        if op in ("<", "<=", ">", ">="):
            l = self.expr(e.left, scope)
            r = self.expr(e.right, scope)
            if "unknown" in (l.name, r.name):
                return BOOL
            if l.optional or r.optional:
                self.report(type_errors.operator_on_optional(self.file, e.span, op, l, r))
            elif l.name in NUMERIC and r.name in NUMERIC or l.name == r.name == "string":
                pass
            elif l.name == r.name == "Resource" and op in ("<", "<="):
                pass
            elif l.name == r.name == "Resource":
                self.report(type_errors.resources_ordered(self.file, e.span, op))
            else:
                self.report(type_errors.not_orderable(self.file, e.span, l, r))
            return BOOL
        l = self.expr(e.left, scope)
        r = self.expr(e.right, scope)
        return self._arith(op, l, r, e.span)

    def _expr_Conditional(self, e: A.Conditional, scope: _Scope, expected: Type | None) -> Type:
        self.cond(e.cond, scope)
        then_scope, else_scope = _Scope(scope), _Scope(scope)
        then_scope.narrowed.update(self.narrowing(e.cond, True, scope))
        else_scope.narrowed.update(self.narrowing(e.cond, False, scope))
        a = self.expr(e.then, then_scope, expected)
        b = self.expr(e.orelse, else_scope, expected)
        t = join(a, b)
        if t is None:
            self.report(type_errors.branch_types(self.file, e.span, a, b))
            return UNKNOWN
        return t

    def _elem_expected(self, expected: Type | None, name: str, index: int) -> Type | None:
        if expected is not None and expected.name == name and len(expected.args) > index:
            return expected.args[index]
        return None

    def _expr_ListLit(self, e: A.ListLit, scope: _Scope, expected: Type | None) -> Type:
        want = self._elem_expected(expected, "list", 0)
        elem: Type | None = None
        for item in e.items:
            t = self.expr(item, scope, want)
            if want is not None:
                self.expect(t, want, item.span, "a list item", item)
                t = want
            if elem is None:
                elem = t
            else:
                joined = join(elem, t)
                if joined is None:
                    self.report(type_errors.list_item_types(self.file, item.span, elem, t))
                else:
                    elem = joined
        return list_of(elem or want or UNKNOWN)

    def _comprehension_scope(self, var: str, it: A.Expr, cond: A.Expr | None, scope: _Scope,
                             node_id: int) -> _Scope:
        it_t = self.expr(it, scope)
        elem = self._iter_type(it_t, it.span)
        inner = _Scope(scope)
        self._declare_local(inner, var, elem, it.span, node_id)
        if cond is not None:
            self.cond(cond, inner)
            narrowed = _Scope(inner)
            narrowed.narrowed.update(self.narrowing(cond, True, inner))
            return narrowed
        return inner

    def _expr_ListComp(self, e: A.ListComp, scope: _Scope, expected: Type | None) -> Type:
        inner = self._comprehension_scope(e.var, e.iter, e.cond, scope, e.nid)
        return list_of(self.expr(e.elem, inner, self._elem_expected(expected, "list", 0)))

    def _expr_MapLit(self, e: A.MapLit, scope: _Scope, expected: Type | None) -> Type:
        key_want = self._elem_expected(expected, "map", 0)
        value_want = self._elem_expected(expected, "map", 1)
        key_t: Type | None = None
        value_t: Type | None = None
        for k, v in e.entries:
            kt, vt = self.expr(k, scope, key_want), self.expr(v, scope, value_want)
            if key_want is not None:
                self.expect(kt, key_want, k.span, "a map key", k)
                kt = key_want
            if value_want is not None:
                self.expect(vt, value_want, v.span, "a map value", v)
                vt = value_want
            key_t = kt if key_t is None else (join(key_t, kt) or key_t)
            value_t = vt if value_t is None else (join(value_t, vt) or value_t)
        return map_of(key_t or key_want or UNKNOWN, value_t or value_want or UNKNOWN)

    def _expr_MapComp(self, e: A.MapComp, scope: _Scope, expected: Type | None) -> Type:
        inner = self._comprehension_scope(e.var, e.iter, e.cond, scope, e.nid)
        k = self.expr(e.key, inner, self._elem_expected(expected, "map", 0))
        v = self.expr(e.value, inner, self._elem_expected(expected, "map", 1))
        return map_of(k, v)

    def _expr_Lambda(self, e: A.Lambda, scope: _Scope, expected: Type | None) -> Type:
        want_params = expected.args[:-1] if expected is not None and expected.name == "fn" else ()
        inner = _Scope(scope)
        params: list[Type] = []
        for i, (name, texpr, span) in enumerate(e.params):
            if texpr is not None:
                t = self.resolve_type(texpr)
            elif i < len(want_params) and not want_params[i].is_typevar:
                t = want_params[i]
            else:
                self.report(type_errors.lambda_parameter_type(self.file, span, name))
                t = UNKNOWN
            params.append(t)
            self._declare_local(inner, name, t, span, span.nid)
        body = self.expr(e.body, inner, expected.args[-1] if expected is not None and expected.name == "fn" else None)
        return fn_of(params, body)

    # -- calls ----------------------------------------------------------------------------
    def _expr_Call(self, e: A.Call, scope: _Scope, expected: Type | None) -> Type:
        func = e.func
        if isinstance(func, A.Name) and scope.lookup(func.id) is None:
            name = func.id
            if name in BUILTIN_FUNCTIONS and self._top_level(name) is None:
                return self._builtin_call(e, name, scope)
            ref = self._top_level(name)
            if ref is not None and ref.kind in ("def", "dispatch", "function"):
                self.used_names.add(name)
                self._note_module_use(name, ref, func.span)
                self.out.refs[func.nid] = ref
                if ref.kind == "def":
                    if self.current_def is not None:
                        self.call_graph.setdefault(self.current_def, set()).add(name)
                    sig = self._def_sig(name, ref)
                    self.out.calls[e.nid] = CallInfo("def", ref.py, sig, name)
                else:
                    assert ref.sig is not None  # a dispatcher's or function's reference carries its signature
                    sig = ref.sig
                    self.out.calls[e.nid] = CallInfo(ref.kind, ref.py, sig, name)
                    self._check_literal_format(sig, e)
                return self._apply(sig, e, scope, name)
        if isinstance(func, A.Attr):
            obj_t = self.expr(func.obj, scope)
            return self._method_call(e, func, obj_t, scope)
        t = self.expr(func, scope)
        if t.name == "fn" and not t.optional:
            params = tuple(Param(f"arg{i}", p) for i, p in enumerate(t.args[:-1]))
            sig = FuncSig("<function>", params, t.args[-1], "")
            self.out.calls[e.nid] = CallInfo("value", "", sig)
            return self._apply(sig, e, scope, "this function")
        if t.name != "unknown":
            self.report(type_errors.not_callable(self.file, func.span, t))
        for a in e.args:
            self.expr(a, scope)
        return UNKNOWN

    def _rule_only_hint(self, name: str) -> str | None:
        """Names a one-line victim or candidate rule reads (policy_lang/victim_rules.py) that mean nothing
        elsewhere: `self`, and an enumeration value written bare (`status == Running`)."""
        if name == "self":
            return ("`self` (the task that needs room) exists only in one-line victim and candidate rules "
                    "(`victim when ...`); in a hook body use its parameter, e.g. `preemptor`")
        enums = [enum for enum, values in self.env.enums.items() if name in values]
        if enums:
            return (f"'{name}' is a {enums[0]} value: write the string \"{name}\"; a bare value is read only "
                    "in one-line victim and candidate rules")
        return None

    def _check_literal_format(self, sig: FuncSig, e: A.Call) -> None:
        """A literal the function would refuse while the session runs is an error where it is written."""
        first = e.args[0] if e.args else None
        if not sig.literal or not isinstance(first, A.Literal) or first.kind != "string":
            return
        what, valid, example = _LITERAL_FORMATS[sig.literal]
        if not valid(first.value):
            self.report(type_errors.malformed_literal(self.file, first.span, first.value, what, sig.name, example))

    def _def_sig(self, name: str, ref: Ref) -> FuncSig:
        decl = self.out.defs.get(name)
        if decl is None:
            for used in self.out.uses:
                decl = used.defs.get(name) or decl
        names = [p.name for p in decl.params] if decl else [f"arg{i}" for i in range(len(ref.type.args) - 1)]
        params = tuple(Param(n, t) for n, t in zip(names, ref.type.args[:-1]))
        return FuncSig(name, params, ref.type.args[-1], ref.py)

    def _apply(self, sig: FuncSig, e: A.Call, scope: _Scope, what: str) -> Type:
        params = list(sig.params)
        supplied: dict[str, tuple[A.Expr, Span]] = {}
        if len(e.args) > len(params):
            self.report(type_errors.too_many_arguments(self.file, e.span, what, len(params), len(e.args)))
        for param, arg in zip(params, e.args):
            supplied[param.name] = (arg, arg.span)
        for kw, value, span in e.kwargs:
            if kw not in {p.name for p in params}:
                self.report(type_errors.unknown_keyword(self.file, span, what, kw,
                                                          self._hint(kw, [p.name for p in params])))
                self.expr(value, scope)
                continue
            if kw in supplied:
                self.report(type_errors.argument_given_twice(self.file, span, kw))
            supplied[kw] = (value, span)
        bindings: dict[str, Type] = {}
        for param in params:
            if param.name not in supplied:
                if not param.optional:
                    self.report(type_errors.missing_argument(self.file, e.span, what, param.name, param.type))
                continue
            arg, span = supplied[param.name]
            want = substitute(param.type, bindings)
            got = self.expr(arg, scope, want)
            if not unify(param.type, got, bindings) or not self._fits(got, substitute(param.type, bindings), arg):
                self.expect(got, substitute(param.type, bindings), arg.span, f"argument '{param.name}' of {what}", arg)
        return substitute(sig.returns, bindings)

    def _fits(self, got: Type, want: Type, arg: A.Expr) -> bool:
        if isinstance(arg, A.Literal) and arg.kind == "string" and want.required.name in self.env.enums:
            return self._check_enum_literal(arg, want.required.name)
        return assignable(got, want, self.env.enum_names) or (got.name == "fn" and want.name == "fn")

    def _method_call(self, e: A.Call, func: A.Attr, obj_t: Type, scope: _Scope) -> Type:
        if obj_t.name == "unknown":
            for a in e.args:
                self.expr(a, scope)
            return UNKNOWN
        if obj_t.optional:
            self.report(type_errors.method_of_optional(self.file, func.span, func.name, obj_t))
            return UNKNOWN
        container = self._container_method(obj_t, func.name)
        if container is not None:
            self.out.calls[e.nid] = CallInfo("container", func.name, container, func.name)
            return self._apply(container, e, scope, f"'{func.name}'")
        info = self.env.types.get(obj_t.name)
        sig = info.methods.get(func.name) if info else None
        if sig is None:
            candidates = list(info.methods) + list(info.attributes) if info else []
            suggestion = self._hint(func.name, candidates)
            is_attribute = info is not None and func.name in info.attributes
            self.report(type_errors.unknown_method(self.file, func.name_span, func.name, obj_t.name, is_attribute,
                                                     suggestion))
            for a in e.args:
                self.expr(a, scope)
            return UNKNOWN
        assert info is not None  # it has the method
        if info.params:
            bindings = dict(zip(info.params, obj_t.args))
            sig = FuncSig(sig.name, tuple(Param(p.name, substitute(p.type, bindings), p.optional) for p in sig.params),
                          substitute(sig.returns, bindings), sig.py, sig.doc)
        self.out.calls[e.nid] = CallInfo("method", sig.py, sig, func.name)
        return self._apply(sig, e, scope, f"'{func.name}'")

    @staticmethod
    def _container_method(t: Type, name: str) -> FuncSig | None:
        if t.name == "list":
            elem = t.args[0]
            return {"append": FuncSig("append", (Param("item", elem),), VOID, "append"),
                    "copy": FuncSig("copy", (), t, "copy")}.get(name)
        if t.name == "map":
            k, v = t.args
            return {
                "copy": FuncSig("copy", (), t, "copy"),
                "get": FuncSig("get", (Param("key", k), Param("default", v)), v, "get"),
                "keys": FuncSig("keys", (), list_of(k), "keys"),
                "values": FuncSig("values", (), list_of(v), "values"),
                "remove": FuncSig("remove", (Param("key", k),), VOID, "remove"),
            }.get(name)
        return None

    def _builtin_call(self, e: A.Call, name: str, scope: _Scope) -> Type:
        args = [self.expr(a, scope) for a in e.args]
        self.out.calls[e.nid] = CallInfo("builtin", name, None, name)
        if e.kwargs:
            self.report(type_errors.builtin_keyword(self.file, e.kwargs[0][2], name))

        def arity(n: int) -> bool:
            if len(args) != n:
                self.report(type_errors.builtin_arity(self.file, e.span, name, n, len(args)))
                return False
            return True

        if name == "len":
            if arity(1) and args[0].name not in ("list", "map", "string", "PriorityQueue", "unknown"):
                self.report(type_errors.builtin_of(self.file, e.args[0].span, "len", args[0]))
            return INT
        if name in ("max", "min"):
            if len(args) == 1 and args[0].name in ("list", "unknown"):  # the largest / smallest of a list
                element = args[0].args[0] if args[0].args else UNKNOWN
                if element.name not in NUMERIC and element.name != "unknown":
                    self.report(type_errors.builtin_of(self.file, e.args[0].span, name, args[0]))
                    return UNKNOWN
                return INT if element.name == "int" else FLOAT
            if len(args) < 2:
                self.report(type_errors.extremum_arity(self.file, e.span, name))
                return UNKNOWN
            for a, t in zip(e.args, args):
                if t.name not in NUMERIC and t.name != "unknown":
                    self.report(type_errors.builtin_of(self.file, a.span, name, t))
            return INT if all(t.name == "int" for t in args) else FLOAT
        if name == "sum":
            if arity(1) and not (args[0].name == "list" and args[0].args[0].name in NUMERIC):
                self.report(type_errors.sum_needs_numbers(self.file, e.span, args[0]))
            return FLOAT
        if name == "range":
            if arity(1):
                self.expect(args[0], INT, e.args[0].span, "range()'s bound")
            return list_of(INT)
        if name == "str":
            arity(1)
            return STRING
        if name == "int":
            if arity(1) and args[0].name not in NUMERIC + ("unknown",):
                self.report(type_errors.builtin_of(self.file, e.span, "int", args[0]))
            return INT
        if name == "float":
            if arity(1) and args[0].name not in NUMERIC + ("unknown",):
                self.report(type_errors.builtin_of(self.file, e.span, "float", args[0]))
            return FLOAT
        return UNKNOWN

    # -- whole-module checks ----------------------------------------------------------------
    def _check_recursion(self) -> None:
        """One E132 per group of definitions that call each other (a strongly connected component
        of the call graph, found in linear time), at its first definition by name."""
        graph = {caller: sorted(c for c in callees if c in self.out.defs)
                 for caller, callees in self.call_graph.items() if caller in self.out.defs}
        for component in strongly_connected(graph):
            first = min(component)
            if len(component) == 1 and first not in graph.get(first, ()):
                continue
            cycle = _cycle_through(first, graph, set(component))
            self.report(declaration_errors.recursion(self.module.file, self.out.defs[first].name_span, cycle,
                                                         len(component) - len(cycle) + 1))

    def _check_evaluation_order(self) -> None:
        """Constants are evaluated once, in the order they are written, when the policy is loaded;
        definitions are made in that order too.  So everything a constant's value can reach --
        directly, or through the definitions and functions it uses -- must be written above it.
        One E134 per constant, at the use in its value that leads below it."""
        for name, decl in self.out.consts.items():
            place = self.declared_at[name]
            first_uses = self.reaches.get(name, {})
            for start, span in first_uses.items():
                if start in self.out.consts:
                    continue  # evaluated already (one written below got its E134 where it is used)
                path = self._reach_below(start, place)
                if path is not None:
                    below = path[-1]
                    kind = "constant" if below in self.out.consts else "definition"
                    line = (self.out.consts[below].span if below in self.out.consts
                            else self.out.defs[below].name_span).line
                    self.report(declaration_errors.reaches_below(self.module.file, span, name, kind, below,
                                                                     path[:-1], line))
                    break

    def _reach_below(self, start: str, place: int) -> list[str] | None:
        """A path of uses from ``start`` (a definition) to a constant or definition written at or
        below ``place``, through definitions only (a constant reached is already evaluated); None if
        there is none."""
        parents: dict[str, str | None] = {start: None}
        pending = [start]
        while pending:
            name = pending.pop()
            if self.declared_at[name] >= place:
                path = [name]
                while (parent := parents[path[-1]]) is not None:
                    path.append(parent)
                return path[::-1]
            if name in self.out.defs:
                for used in self.reaches.get(name, {}):
                    if used not in parents:
                        parents[used] = name
                        pending.append(used)
        return None

    def _check_unused(self) -> None:
        for name, decl in self.out.args.items():
            if name not in self.used_names and not name.startswith("_"):
                self.report(declaration_errors.unused_argument(self.file, decl.span, name))
        for name, func in self.out.defs.items():
            if name not in self.used_names and self.module.kind != "module":
                self.report(declaration_errors.unused_definition(self.file, func.name_span, name))
        for name, const in self.out.consts.items():
            if name not in self.used_names and self.module.kind != "module":
                self.report(declaration_errors.unused_definition(self.file, const.span, name))


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative: any size, linear time)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            successors = graph.get(node, [])
            if child < len(successors):
                work.append((node, child + 1))
                succ = successors[child]
                if succ not in index:
                    work.append((succ, 0))
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
                continue
            if work and work[-1][0] != node:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _cycle_through(first: str, graph: dict[str, list[str]], component: set[str]) -> list[str]:
    """The shortest cycle from ``first`` back to itself inside its component (breadth first)."""
    parents: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for succ in graph.get(node, []):
                if succ == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(parents[path[-1]])
                    return [*path[::-1], first]
                if succ in component and succ not in parents:
                    parents[succ] = node
                    following.append(succ)
        frontier = following
    return [first, first]
