"""Checked module -> Python syntax tree -> one code object.

Like Jinja2, fumarole compiles each policy file once to Python and keeps the
code object; evaluating a rule is running Python, never walking a tree.

The Python is built as ``ast`` nodes, never as text: a policy's strings and
numbers become ``ast.Constant`` values and its names become prefixed
identifiers, so no policy text can ever be read as code (docs/language.md,
"Safety").  The only Python written as text is the runtime's own: the ``py``
expressions of ``runtime/schema.yaml``, parsed once, whose ``{0}``, ``{1}``...
placeholders are replaced by *nodes* afterwards.

A compiled plugin or action is a *builder*: ``__build__(_rt, _H, _args)`` runs
once per session and returns its hook closures.  ``_rt`` is the session runtime,
``_H`` the session's hook dispatchers, ``_args`` the typed arguments from the
bundle.  Policy names are prefixed in the generated code (``v_`` locals, named
here by ``local_names.py``, ``a_`` arguments, ``s_`` state, ``c_`` constants,
``f_`` definitions) so no policy name can reach a Python builtin or the
runtime's internals.

Every loop iteration, every element a comprehension or ``range`` produces and
every character or item a ``+`` of strings or lists copies is a *step* charged
to the session's budget ``_B`` (runtime/framework/budget.py), so every policy
ends.
"""

from __future__ import annotations

import ast as py
import copy
import re
from functools import lru_cache
from typing import Callable, Sequence, TypeVar, Union

from . import ast as A
from .checked import CheckedModule, HookInfo, Ref
from .local_names import LocalNames
from .compiled import ACTION_HOOK_PREFIX, PLUGIN_HOOK_PREFIX, PROCESS_STATE_ENTRY, STATE_VIEW, CompiledModule, fail_code
from .types import NUMERIC, Type
from .pynodes import assign as _assign
from .pynodes import attr as _attr
from .pynodes import call as _call
from .pynodes import const as _const
from .pynodes import load as _load
from .pynodes import store as _store
from .walk import preorder

# Numbers a decision point for instrumented code: (file, condition or victim, the node it belongs to) -> id.
# Without one (the normal case) the generated code has no probes at all.
ProbeSite = Callable[[str, A.Expr, object], int]


_CODE_STATUS = {"unschedulable": "Unschedulable", "unresolvable": "UnschedulableAndUnresolvable",
                "error": "Error", "invalid": "Invalid"}





# -- building blocks (the others are in pynodes) ----------------------------------------------

def _store_form(target: py.expr) -> py.expr:
    """The same target expression in store context (``x``, ``x[k]``, ``x.a``)."""
    target = copy.deepcopy(target)
    assert isinstance(target, (py.Name, py.Subscript, py.Attribute)), "a policy assigns names, entries and attributes"
    target.ctx = py.Store()
    return target


def _not(value: py.expr) -> py.expr:
    return py.UnaryOp(op=py.Not(), operand=value)


def _args_of(names: list[str]) -> py.arguments:
    return py.arguments(posonlyargs=[], args=[py.arg(arg=n) for n in names], vararg=None, kwonlyargs=[],
                        kw_defaults=[], kwarg=None, defaults=[])


_BINOPS = {"+": py.Add, "-": py.Sub, "*": py.Mult, "%": py.Mod}
_CMPOPS = {"==": py.Eq, "!=": py.NotEq, "<": py.Lt, "<=": py.LtE, ">": py.Gt, ">=": py.GtE,
           "in": py.In, "not in": py.NotIn}
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


@lru_cache(maxsize=None)
def _parsed_template(text: str) -> py.expr:
    """A schema ``py`` expression, its ``{N}`` placeholders read as names ``_arg_N_``.

    Only the runtime's own declarations (runtime/schema.yaml, hooks.yaml) are
    parsed here; no policy text ever is.
    """
    tree = py.parse(_PLACEHOLDER.sub(r"_arg_\1_", text), mode="eval").body
    for node in py.walk(tree):  # positions come from the policy statement it is used in
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, attr):
                delattr(node, attr)
    return tree


class _Fill(py.NodeTransformer):
    def __init__(self, values: list[py.expr]) -> None:
        self.values = values

    def visit_Name(self, node: py.Name) -> py.expr:
        match = re.fullmatch(r"_arg_(\d+)_", node.id)
        if match is None:
            return node
        return copy.deepcopy(self.values[int(match.group(1))])


def template(text: str, values: Sequence[py.expr] = ()) -> py.expr:
    """The schema expression ``text`` with ``{N}`` replaced by the node ``values[N]``."""
    return _Fill(list(values)).visit(copy.deepcopy(_parsed_template(text)))


def _default_value(t: Type) -> py.expr:
    if t.optional:
        return _const(None)
    if t.name == "map":
        return py.Dict(keys=[], values=[])
    if t.name == "list":
        return py.List(elts=[], ctx=py.Load())
    if t.name == "Resource":
        return _call(_attr(_load("_res"), "Resource"))
    zeros: dict[str, int | float | bool | str] = {"int": 0, "float": 0.0, "bool": False, "string": ""}
    return _const(zeros.get(t.name))


class UncheckedType(AssertionError):
    """The checker let through an expression without a known type: a checker bug, never compiled."""


_Placed = TypeVar("_Placed", bound=Union[py.stmt, py.expr])  # a node given a line of its own


class Compiler:
    def __init__(self, checked: CheckedModule, probe: ProbeSite | None = None) -> None:
        self.c = checked
        self.probe = probe
        self.line_map: list[tuple[int, int]] = []
        self.file_map: list[str] = []  # per generated line: the used module's file, "" for this module's
        self.file = ""  # the used module whose definitions are being generated
        self.temp = 0
        self.hook: HookInfo | None = None
        self.info = checked  # tables of the module currently being emitted
        self._local_names: dict[str, LocalNames] = {}  # module file -> the Python names of its locals
        self.globals: dict[str, str] = {}  # session global (its Python expression) -> hoisted local
        self.rename: dict[str, str] = {}  # local Python name -> the name to emit instead
        self.build: py.FunctionDef  # the builder, once lowered
        self.hooks: dict[str, str] = {}  # what the builder hands out -> the Python function, once lowered

    # -- tables and positions -------------------------------------------------------
    def t(self, e: A.Expr) -> Type:
        """The checked type of ``e``.  Code is generated only from a module that checked without
        errors, where every expression has a known type; an unknown one would compile to an
        operator chosen blind (one the budget does not charge), so it is a hard failure."""
        found = self.info.types.get(e.nid)
        if found is None or found.name == "unknown":
            raise UncheckedType(f"{self.info.module.file}:{e.span.line}:{e.span.col}: "
                                f"the checker left this {type(e).__name__} {'untyped' if found is None else 'of unknown type'}")
        return found

    @property
    def names(self) -> LocalNames:
        """The Python names of the locals of the module being emitted (this one or a used one)."""
        return self.names_of(self.info)

    def names_of(self, m: CheckedModule) -> LocalNames:
        """The Python names of the locals of ``m``, chosen once per compile."""
        found = self._local_names.get(m.module.file)
        if found is None:
            found = self._local_names[m.module.file] = LocalNames(m)
        return found

    def name_of(self, ref: Ref) -> str:
        """The Python name a use of a policy name reads."""
        return self.names.read(ref)

    def at(self, node: _Placed, span=None) -> _Placed:
        """Give ``node`` its own line number in the code object, mapped back to ``span``."""
        self.line_map.append((span.line, span.col) if span is not None else (0, 0))
        self.file_map.append(self.file)
        node.lineno = node.end_lineno = len(self.line_map)
        node.col_offset = node.end_col_offset = 0
        return node

    def fresh(self, base: str) -> str:
        self.temp += 1
        return f"_{base}{self.temp}"

    # -- module ---------------------------------------------------------------------
    @property
    def takes_batch_forms(self) -> bool:
        """Whether the builder gets the fast engine's batch forms (stage 6, ``vectorize.py``): a
        plugin's or action's does, unless instrumented (a probed rule runs node by node); a
        module's definitions are emitted again in the builder of each policy using them."""
        return self.c.module.kind != "module" and self.probe is None

    def lower(self) -> None:
        """Stage 5: the module's builder ``__build__`` as a Python syntax tree, up to the hooks it
        hands out (:meth:`assemble` adds that and makes the code object)."""
        c = self.c
        build = self.at(py.FunctionDef(name="__build__", args=_args_of(["_rt", "_H", "_args"]), body=[],
                                       decorator_list=[], returns=None), c.module.span)
        self.build = build
        body = build.body
        body.append(self.at(_assign(_store("_B"), _call("_budget_of", _load("_rt")))))
        uses = _used_modules(c)
        for m in [c, *uses]:
            if any(t.name == "unknown" for t in m.types.values()):
                raise UncheckedType(f"{m.module.file}: the checker left an expression of unknown type")
        for name, decl in c.args.items():
            body.append(self.at(_assign(_store(f"a_{name}"), py.Subscript(value=_load("_args"), slice=_const(name),
                                                                          ctx=py.Load())), decl.span))
        for name, t in c.states.items():
            value = _default_value(t)
            if name in c.process_states:  # the scheduler process's value, kept from the last session
                value = _call(template("_rt.process_state.plugin_value"), _const(c.module.name), _const(name), value)
            body.append(self.at(_assign(_store(f"s_{name}"), value)))
        # Session globals do not change during a session: read each once.
        hoisted = sorted({ref.py for m in [c, *uses] for ref in m.refs.values() if ref.kind == "global"})
        self.globals = {text: f"g_{i}" for i, text in enumerate(hoisted)}
        for text, local in self.globals.items():
            body.append(self.at(_assign(_store(local), template(text))))
        for used in uses:
            self.info = used
            self.file = used.module.file
            body.extend(self._definitions(used))
            self.file = ""
        self.info = c
        body.extend(self._definitions(c))
        hooks: dict[str, str] = {}
        for hook in c.hooks:
            if hook.decl in hooks.values():
                continue
            fn, node = self._hook(hook)
            body.append(node)
            for name in hook.decl.names:
                hooks[name] = fn
        if c.module.kind == "module":
            # A module's builder hands out its definitions (the test runner calls them).
            hooks = {name: f"f_{name}" for name in c.defs}
        self.hooks = hooks

    def add(self, statements: list[py.stmt]) -> None:
        """Statements for the builder, after the hooks and definitions (stage 6's batch forms)."""
        self.build.body.extend(self.at(stmt) for stmt in statements)

    def assemble(self, batch_fallbacks: list) -> CompiledModule:
        """The builder's last statement, the hooks it hands out, and its one code object;
        ``batch_fallbacks``: the node rules stage 6 left to per-node code."""
        c, hooks, body = self.c, self.hooks, self.build.body
        keys: list[py.expr | None] = [_const(n) for n in hooks]
        values: list[py.expr] = [_load(fn) for fn in hooks.values()]
        if c.process_states:  # what the session saves at close (runtime/framework/process_state.py)
            saved = self._state_map(c.process_states)
            keys.append(_const(PROCESS_STATE_ENTRY))
            values.append(py.Lambda(args=_args_of([]), body=saved))
        if c.states and c.module.kind == "plugin":
            # Read-only view of the plugin's state for tools that watch sessions (what-if replay
            # reads proportion's `deserved`); not a hook, so no dispatcher ever calls it.
            keys.append(_const(STATE_VIEW))
            values.append(py.Lambda(args=_args_of([]), body=self._state_map(c.states)))
        body.append(self.at(py.Return(value=py.Dict(keys=keys, values=values))))
        tree = py.Module(body=[self.build], type_ignores=[])
        py.fix_missing_locations(tree)
        code = compile(tree, f"<policy {c.module.file}>", "exec")
        return CompiledModule(c.module.kind, c.module.name, c.module.file, tree, code, self.line_map,
                              tuple(hooks), dict(c.args), dict(c.arg_types), batch_fallbacks,
                              {name: c.states[name] for name in c.process_states}, self.file_map)

    @staticmethod
    def _state_map(names) -> py.Dict:
        """``{'name': s_name, ...}``: the current values of these state variables."""
        return py.Dict(keys=[_const(n) for n in names], values=[_load(f"s_{n}") for n in names])

    def _definitions(self, m: CheckedModule) -> list[py.stmt]:
        out: list[py.stmt] = []
        for decl in m.module.decls:
            if isinstance(decl, A.ConstDecl):
                out.append(self.at(_assign(_store(f"c_{decl.name}"), self.ex(decl.value)), decl.span))
            elif isinstance(decl, A.FuncDef):
                out.append(self._def(decl))
        return out

    def _nonlocals(self, func_node) -> list[py.stmt]:
        assigned = self.info.assigned_states.get(func_node.nid)
        return [self.at(py.Nonlocal(names=[f"s_{n}" for n in sorted(assigned)]))] if assigned else []

    def _function(self, name: str, params: list[str], span) -> py.FunctionDef:
        return self.at(py.FunctionDef(name=name, args=_args_of(params), body=[], decorator_list=[], returns=None),
                       span)

    def _def(self, decl: A.FuncDef) -> py.FunctionDef:
        fn = self._function(f"f_{decl.name}", [self.names.declared(p) for p in decl.params], decl.name_span)
        fn.body.extend(self._nonlocals(decl))
        fn.body.extend(self.call_charge(decl))
        self.hook = None
        if isinstance(decl.body, tuple):
            fn.body.extend(self.block(decl.body))
        else:
            fn.body.append(self.at(py.Return(value=self.ex(decl.body)), decl.body.span))
        return fn

    def _hook(self, hook: HookInfo) -> tuple[str, py.FunctionDef]:
        decl, kind = hook.decl, hook.sig.kind
        prefix = ACTION_HOOK_PREFIX if self.info.module.kind == "action" else PLUGIN_HOOK_PREFIX
        name = prefix + "_".join(decl.names)
        params = [self.names.declared(span) for _, span in decl.params]
        self.hook = hook
        if hook.key_form:
            return name, self._key_order(name, decl, params[0])
        fn = self._function(name, params, decl.name_span)
        body = fn.body
        body.extend(self._nonlocals(decl))
        if kind == "victims":
            body.append(self.at(_assign(_store("_victims"), py.List(elts=[], ctx=py.Load())), decl.span))
        elif kind == "failure":
            body.append(self.at(_assign(_store("_statuses"), py.List(elts=[], ctx=py.Load())), decl.span))
        if isinstance(decl.body, tuple):
            body.extend(self.block(decl.body))
        else:
            value = self.ex(decl.body)
            if kind == "victims":
                value = py.Tuple(elts=[_call("list", value), _const(1)], ctx=py.Load())
            body.append(self.at(py.Return(value=value), decl.body.span))
        ending = self._hook_ending(kind)
        if ending is not None:
            body.append(self.at(ending))
        return name, fn

    @staticmethod
    def _failure() -> py.expr:
        """``_FitError(_statuses) if _statuses else None``"""
        return py.IfExp(test=_load("_statuses"), body=_call("_FitError", _load("_statuses")), orelse=_const(None))

    def _hook_ending(self, kind: str | None) -> py.Return | None:
        """The statement that ends a hook of this kind when its body falls through (or says `return`)."""
        if kind == "victims":
            return py.Return(value=py.Tuple(elts=[_load("_victims"), _const(1)], ctx=py.Load()))
        if kind == "failure":
            return py.Return(value=self._failure())
        if kind == "vote":
            return py.Return(value=_const(0))
        return None

    def _key_order(self, name: str, decl: A.HookDef, param: str) -> py.FunctionDef:
        order = decl.body[0] if isinstance(decl.body, tuple) else None
        assert isinstance(order, A.OrderBy), "a key order hook's body is one order by"
        fn = self._function(name, ["_l", "_r"], decl.name_span)
        for key, desc in order.keys:
            # The key expression is emitted once per side, with the parameter renamed.
            self.rename = {param: "_l"}
            fn.body.append(self.at(_assign(_store("_a"), self.ex(key)), key.span))
            self.rename = {param: "_r"}
            fn.body.append(self.at(_assign(_store("_b"), self.ex(key)), key.span))
            self.rename = {}
            first, second = (1, -1) if desc else (-1, 1)
            less = py.Compare(left=_load("_a"), ops=[py.Lt()], comparators=[_load("_b")])
            result = py.IfExp(test=less, body=_const(first), orelse=_const(second))
            differ = py.Compare(left=_load("_a"), ops=[py.NotEq()], comparators=[_load("_b")])
            fn.body.append(self.at(py.If(test=differ, body=[self.at(py.Return(value=result), key.span)], orelse=[]),
                                   key.span))
        fn.body.append(self.at(py.Return(value=_const(0))))
        return fn

    # -- statements ---------------------------------------------------------------------
    def block(self, stmts) -> list[py.stmt]:
        out: list[py.stmt] = []
        for stmt in stmts:
            out.extend(self.stmt(stmt))
        return out

    def stmt(self, s: A.Stmt) -> list[py.stmt]:
        return getattr(self, "_st_" + type(s).__name__)(s)

    def _cond(self, cond: A.Expr, owner: object) -> py.expr:
        """A condition's code; instrumented, ``_probe(n, cond)`` counts each outcome (coverage, explanations)."""
        if self.probe is None:
            return self.ex(cond)
        return _call("_probe", _const(self.probe(self.info.module.file, cond, owner)), self.ex(cond))

    def _st_When(self, s: A.When) -> list[py.stmt]:
        return [self.at(py.If(test=self._cond(s.cond, s), body=self.stmt(s.stmt), orelse=[]), s.span)]

    def _st_Let(self, s: A.Let) -> list[py.stmt]:
        return [self.at(_assign(_store(self.names.declared(s)), self.ex(s.value)), s.span)]

    def _target(self, target: A.Expr) -> py.expr:
        """The target's code in load context; ``_store_form`` turns it into an assignment target."""
        if isinstance(target, A.Name):
            return _load(self.name_of(self.info.ref_of(target)))
        return self.ex(target)

    def _st_Assign(self, s: A.Assign) -> list[py.stmt]:
        return [self.at(_assign(_store_form(self._target(s.target)), self.ex(s.value)), s.span)]

    def _st_AugAssign(self, s: A.AugAssign) -> list[py.stmt]:
        target = self._target(s.target)
        value = self._arith(s.op, self.t(s.target), self.t(s.value), target, self.ex(s.value))
        return [self.at(_assign(_store_form(target), value), s.span)]

    def _st_Return(self, s: A.Return) -> list[py.stmt]:
        ending = self._hook_ending(self.hook.sig.kind if self.hook else None)
        if ending is None:
            ending = py.Return(value=self.ex(s.value) if s.value is not None else None)
        return [self.at(ending, s.span)]

    def _st_Break(self, s) -> list[py.stmt]:
        return [self.at(py.Break(), s.span)]

    def _st_Continue(self, s) -> list[py.stmt]:
        return [self.at(py.Continue(), s.span)]

    def _st_Pass(self, s) -> list[py.stmt]:
        return [self.at(py.Pass(), s.span)]

    def _st_Victim(self, s: A.Victim) -> list[py.stmt]:
        assert s.value is not None, "a one-line `victim when` rule is expanded before compiling"
        value = self.ex(s.value)
        if self.probe is not None:  # record which rule picked which task
            value = _call("_pick", _const(self.probe(self.info.module.file, s.value, s)), value)
        return [self.at(py.Expr(value=_call(_attr(_load("_victims"), "append"), value)), s.span)]

    def _st_Vote(self, s: A.Vote) -> list[py.stmt]:
        if s.verdict == "abstain" and self.hook and self.hook.sig.kind == "victims":
            empty = py.Tuple(elts=[py.List(elts=[], ctx=py.Load()), _const(0)], ctx=py.Load())
            return [self.at(py.Return(value=empty), s.span)]
        return [self.at(py.Return(value=_const({"permit": 1, "reject": -1, "abstain": 0}[s.verdict])), s.span)]

    def _st_Fail(self, s: A.Fail) -> list[py.stmt]:
        statuses = _load("_statuses")
        if self.t(s.message).name == "FitError":
            failure = self.ex(s.message)
            extend = _call(_attr(statuses, "extend"), _attr(failure, "statuses"))
            stop = py.If(test=_attr(copy.deepcopy(failure), "unresolvable"),
                         body=[self.at(py.Return(value=_call("_FitError", _load("_statuses"))), s.span)], orelse=[])
            return [self.at(py.Expr(value=extend), s.span), self.at(stop, s.span)]
        code = fail_code(s, self.hook.name if self.hook else "")
        entry = py.Tuple(elts=[_const(_CODE_STATUS[code]), self.ex(s.message)], ctx=py.Load())
        out: list[py.stmt] = [self.at(py.Expr(value=_call(_attr(statuses, "append"), entry)), s.span)]
        if code != "unschedulable":  # only a plain "does not fit" lets the hook go on
            out.append(self.at(py.Return(value=_call("_FitError", _load("_statuses"))), s.span))
        return out

    def _st_ExprStmt(self, s: A.ExprStmt) -> list[py.stmt]:
        return [self.at(py.Expr(value=self.ex(s.expr)), s.span)]

    def _st_If(self, s: A.If) -> list[py.stmt]:
        orelse: list[py.stmt] = self.block(s.orelse) if s.orelse else []
        for cond, body in reversed(s.branches):
            node = self.at(py.If(test=self._cond(cond, s), body=self.block(body),
                                 orelse=orelse), cond.span)
            orelse = [node]
        return orelse

    def _step(self, span, steps: py.expr | None = None) -> py.stmt:
        """One step (or ``steps``) of the budget: ``_B.left -= 1``; :meth:`_step_check` then calls
        ``_B.spent()`` once it is spent."""
        return self.at(py.AugAssign(target=py.Attribute(value=_load("_B"), attr="left", ctx=py.Store()),
                                    op=py.Sub(), value=_const(1) if steps is None else steps), span)

    def _step_check(self, span) -> py.stmt:
        spent = py.Compare(left=_attr(_load("_B"), "left"), ops=[py.Lt()], comparators=[_const(0)])
        return self.at(py.If(test=spent, body=[self.at(py.Expr(value=_call(_attr(_load("_B"), "spent"))), span)],
                             orelse=[]), span)

    def each(self, iterable: py.expr, body: A.Node | tuple[A.Stmt, ...]) -> py.expr:
        """The iterable charged to the budget at once, one step per item.

        A list the body may append to (an ``append``, or a call that could
        reach one) is iterated only up to its length at the start, as Go's
        ``range`` does, so a loop that grows its own list still ends.
        """
        grows = any(self._may_append(node) for node in preorder(body))
        return _call(_attr(_load("_B"), "each_capped" if grows else "each"), iterable)

    def _may_append(self, node: A.Node) -> bool:
        if not isinstance(node, A.Call):
            return False
        info = self.info.calls.get(node.nid)
        return info is not None and (info.kind in ("def", "value", "dispatch") or
                                     (info.kind == "container" and info.name == "append"))

    def call_charge(self, decl: A.FuncDef, steps: py.expr | None = None) -> list[py.stmt]:
        """The charge at the entry of a definition that calls definitions or function values: a
        step (or ``steps``: a batch form's lanes) per call.  A chain of definitions each calling the
        next twice makes 2^n calls without any loop; a leaf definition is left uncharged, as every
        call of it comes from a charged caller (a loop, a hook or a charged definition)."""
        if not any(self._calls_a_function(node) for node in preorder(decl.body)):
            return []
        return [self._step(decl.name_span, steps), self._step_check(decl.name_span)]

    def _calls_a_function(self, node: A.Node) -> bool:
        if not isinstance(node, A.Call):
            return False
        info = self.info.calls.get(node.nid)
        return info is not None and info.kind in ("def", "value")

    def _st_For(self, s: A.For) -> list[py.stmt]:
        var = self.names.declared(s)
        body: list[py.stmt] = []
        if self.probe is not None:  # mark each iteration, so a decision can be tied to its item
            body.append(self.at(py.Expr(value=_call("_iter", _load(var))), s.span))
        body.extend(self.block(s.body))
        loop = py.For(target=_store(var), iter=self.each(self.ex(s.iter), s.body), body=body,
                      orelse=[])
        return [self.at(loop, s.span)]

    def _st_Drain(self, s: A.Drain) -> list[py.stmt]:
        queue = self.fresh("q")
        items = _attr(_load(queue), "items")
        cond = items if s.cond is None else py.BoolOp(op=py.And(), values=[self._cond(s.cond, s), items])
        pop = self.at(_assign(_store(self.names.declared(s)), _call(_attr(_load(queue), "pop"))), s.span)
        body = [self._step(s.span), self._step_check(s.span), pop, *self.block(s.body)]
        return [self.at(_assign(_store(queue), self.ex(s.queue)), s.span),
                self.at(py.While(test=cond, body=body, orelse=[]), s.span)]

    def _st_While(self, s: A.While) -> list[py.stmt]:
        body = [self._step(s.span), self._step_check(s.span), *self.block(s.body)]
        return [self.at(py.While(test=self._cond(s.cond, s), body=body, orelse=[]), s.span)]

    # -- expressions ----------------------------------------------------------------------
    def ex(self, e: A.Expr) -> py.expr:
        return getattr(self, "_ex_" + type(e).__name__)(e)

    def _ex_Literal(self, e: A.Literal) -> py.expr:
        return _const(e.value)

    def _ex_Name(self, e: A.Name) -> py.expr:
        ref = self.info.ref_of(e)
        if ref.kind == "global":
            return _load(self.globals[ref.py])
        if ref.kind in ("dispatch", "function"):  # a session function used as a value: its schema expression
            if "{" in ref.py:  # a template over the arguments: a function of them
                assert ref.sig is not None, "a library function has a signature"
                names = [f"_p{i}" for i in range(len(ref.sig.params))]
                return py.Lambda(args=_args_of(names), body=template(ref.py, [_load(n) for n in names]))
            return template(ref.py)
        name = self.name_of(ref)
        return _load(self.rename.get(name, name))

    def _ex_Attr(self, e: A.Attr) -> py.expr:
        return template(self.info.attr_of(e).py, [self.ex(e.obj)])

    def _ex_Index(self, e: A.Index) -> py.expr:
        return py.Subscript(value=self.ex(e.obj), slice=self.ex(e.key), ctx=py.Load())

    def _ex_Unary(self, e: A.Unary) -> py.expr:
        return py.UnaryOp(op=py.Not() if e.op == "not" else py.USub(), operand=self.ex(e.operand))

    def _arith(self, op: str, left_t: Type, right_t: Type, left: py.expr, right: py.expr) -> py.expr:
        """``left op right`` for + - * / %: strings, lists and big integers are charged to the budget.

        Only operands of known types become plain operators; any other pair (a type the checker
        could not tell) goes through ``_B.operate``, which charges and refuses at run time.
        """
        lt, rt = left_t.name, right_t.name
        if op == "/":
            return _call("_div", left, right)
        if op == "+" and lt == rt and lt in ("string", "list"):
            return _call(_attr(_load("_B"), "concat"), left, right)
        if lt in NUMERIC and rt in NUMERIC:
            if op == "*" and lt == rt == "int":
                return _call(_attr(_load("_B"), "multiply"), left, right)
            return py.BinOp(left=left, op=_BINOPS[op](), right=right)
        if lt == "Resource" and (rt == "Resource" and op in "+-" or rt in NUMERIC and op == "*"):
            return py.BinOp(left=left, op=_BINOPS[op](), right=right)
        return _call(_attr(_load("_B"), "operate"), _const(op), left, right)

    def _scanned(self, t: Type, value: py.expr) -> py.expr:
        """``value`` charged one step per item when comparing or searching it costs its size."""
        if isinstance(value, (py.Constant, py.List)):  # written in the policy: its size is the source's
            return value
        if t.name in ("list", "map", "string"):
            return _call(_attr(_load("_B"), "each"), value)
        return _call(_attr(_load("_B"), "scan"), value) if t.name == "unknown" else value

    def _ex_Binary(self, e: A.Binary) -> py.expr:
        op = e.op
        if op in ("and", "or"):  # a chain `a and b and c` is one BoolOp with three values
            chain = [e.right]
            while isinstance(e.left, A.Binary) and e.left.op == op:
                e = e.left
                chain.append(e.right)
            chain.append(e.left)
            return py.BoolOp(op=py.And() if op == "and" else py.Or(), values=[self.ex(x) for x in reversed(chain)])
        left_t, right_t = self.t(e.left), self.t(e.right)
        if op in ("==", "!=") and (left_t.name == "none" or right_t.name == "none"):
            other = e.right if left_t.name == "none" else e.left
            return py.Compare(left=self.ex(other), ops=[py.Is() if op == "==" else py.IsNot()],
                              comparators=[_const(None)])
        if left_t.name == "Resource" and op == "<=" and self._resource_sum(e.right):
            # `request <= a + b` without building the sum (resource.less_equal_sum)
            assert isinstance(e.right, A.Binary)
            return _call(_attr(_load("_res"), "less_equal_sum"), self.ex(e.left), self.ex(e.right.left),
                         self.ex(e.right.right))
        if left_t.name == "Resource" and right_t.name == "Resource" and op in ("<=", "<", "==", "!="):
            function = {"<=": "less_equal", "<": "less", "==": "equal", "!=": "equal"}[op]
            result = _call(_attr(_load("_res"), function), self.ex(e.left), self.ex(e.right))
            return _not(result) if op == "!=" else result
        if op in ("in", "not in"):  # a map looks a key up; a list or string is scanned
            container = self.ex(e.right) if right_t.name == "map" else self._scanned(right_t, self.ex(e.right))
            return py.Compare(left=self.ex(e.left), ops=[_CMPOPS[op]()], comparators=[container])
        if op in ("==", "!=") and left_t.name in ("list", "map", "unknown"):  # compared item by item
            return py.Compare(left=self._scanned(left_t, self.ex(e.left)), ops=[_CMPOPS[op]()],
                              comparators=[self.ex(e.right)])
        if op in _CMPOPS:
            left, right = self.ex(e.left), self.ex(e.right)
            if left_t.name == "string" and not isinstance(right, py.Constant):
                # two strings of one length are compared character by character (a literal bounds it)
                left = self._scanned(left_t, left)
            return py.Compare(left=left, ops=[_CMPOPS[op]()], comparators=[right])
        return self._arith(op, left_t, right_t, self.ex(e.left), self.ex(e.right))

    def _resource_sum(self, e: A.Expr) -> bool:
        """``e`` is the sum of two resources."""
        return (isinstance(e, A.Binary) and e.op == "+" and self.t(e.left).name == "Resource"
                and self.t(e.right).name == "Resource")

    def _ex_Conditional(self, e: A.Conditional) -> py.expr:
        return py.IfExp(test=self._cond(e.cond, e), body=self.ex(e.then), orelse=self.ex(e.orelse))

    def _ex_ListLit(self, e: A.ListLit) -> py.expr:
        return py.List(elts=[self.ex(i) for i in e.items], ctx=py.Load())

    def _generator(self, e: A.ListComp | A.MapComp) -> list[py.comprehension]:
        conds = [self._cond(e.cond, e.cond)] if e.cond is not None else []
        return [py.comprehension(target=_store(self.names.declared(e)), iter=self.each(self.ex(e.iter), e),
                                 ifs=conds, is_async=0)]

    def _ex_ListComp(self, e: A.ListComp) -> py.expr:
        return py.ListComp(elt=self.ex(e.elem), generators=self._generator(e))

    def _ex_MapLit(self, e: A.MapLit) -> py.expr:
        return py.Dict(keys=[self.ex(k) for k, _ in e.entries], values=[self.ex(v) for _, v in e.entries])

    def _ex_MapComp(self, e: A.MapComp) -> py.expr:
        return py.DictComp(key=self.ex(e.key), value=self.ex(e.value), generators=self._generator(e))

    def _ex_Lambda(self, e: A.Lambda) -> py.expr:
        params = _args_of([self.names.declared(span) for _, _, span in e.params])
        return py.Lambda(args=params, body=self.at(self.ex(e.body), e.body.span))  # its own position in errors

    def _given(self, e: A.Call, sig) -> dict[str, A.Expr]:
        given = {p.name: a for p, a in zip(sig.params, e.args)}
        given.update({name: value for name, value, _ in e.kwargs})
        return given

    def _args(self, e: A.Call, sig) -> tuple[list[py.expr], list[py.keyword]]:
        """Positional arguments in parameter order; after a skipped optional one, keywords."""
        given = self._given(e, sig)
        args: list[py.expr] = []
        keywords: list[py.keyword] = []
        skipped = False
        for param in sig.params:
            if param.name not in given:
                skipped = True
            else:
                value = self.ex(given[param.name])
                if sig.sized and param.type.name == "string":  # the function reads or copies all of it
                    value = self._scanned(param.type, value)
                if skipped:
                    keywords.append(py.keyword(arg=param.name, value=value))
                else:
                    args.append(value)
        return args, keywords

    def _ex_Call(self, e: A.Call) -> py.expr:
        info = self.info.call_of(e)
        kind = info.kind
        if kind == "builtin":
            args = [self.ex(a) for a in e.args]
            if info.name == "range":
                return _call(_attr(_load("_B"), "range"), *args)
            if info.name == "str":
                return _call(_attr(_load("_B"), "text"), *args, _load("_str"))
            if info.name in ("sum", "max", "min") and len(args) == 1:  # of a list: one step per item
                return _call(info.name, _call(_attr(_load("_B"), "each"), args[0]))
            return _call(info.name, *args)
        if kind == "container":
            obj = self.ex(A.receiver(e))
            args = [self.ex(a) for a in e.args] + [self.ex(v) for _, v, _ in e.kwargs]
            if info.name in ("keys", "values", "copy"):  # a new list or map: one step per item
                return _call(_attr(_load("_B"), info.name), obj)
            if info.name == "remove":
                return _call(_attr(obj, "pop"), args[0], _const(None))
            return _call(_attr(obj, info.name), *args)
        args, keywords = self._args(e, info.sig)
        if kind == "method":
            obj = self.ex(A.receiver(e))
            if "{" in info.py:
                assert info.sig is not None, "a method has a signature"
                given = self._given(e, info.sig)
                values = [obj] + [self.ex(given[p.name]) for p in info.sig.params if p.name in given]
                return template(info.py, values)
            return _call(_attr(obj, info.py), *args, keywords=keywords)
        if kind == "value":  # a step per call, as a definition calling others
            return _call(_call(_attr(_load("_B"), "called"), self.ex(e.func)), *args, keywords=keywords)
        if "{" in info.py:  # a library function of the session (``_rt``): its arguments fill the template
            assert info.sig is not None, "a library function has a signature"
            given = self._given(e, info.sig)
            return template(info.py, [self.ex(given[p.name]) for p in info.sig.params if p.name in given])
        return _call(template(info.py), *args, keywords=keywords)


def lower_module(checked: CheckedModule, probe: ProbeSite | None = None) -> Compiler:
    """Stage 5 for a module that checked without errors (instrumented when given a ``probe``):
    a compiler holding its builder's syntax tree (``driver.compile_checked`` runs the rest)."""
    assert checked.ok, "lower_module needs a module without check errors"
    compiler = Compiler(checked, probe)
    compiler.lower()
    return compiler


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
