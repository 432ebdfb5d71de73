"""Checked module -> Python source -> one code object.

Like Jinja2, fumarole compiles each policy file once to Python source and keeps
the code object; evaluating a rule is running Python, never walking a tree.

A compiled plugin or action is a *builder*: ``__build__(_rt, _H, _args)`` runs
once per session and returns its hook closures.  ``_rt`` is the session runtime,
``_H`` the session's hook dispatchers, ``_args`` the typed arguments from the
bundle.  Policy names are prefixed in the generated code (``v_`` locals, ``a_``
arguments, ``s_`` state, ``c_`` constants, ``f_`` definitions) so no policy
name can reach a Python builtin or the runtime's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import ast as A
from .checker import CheckedModule, HookInfo
from .types import Type
from .vectorize import batch_forms

# Numbers a decision point for instrumented code: (file, condition or victim, the node it belongs to) -> id.
# Without one (the normal case) the generated code has no probes at all.
ProbeSite = Callable[[str, A.Expr, object], int]

# The key under which a plugin's builder also hands out a view of its state (never a hook name).
STATE_VIEW = "__state__"
_DEFAULT_FAIL_CODE = {"predicate": "unschedulable", "pre_predicate": "unresolvable", "job_valid": "invalid"}
_CODE_STATUS = {"unschedulable": "Unschedulable", "unresolvable": "UnschedulableAndUnresolvable",
                "error": "Error", "invalid": "Invalid"}


@dataclass
class CompiledModule:
    """The product of compiling one checked module (plus the modules it uses)."""

    kind: str
    name: str
    file: str
    source: str
    code: object
    line_map: list[tuple[int, int]]
    hooks: tuple[str, ...]
    args: dict[str, A.ArgDecl] = field(default_factory=dict)
    arg_types: dict[str, Type] = field(default_factory=dict)
    batch_fallbacks: list = field(default_factory=list)  # node-level rules without a batch form (vectorize.Fallback)
    process_states: dict[str, Type] = field(default_factory=dict)  # `process state` names and types

    @property
    def filename(self) -> str:
        return f"<policy {self.file}>"

    def policy_position(self, python_line: int) -> tuple[int, int]:
        if 0 < python_line <= len(self.line_map):
            return self.line_map[python_line - 1]
        return (0, 0)


# The builder entry of a plugin with process state: a function returning {name: value now},
# which the session saves when it closes (runtime/framework/process_state.py).
PROCESS_STATE_ENTRY = "__process_state__"


def _default_value(t: Type) -> str:
    if t.optional:
        return "None"
    return {"map": "{}", "list": "[]", "int": "0", "float": "0.0", "bool": "False", "string": "''",
            "Resource": "_res.Resource()"}.get(t.name, "None")


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.line_map: list[tuple[int, int]] = []
        self.temp = 0

    def emit(self, indent: int, text: str, span=None) -> None:
        self.lines.append("    " * indent + text)
        self.line_map.append((span.line, span.col) if span is not None else (0, 0))

    def fresh(self, base: str) -> str:
        self.temp += 1
        return f"_{base}{self.temp}"


class Compiler:
    def __init__(self, checked: CheckedModule, probe: ProbeSite | None = None) -> None:
        self.c = checked
        self.probe = probe
        self.out = _Emitter()
        self.hook: HookInfo | None = None
        self.info = checked  # tables of the module currently being emitted
        self.globals: dict[str, str] = {}  # session global (its Python expression) -> hoisted local
        self.rename: dict[str, str] = {}  # local Python name -> the name to emit instead

    # -- tables -----------------------------------------------------------------
    def t(self, e: A.Expr) -> Type:
        return self.info.types.get(id(e), Type("unknown"))

    # -- module ---------------------------------------------------------------------
    def compile(self) -> CompiledModule:
        c = self.c
        o = self.out
        o.emit(0, "def __build__(_rt, _H, _args):", c.module.span)
        for name, decl in c.args.items():
            o.emit(1, f"a_{name} = _args[{name!r}]", decl.span)
        for name, t in c.states.items():
            if name in c.process_states:  # the scheduler process's value, kept from the last session
                o.emit(1, f"s_{name} = _rt.process_state.plugin_value({c.module.name!r}, {name!r}, "
                          f"{_default_value(t)})")
            else:
                o.emit(1, f"s_{name} = {_default_value(t)}")
        # Session globals do not change during a session: read each once.
        uses = _used_modules(c)
        hoisted = sorted({ref.py for m in [c, *uses] for ref in m.refs.values() if ref.kind == "global"})
        self.globals = {py: f"g_{i}" for i, py in enumerate(hoisted)}
        for py, local in self.globals.items():
            o.emit(1, f"{local} = {py}")
        for used in uses:
            self.info = used
            self._emit_definitions(used)
        self.info = c
        self._emit_definitions(c)
        hooks: dict[str, str] = {}
        for hook in c.hooks:
            if hook.decl in hooks.values():
                continue
            fn = self._emit_hook(hook)
            for name in hook.decl.names:
                hooks[name] = fn
        fallbacks: list = []
        if c.module.kind == "module":
            # A module's builder hands out its definitions (the test runner calls them).
            hooks = {name: f"f_{name}" for name in c.defs}
        elif self.probe is None:
            # The fast engine's batch forms of node-level rules (policy_lang/vectorize.py).
            lines, fallbacks = batch_forms(self)
            for line in lines:
                o.emit(1, line)
        entries = ", ".join(f"{name!r}: {fn}" for name, fn in hooks.items())
        if c.process_states:  # what the session saves at close (runtime/framework/process_state.py)
            saved = ", ".join(f"{name!r}: s_{name}" for name in c.process_states)
            entries += f", {PROCESS_STATE_ENTRY!r}: lambda: {{{saved}}}"
        if c.states and c.module.kind == "plugin":
            # Read-only view of the plugin's state for tools that watch sessions (what-if replay
            # reads proportion's `deserved`); not a hook, so no dispatcher ever calls it.
            state = ", ".join(f"{name!r}: s_{name}" for name in c.states)
            entries += f", {STATE_VIEW!r}: lambda: {{{state}}}"
        o.emit(1, f"return {{{entries}}}")
        source = "\n".join(o.lines) + "\n"
        filename = f"<policy {c.module.file}>"
        code = compile(source, filename, "exec")
        return CompiledModule(c.module.kind, c.module.name, c.module.file, source, code, o.line_map,
                              tuple(hooks), dict(c.args), dict(c.arg_types), fallbacks,
                              {name: c.states[name] for name in c.process_states})

    def _emit_definitions(self, m: CheckedModule) -> None:
        for decl in m.module.decls:
            if isinstance(decl, A.ConstDecl):
                self.out.emit(1, f"c_{decl.name} = {self.ex(decl.value)}", decl.span)
            elif isinstance(decl, A.FuncDef):
                self._emit_def(decl)

    def _nonlocals(self, func_node, indent: int) -> None:
        assigned = self.info.assigned_states.get(id(func_node))
        if assigned:
            self.out.emit(indent, "nonlocal " + ", ".join(f"s_{n}" for n in sorted(assigned)))

    def _emit_def(self, decl: A.FuncDef) -> None:
        params = ", ".join(self.info.pynames[id(p)] for p in decl.params)
        self.out.emit(1, f"def f_{decl.name}({params}):", decl.name_span)
        self._nonlocals(decl, 2)
        self.hook = None
        if isinstance(decl.body, tuple):
            self.block(decl.body, 2)
            if not decl.body:
                self.out.emit(2, "pass")
        else:
            self.out.emit(2, f"return {self.ex(decl.body)}", decl.body.span)

    def _emit_hook(self, hook: HookInfo) -> str:
        decl, kind = hook.decl, hook.sig.kind
        fn = "_hook_" + "_".join(decl.names)
        o = self.out
        params = [self.info.pynames[id(span)] for _, span in decl.params]
        self.hook = hook
        if hook.key_form:
            self._emit_key_order(fn, decl, params[0])
            return fn
        o.emit(1, f"def {fn}({', '.join(params)}):", decl.name_span)
        self._nonlocals(decl, 2)
        if kind == "victims":
            o.emit(2, "_victims = []")
        elif kind == "failure":
            o.emit(2, "_statuses = []")
        if isinstance(decl.body, tuple):
            self.block(decl.body, 2)
        else:
            body = self.ex(decl.body)
            o.emit(2, f"return list({body}), 1" if kind == "victims" else f"return {body}", decl.body.span)
        if kind == "victims":
            o.emit(2, "return _victims, 1")
        elif kind == "failure":
            o.emit(2, "return _FitError(_statuses) if _statuses else None")
        elif kind == "vote":
            o.emit(2, "return 0")
        elif not isinstance(decl.body, tuple) or not decl.body:
            o.emit(2, "pass")
        return fn

    def _emit_key_order(self, fn: str, decl: A.HookDef, param: str) -> None:
        o = self.out
        order: A.OrderBy = decl.body[0]
        o.emit(1, f"def {fn}(_l, _r):", decl.name_span)
        for key, desc in order.keys:
            # The key expression is emitted once per side, with the parameter renamed.
            self.rename = {param: "_l"}
            o.emit(2, f"_a = {self.ex(key)}", key.span)
            self.rename = {param: "_r"}
            o.emit(2, f"_b = {self.ex(key)}", key.span)
            self.rename = {}
            first, second = ("1", "-1") if desc else ("-1", "1")
            o.emit(2, "if _a != _b:", key.span)
            o.emit(3, f"return {first} if _a < _b else {second}", key.span)
        o.emit(2, "return 0")

    # -- statements ---------------------------------------------------------------------
    def block(self, stmts, indent: int) -> None:
        for stmt in stmts:
            self.stmt(stmt, indent)

    def stmt(self, s: A.Stmt, indent: int) -> None:
        getattr(self, "_st_" + type(s).__name__)(s, indent)

    def _cond(self, cond: A.Expr, owner: object) -> str:
        """A condition's code; instrumented, ``_probe(n, cond)`` counts each outcome (coverage, explanations)."""
        if self.probe is None:
            return self.ex(cond)
        return f"_probe({self.probe(self.info.module.file, cond, owner)}, {self.ex(cond)})"

    def _st_When(self, s: A.When, indent: int) -> None:
        self.out.emit(indent, f"if {self._cond(s.cond, s)}:", s.span)
        self.stmt(s.stmt, indent + 1)

    def _st_Let(self, s: A.Let, indent: int) -> None:
        self.out.emit(indent, f"{self.info.pynames[id(s)]} = {self.ex(s.value)}", s.span)

    def _target(self, target: A.Expr) -> str:
        if isinstance(target, A.Name):
            return self.info.refs[id(target)].py
        if isinstance(target, A.Index):
            return f"{self.ex(target.obj)}[{self.ex(target.key)}]"
        info = self.info.attrs[id(target)]
        return info.py.replace("{0}", self.ex(target.obj))

    def _st_Assign(self, s: A.Assign, indent: int) -> None:
        self.out.emit(indent, f"{self._target(s.target)} = {self.ex(s.value)}", s.span)

    def _st_AugAssign(self, s: A.AugAssign, indent: int) -> None:
        target = self._target(s.target)
        value = self.ex(s.value)
        op = s.op
        if op == "/":
            expr = f"_div({target}, {value})"
        else:
            expr = f"({target} {op} {value})"
        self.out.emit(indent, f"{target} = {expr}", s.span)

    def _st_Return(self, s: A.Return, indent: int) -> None:
        hook = self.hook
        kind = hook.sig.kind if hook else None
        value = self.ex(s.value) if s.value is not None else None
        if kind == "victims":
            text = "return _victims, 1"
        elif kind == "failure":
            text = "return _FitError(_statuses) if _statuses else None"
        elif kind == "vote":
            text = "return 0"
        else:
            text = f"return {value}" if value is not None else "return"
        self.out.emit(indent, text, s.span)

    def _st_Break(self, s, indent: int) -> None:
        self.out.emit(indent, "break", s.span)

    def _st_Continue(self, s, indent: int) -> None:
        self.out.emit(indent, "continue", s.span)

    def _st_Pass(self, s, indent: int) -> None:
        self.out.emit(indent, "pass", s.span)

    def _st_Victim(self, s: A.Victim, indent: int) -> None:
        value = self.ex(s.value)
        if self.probe is not None:  # record which rule picked which task
            value = f"_pick({self.probe(self.info.module.file, s.value, s)}, {value})"
        self.out.emit(indent, f"_victims.append({value})", s.span)

    def _st_Vote(self, s: A.Vote, indent: int) -> None:
        if s.verdict == "abstain" and self.hook and self.hook.sig.kind == "victims":
            self.out.emit(indent, "return [], 0", s.span)
            return
        self.out.emit(indent, {"permit": "return 1", "reject": "return -1", "abstain": "return 0"}[s.verdict], s.span)

    def _st_Fail(self, s: A.Fail, indent: int) -> None:
        if self.t(s.message).name == "FitError":
            failure = self.ex(s.message)
            self.out.emit(indent, f"_statuses.extend({failure}.statuses)", s.span)
            self.out.emit(indent, f"if {failure}.unresolvable: return _FitError(_statuses)", s.span)
            return
        code = s.code or _DEFAULT_FAIL_CODE.get(self.hook.name if self.hook else "", "error")
        status = _CODE_STATUS[code]
        self.out.emit(indent, f"_statuses.append(({status!r}, {self.ex(s.message)}))", s.span)
        if code != "unschedulable":
            self.out.emit(indent, "return _FitError(_statuses)", s.span)

    def _st_ExprStmt(self, s: A.ExprStmt, indent: int) -> None:
        self.out.emit(indent, self.ex(s.expr), s.span)

    def _st_If(self, s: A.If, indent: int) -> None:
        for i, (cond, body) in enumerate(s.branches):
            self.out.emit(indent, f"{'if' if i == 0 else 'elif'} {self._cond(cond, s)}:", cond.span)
            self.block(body, indent + 1)
        if s.orelse:
            self.out.emit(indent, "else:", s.span)
            self.block(s.orelse, indent + 1)

    def _st_For(self, s: A.For, indent: int) -> None:
        self.out.emit(indent, f"for {self.info.pynames[id(s)]} in {self.ex(s.iter)}:", s.span)
        if self.probe is not None:  # mark each iteration, so a decision can be tied to its item
            self.out.emit(indent + 1, f"_iter({self.info.pynames[id(s)]})", s.span)
        self.block(s.body, indent + 1)

    def _loop_guard(self, counter: str, indent: int, span) -> None:
        self.out.emit(indent, f"{counter} += 1", span)
        self.out.emit(indent, f"if {counter} > _LOOP_LIMIT: _loop_limit({span.line}, {span.col})", span)

    def _st_Drain(self, s: A.Drain, indent: int) -> None:
        counter, queue = self.out.fresh("n"), self.out.fresh("q")
        self.out.emit(indent, f"{counter} = 0", s.span)
        self.out.emit(indent, f"{queue} = {self.ex(s.queue)}", s.span)
        cond = f"{queue}.items" if s.cond is None else f"{self._cond(s.cond, s)} and {queue}.items"
        self.out.emit(indent, f"while {cond}:", s.span)
        self._loop_guard(counter, indent + 1, s.span)
        self.out.emit(indent + 1, f"{self.info.pynames[id(s)]} = {queue}.pop()", s.span)
        self.block(s.body, indent + 1)

    def _st_While(self, s: A.While, indent: int) -> None:
        counter = self.out.fresh("n")
        self.out.emit(indent, f"{counter} = 0", s.span)
        self.out.emit(indent, f"while {self._cond(s.cond, s)}:", s.span)
        self._loop_guard(counter, indent + 1, s.span)
        self.block(s.body, indent + 1)

    # -- expressions ----------------------------------------------------------------------
    def ex(self, e: A.Expr) -> str:
        return getattr(self, "_ex_" + type(e).__name__)(e)

    def _ex_Literal(self, e: A.Literal) -> str:
        return repr(e.value)

    def _ex_Name(self, e: A.Name) -> str:
        ref = self.info.refs[id(e)]
        if ref.kind == "global":
            return self.globals[ref.py]
        return self.rename.get(ref.py, ref.py)

    def _ex_Attr(self, e: A.Attr) -> str:
        info = self.info.attrs[id(e)]
        obj = self.ex(e.obj)
        return info.py.replace("{0}", obj)

    def _ex_Index(self, e: A.Index) -> str:
        return f"{self.ex(e.obj)}[{self.ex(e.key)}]"

    def _ex_Unary(self, e: A.Unary) -> str:
        return f"(not {self.ex(e.operand)})" if e.op == "not" else f"(-{self.ex(e.operand)})"

    def _ex_Binary(self, e: A.Binary) -> str:
        op = e.op
        if op in ("and", "or"):
            return f"({self.ex(e.left)} {op} {self.ex(e.right)})"
        left_t, right_t = self.t(e.left), self.t(e.right)
        if op in ("==", "!=") and (left_t.name == "none" or right_t.name == "none"):
            other = e.right if left_t.name == "none" else e.left
            return f"({self.ex(other)} {'is' if op == '==' else 'is not'} None)"
        if left_t.name == "Resource" and right_t.name == "Resource":
            if op == "<=":
                return f"_res.less_equal({self.ex(e.left)}, {self.ex(e.right)})"
            if op == "<":
                return f"_res.less({self.ex(e.left)}, {self.ex(e.right)})"
            if op == "==":
                return f"_res.equal({self.ex(e.left)}, {self.ex(e.right)})"
            if op == "!=":
                return f"(not _res.equal({self.ex(e.left)}, {self.ex(e.right)}))"
        if op == "/":
            return f"_div({self.ex(e.left)}, {self.ex(e.right)})"
        return f"({self.ex(e.left)} {op} {self.ex(e.right)})"

    def _ex_Conditional(self, e: A.Conditional) -> str:
        return f"({self.ex(e.then)} if {self._cond(e.cond, e)} else {self.ex(e.orelse)})"

    def _ex_ListLit(self, e: A.ListLit) -> str:
        return "[" + ", ".join(self.ex(i) for i in e.items) + "]"

    def _comp_tail(self, var_node_id: int, it: A.Expr, cond: A.Expr | None) -> str:
        text = f" for {self.info.pynames[var_node_id]} in {self.ex(it)}"
        if cond is not None:
            text += f" if {self._cond(cond, cond)}"
        return text

    def _ex_ListComp(self, e: A.ListComp) -> str:
        return f"[{self.ex(e.elem)}{self._comp_tail(id(e), e.iter, e.cond)}]"

    def _ex_MapLit(self, e: A.MapLit) -> str:
        return "{" + ", ".join(f"{self.ex(k)}: {self.ex(v)}" for k, v in e.entries) + "}"

    def _ex_MapComp(self, e: A.MapComp) -> str:
        return f"{{{self.ex(e.key)}: {self.ex(e.value)}{self._comp_tail(id(e), e.iter, e.cond)}}}"

    def _ex_Lambda(self, e: A.Lambda) -> str:
        params = ", ".join(self.info.pynames[id(span)] for _, _, span in e.params)
        return f"(lambda {params}: {self.ex(e.body)})"

    def _args(self, e: A.Call, sig) -> str:
        """Positional arguments in parameter order; skipped optional ones become keywords."""
        given: dict[str, A.Expr] = {}
        for param, arg in zip(sig.params, e.args):
            given[param.name] = arg
        for name, value, _span in e.kwargs:
            given[name] = value
        parts, keyword = [], False
        for param in sig.params:
            if param.name not in given:
                keyword = True
                continue
            value = self.ex(given[param.name])
            parts.append(f"{param.name}={value}" if keyword else value)
        return ", ".join(parts)

    def _ex_Call(self, e: A.Call) -> str:
        info = self.info.calls.get(id(e))
        kind = info.kind
        if kind == "builtin":
            args = [self.ex(a) for a in e.args]
            name = info.name
            if name == "range":
                return f"list(range({args[0]}))"
            if name == "str":
                return f"_str({args[0]})"
            return f"{name}({', '.join(args)})"
        if kind == "container":
            obj = self.ex(e.func.obj)
            args = [self.ex(a) for a in e.args] + [self.ex(v) for _, v, _ in e.kwargs]
            if info.name in ("keys", "values"):
                return f"list({obj}.{info.name}())"
            if info.name == "remove":
                return f"{obj}.pop({args[0]}, None)"
            return f"{obj}.{info.name}({', '.join(args)})"
        args = self._args(e, info.sig)
        if kind == "method":
            obj = self.ex(e.func.obj)
            if "{" in info.py:
                values = [obj] + [self.ex(a) for a in self._ordered_args(e, info.sig)]
                text = info.py
                for i, v in enumerate(values):
                    text = text.replace("{%d}" % i, v)
                return text
            return f"{obj}.{info.py}({args})"
        if kind == "value":
            return f"{self.ex(e.func)}({args})"
        return f"{info.py}({args})"

    @staticmethod
    def _ordered_args(e: A.Call, sig) -> list[A.Expr]:
        given = {p.name: a for p, a in zip(sig.params, e.args)}
        given.update({name: value for name, value, _ in e.kwargs})
        return [given[p.name] for p in sig.params if p.name in given]


def compile_module(checked: CheckedModule, probe: ProbeSite | None = None) -> CompiledModule:
    """Compile a module that checked without errors (instrumented when given a ``probe``)."""
    assert checked.ok, "compile_module needs a module without check errors"
    return Compiler(checked, probe).compile()


def _used_modules(c: CheckedModule) -> list[CheckedModule]:
    """Every module c uses, directly or through another module, each once and before its users
    (a module's definitions call those of the modules it uses)."""
    ordered: list[CheckedModule] = []

    def visit(m: CheckedModule) -> None:
        for used in m.uses:
            if all(used is not seen for seen in ordered):
                visit(used)
                ordered.append(used)
    visit(c)
    return ordered
