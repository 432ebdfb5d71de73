"""Batch forms: node-level rules compiled to run over many nodes at once.

Beside the per-node function the compiler emits for a hook or definition, this
module emits a *batch form* that evaluates the same rule for every node of a
batch with array operations (``runtime/framework/vector_lib.py`` is ``_V``).
The engine, not the author, decides how a rule runs: the fast engine calls the
batch forms; the reference engine calls the per-node functions.

What gets a batch form:

* node-level hooks (``predicate``, ``node_order``) and definitions with a
  ``Node`` parameter: the node becomes a batch, every expression that depends
  on it a column (an array with one lane per node);
* hooks and definitions with a ``list[Node]`` parameter (``batch_node_order``,
  ``best_scored``): comprehensions and loops over the list run lane-wise;
* definitions taking a per-node map (``map[Node, X]`` built over a node list)
  and plain values: the map is a column, ``max`` / ``min`` of its values are
  taken over it.

A failure hook's answer over lanes says which lanes fail; reading a fit
error's attribute (``failure.unresolvable``) asks the call that made it again,
node by node, for the failing lanes only.

Control flow on a column condition runs both branches under masks (a lane's
``return`` fixes its result and retires it).  An expression with no array form
runs lane by lane through the per-node code of that expression; a rule whose
shape cannot be run lane-wise at all (effects, a ``break`` that depends on the
node, a loop over the nodes that carries values between them) has no batch
form, and :func:`fallbacks` says why.

Row memos.  A call, inside a batch form, of a definition taking one node and
otherwise plain values (``f(task, node)``) whose body is *row-local* is
evaluated once over every node of the session per distinct argument key and
then kept current row by row (``NodeColumns.memo``): the batch gathers the
memoised values instead of evaluating the definition again.  A body is
row-local when all it reads is its node's columns
(:data:`ROW_NODE_ATTRIBUTES`: the session marks a node's row touched whenever
they change), the task's requests (:data:`ROW_TASK_ATTRIBUTES`, the key the
runtime computes from them), plain arguments, constants and plugin ``arg``s,
and when all it calls is pure: built-ins, ``_math``, resource getters,
row-local definitions and the library functions of
:data:`ROW_LOCAL_LIBRARY`.  Plugin state, session globals, hooks, other nodes,
loops over anything but plain values: not row-local, evaluated per call.

Code is built as Python ``ast`` nodes; node-independent sub-expressions are the
per-node compiler's own nodes for them, so both forms agree by construction.
Literals enter as constant nodes, never as text.
"""

from __future__ import annotations

import ast as P
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Callable

from . import ast as A
from .compiled import BATCH_HOOK_PREFIX, fail_code
from .pynodes import assign as _assign
from .pynodes import call as _call
from .pynodes import const as _const
from .pynodes import load as _name
from .pynodes import store as _store
from .types import Type
from .walk import preorder, statements

if TYPE_CHECKING:  # annotations only
    from .checked import CheckedModule
    from .compiler import Compiler

SCALAR, NODE, VECTOR, RESOURCES, FAILS, NAMES, BATCH, NODEMAP = "S", "N", "V", "R", "E", "L", "B", "M"
# The node-level hooks the fast engine asks over many nodes at once.
BATCH_HOOKS = ("predicate", "node_order", "batch_node_order")
_LANE_KINDS = (NODE, VECTOR, RESOURCES, FAILS, NAMES)
# The local a batch form keeps its lanes' returned values in; not ``_res``, the resource library
# per-node code reads (``_res.Resource()``) from inside the form's lane-by-lane parts.
_RESULT = "_returned"
# What one call of a batch form costs beyond its lanes, in steps of per-node code: the array
# set-up (masks, memo look-ups, the result) takes as long as about this many loop iterations.
BATCH_CALL_STEPS = 100
# Methods and functions with effects: a rule calling them has no batch form.
_EFFECT_TYPES = frozenset({"Statement", "PriorityQueue", "PredicateHelper", "Extender"})
_EFFECT_NAMES = frozenset({"statement", "predicate_helper", "priority_queue", "pod_view", "add", "remove",
                           "record_fit_error", "record_fit_errors", "set_condition", "dry_run_copy"})

# Methods of lists and maps that change nothing (``append`` and ``remove`` do).
_CONTAINER_READS = frozenset({"copy", "get", "keys", "values"})

# Node attributes kept as columns (runtime/framework/node_columns.py): a row-local body may read them.
ROW_NODE_ATTRIBUTES = frozenset({"allocatable", "capacity", "idle", "used", "releasing", "pipelined",
                                 "future_idle", "view_requested", "view_nonzero_requested", "max_task_num",
                                 "pod_count", "unschedulable"})
# Node attributes a session never changes that a row-local body may read besides its columns.
ROW_NODE_CONSTANTS = frozenset({"name"})
# Task attributes a row-local body may read; the runtime's memo key for a task is their values
# (the GPU asks are its containers' limits: the key's pod spec covers them).
ROW_TASK_ATTRIBUTES = frozenset({"request", "init_request", "nonzero_request", "gpu_memory", "gpu_number"})
# Plain values a row state (runtime/framework/row_state.py) may map node names to.
_ROW_STATE_VALUES = frozenset({"int", "float", "bool", "string"})
# Library functions of (task, node) that read only ROW_TASK_ATTRIBUTES of the task and the node's columns.
# Of the pod, these read its requests and its spec (the runtime's key for a task covers both).
ROW_LOCAL_LIBRARY = frozenset({"_k8s.balanced_allocation_score", "_k8s.matches_node_selector_and_affinity",
                               "_k8s.has_node_selection", "_k8s.untolerated_taint", "_k8s.tolerates_unschedulable",
                               "_k8s.host_port_conflict"})
# Pure functions of plain values a node check may also call (resource arithmetic is too, ``_res.``):
# as a whole memo (a check's answers per pod spec) their cost goes with the row, not the task.
_CHECK_LIBRARY = frozenset({"_sched.fit_error(_rt, {0})"})
_PURE_BUILTINS = frozenset({"float", "int", "min", "max", "abs", "len", "bool", "str"})
_ROW_LOCAL_RESULTS = frozenset({"int", "float", "bool"})


class NotVectorisable(Exception):
    """The rule has no batch form; the message says why (``check --strict`` reports it).
    ``effect``: because it changes something (state, a statement, an extender's view), so it
    must also never be asked twice or for nodes the per-node scan would not ask."""

    def __init__(self, reason: str, span=None, effect: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.span, self.effect = reason, span, effect


@dataclass
class Fallback:
    rule: str
    file: str
    line: int
    col: int
    reason: str


class _Function:
    """Translation state of one batch form."""

    def __init__(self, lane: str | None, dom: str | None, kinds: dict[str, str]) -> None:
        self.lane, self.dom = lane, dom  # the per-lane node's Python name and the batch holding the lanes
        self.kinds = kinds  # Python local -> kind
        self.mask: P.expr | None = None  # the lanes the current branch runs for; None: every live lane
        self.live = False  # some lane returned already (``_live`` holds the rest)
        self.temp = 0
        self.result = "value"  # value / fails / fits
        self.seed: dict[str, str] = {}  # kinds an earlier pass found for locals
        self.fit_errors: dict[str, A.Call] = {}  # a per-node fit error local -> the hook call it holds
        # A rule of one node (a Node parameter), whose per-node code runs once per node; not the
        # lanes of a loop over a node list, whose per-node code runs once over the list.
        self.node_rule = False

    @property
    def batch(self) -> str:
        """``dom`` where the code being emitted runs over the lanes of a batch (there it is set)."""
        assert self.dom is not None, "lane code outside a form over nodes"
        return self.dom


def _callee(call: A.Call) -> str:
    """The name a function or dispatcher is called by (asked of calls the checker found to be one)."""
    assert isinstance(call.func, A.Name), "a function's callee is its name"
    return call.func.id


class Vectorizer:
    """Emits the batch forms of one compiled module (inside its ``__build__``)."""

    def __init__(self, compiler) -> None:
        self.base = compiler  # the per-node compiler: tables and the code of node-independent expressions
        self.defs: dict[tuple[str, tuple[str, ...]], str] = {}  # (def python name, argument kinds) -> batch name
        self.emitted: list[P.stmt] = []
        self.failed: dict[tuple[str, tuple[str, ...]], NotVectorisable] = {}  # same keys: why each failed
        self.fn: _Function | None = None
        self.modules = [compiler.c, *compiler.c.uses]
        self.row_local: dict[tuple[str, str], bool] = {}  # (module, def) -> body is row-local
        self._rl_hooks: tuple[list[str], list[str]] | None = None  # a node check's (params, hooks it asks)
        self.failing_hook = ""  # the failure hook whose batch form is being emitted (its `fail` codes)
        self.held = 0  # locals holding the lanes a short-circuit leaves to its right side (_k1, _k2...)
        self.row_states: list[str] = []  # the module's states row-local rules read at their node's name

    @property
    def current(self) -> _Function:
        """The function whose body is being vectorised (asked only while one is)."""
        assert self.fn is not None, "vectorising outside a function body"
        return self.fn

    # -- entry points ------------------------------------------------------------------------
    def emit(self) -> tuple[list[P.stmt], list[Fallback]]:
        """Batch forms for the module's node-level hooks and definitions, and the rules that have none."""
        out: list[P.stmt] = []
        fallbacks: list[Fallback] = []
        c = self.base.c
        for hook in c.hooks:
            if hook.key_form or hook.name not in BATCH_HOOKS:
                continue
            params = [t.name for t in hook.sig.params]
            if "Node" not in params and "list" not in params:
                continue
            fn = "_hook_" + "_".join(hook.decl.names)
            per_node_only = P.Expr(value=_call("_rt.batch_forms.mark_per_node_only", _name(fn)))
            try:
                batch, body, switches = self._hook_switched(hook, c)
            except NotVectorisable as exc:
                fallbacks.append(self._fallback(" ".join(hook.decl.names), c, exc, hook.decl.span))
                if exc.effect:  # the session's dispatcher then runs this hook node by node only
                    out.append(per_node_only)
                continue
            session = [s for s in switches if self._with_module(c, partial(self._session_constant, s))]
            per_call = [s for s in switches if s not in session]
            guard = self._hook_guard(hook, c, body)
            if per_call:  # node by node for a call where one holds: neither the form nor a row memo
                params = [self.base.names_of(c).declared(span) for _, span in hook.decl.params]
                holds = self._with_module(c, lambda: _lambda(params, _any([self.base.ex(s) for s in per_call])))
                batch_run: str | P.expr = _call("_V.per_node_when", _name(batch), holds)
                if isinstance(guard, P.Lambda):
                    guard = _lambda(params, _any([holds.body, guard.body]))
            else:
                batch_run = batch
            registered = _register(fn, batch_run, guard=guard)
            if session:  # node by node only in a session where a switch holds (its arguments say so)
                test = self._with_module(c, lambda: _any([self.base.ex(s) for s in session]))
                registered = P.If(test=test, body=[per_node_only], orelse=[registered])
            out.append(registered)
        for m in self.modules:
            for name, decl in m.defs.items():
                kinds = tuple(self._param_kind(m, p) for p in decl.params)
                if not (set(kinds) & {NODE, BATCH}):
                    continue
                try:
                    batch = self._def(m, decl, kinds)
                except NotVectorisable as exc:
                    if m is c and _is_node_check(decl):  # a predicate_nodes check: a node rule
                        fallbacks.append(self._fallback(name, m, exc, decl.span))
                    continue
                if BATCH in kinds:
                    positions = P.Tuple(elts=[_const(i) for i, k in enumerate(kinds) if k == BATCH], ctx=P.Load())
                    out.append(_assign(f"f_{name}", _call("_rt.batched", _name(f"f_{name}"), _name(batch),
                                                          positions)))
                else:
                    test = self._check_row_local_test(m, decl) if _is_node_check(decl) else None
                    out.append(_register(f"f_{name}", batch, row_local=test))
        # The states row-local rules read become row states before any hook runs (row_state.py).
        wrapped = [_assign(f"s_{name}", _call("_rt.row_state", _name(f"s_{name}"))) for name in self.row_states]
        return wrapped + self.emitted + out, fallbacks

    @staticmethod
    def _fallback(rule: str, m: CheckedModule, exc: NotVectorisable, span) -> Fallback:
        where = exc.span or span
        return Fallback(rule, m.module.file, where.line, where.col, exc.reason)

    @staticmethod
    def _param_kind(m: CheckedModule, p: A.Param) -> str:
        t = p.type
        if t.name == "Node" and not t.optional:
            return NODE
        if t.name == "list" and t.args and t.args[0].name == "Node":
            return BATCH
        return SCALAR

    # -- functions ------------------------------------------------------------------------------
    def _with_module(self, m: CheckedModule, body: Callable[[], object]):
        """``body()`` with the per-node compiler's tables, and the file its positions name, of ``m``."""
        saved = self.base.info, self.base.file
        self.base.info, self.base.file = m, ("" if m is self.base.c else m.module.file)
        try:
            return body()
        finally:
            self.base.info, self.base.file = saved

    def _hook_switched(self, hook, m: CheckedModule) -> tuple[str, tuple, list]:
        """The hook's batch form, the body it stands for and the conditions of the blocks left out.

        A top-level ``if`` (no ``elif``/``else``) whose condition reads no node and has no effect
        is a *switch*: its condition holds or not for a whole call over a batch, and when it reads
        only the plugin's arguments and constants (:meth:`_session_constant`), for the whole
        session.  When such a block has no batch form (it changes state: predicates' ``if cache
        and template_of(task) != ""``), the form is made of the body without it, which is the
        hook itself wherever the condition is false (the block does nothing there).  Where it
        holds, the hook runs node by node: a session switch makes the builder mark the hook
        node-by-node only instead of registering the form; any other switch is tested when the
        form is called (``vector_lib.per_node_when``), and joins the hook's guard so no row memo
        answers for a call it holds for.  So only the sessions and calls switching the block on
        pay for it."""
        body = hook.decl.body
        switches: list[A.If] = []
        while True:
            try:
                return self._hook(hook, m, body), body, [s.branches[0][0] for s in switches]
            except NotVectorisable as exc:
                block = None
                if isinstance(body, tuple) and exc.span is not None:  # (an expression body has no block)
                    block = next((s for s in body if isinstance(s, A.If) and self._is_switch(s, hook, m)
                                  and any(n.span == exc.span for n in preorder(s))), None)
                if block is None:
                    raise
                switches.append(block)
                body = tuple(s for s in body if s is not block)

    def _is_switch(self, s: A.If, hook, m: CheckedModule) -> bool:
        """A top-level block whose condition holds or not for a whole call (see _hook_switched)."""
        if len(s.branches) != 1 or s.orelse:
            return False
        cond = s.branches[0][0]
        plain = {self.base.names_of(m).declared(span) for (_, span), t in zip(hook.decl.params, hook.sig.params)
                 if t.name != "Node" and t.name != "list"}
        return self._with_module(m, lambda: self._session_constant(cond) or (
            self._reads_no_local_but(cond, plain) and self._effect_free(cond)))

    def _reads_no_local_but(self, e, params: set[str]) -> bool:
        """Whether the only locals ``e`` reads are among ``params`` (the hook's plain parameters, as
        Python names): no node, and nothing the body computes before it."""
        for node in preorder(e):
            ref = self.base.info.refs.get(node.nid) if isinstance(node, A.Name) else None
            if ref is not None and ref.kind == "local" and self.base.name_of(ref) not in params:
                return False
        return True

    def _session_constant(self, e) -> bool:
        """Whether ``e`` reads nothing but the plugin's arguments and constants (and literals, with
        ``and``/``or``/``not`` and comparisons): a value that holds for the whole session."""
        if isinstance(e, A.Literal):
            return True
        if isinstance(e, A.Name):
            ref = self.base.info.refs.get(e.nid)
            return ref is not None and ref.kind in ("arg", "const")
        if isinstance(e, A.Unary):
            return self._session_constant(e.operand)
        if isinstance(e, A.Binary):
            return self._session_constant(e.left) and self._session_constant(e.right)
        return False

    def _hook(self, hook, m: CheckedModule, body: tuple) -> str:
        decl = hook.decl
        params = [self.base.names_of(m).declared(span) for _, span in decl.params]
        kinds = tuple(NODE if t.name == "Node" else BATCH if t.name == "list" and t.args
                      and t.args[0].name == "Node" else SCALAR for t in hook.sig.params)
        name = BATCH_HOOK_PREFIX + "_".join(decl.names)
        result = "fails" if hook.sig.kind == "failure" else "value"
        self.failing_hook = hook.name
        try:
            self._function(m, name, params, kinds, body, result, decl.span)
        finally:
            self.failing_hook = ""
        return name

    def _def(self, m: CheckedModule, decl: A.FuncDef, kinds: tuple[str, ...]) -> str:
        key = (f"{m.module.name}.{decl.name}", kinds)
        if key in self.failed:
            failure = self.failed[key]
            raise NotVectorisable(failure.reason, failure.span, failure.effect)
        if key in self.defs:
            return self.defs[key]
        name = f"_bf_{decl.name}_{''.join(kinds)}"
        self.defs[key] = name
        params = [self.base.names_of(m).declared(p) for p in decl.params]
        returns = m.def_types.get(decl.name)
        result = "value"
        if decl.returns.name == "FitError":
            result = "fits"
        try:
            self._function(m, name, params, kinds, decl.body, result, decl.span, decl)
        except NotVectorisable as exc:
            del self.defs[key]
            self.failed[key] = exc
            raise
        del returns
        return name

    def _function(self, m: CheckedModule, name: str, params: list[str], kinds: tuple[str, ...],
                  body, result: str, span, definition: A.FuncDef | None = None) -> None:
        lane = next((p for p, k in zip(params, kinds) if k == NODE), None)
        dom = "_N" if lane else None
        args = [("_N" if k == NODE else p) for p, k in zip(params, kinds)]
        if lane is None and any(k in _LANE_KINDS for k in kinds):
            args.append("_N")
            dom = "_N"
        initial = {p: k for p, k in zip(params, kinds)}
        # Kinds of locals can change in loops (a scalar becomes a column): translate until stable,
        # each pass starting from what the last one learnt.
        learnt: dict[str, str] = {}
        for _ in range(4):
            fn = _Function(lane, dom, dict(initial))
            fn.node_rule = lane is not None
            fn.seed = dict(learnt)
            fn.result = result
            stmts = self._with_module(m, lambda: self._body(fn, body))
            if fn.kinds == learnt:
                break
            learnt = dict(fn.kinds)
        prologue: list[P.stmt] = []
        if dom is not None:
            prologue += [_assign("_live", _const(None)), _assign(_RESULT, _const(None))]
            if result == "fails":
                prologue.append(_assign("_fail", _call("_V.none_failed", _name(dom))))
        if lane is not None:
            prologue.append(_assign(lane, _name("_N")))
        if definition is not None:  # charged as the per-node form's calls would be, and its own set-up
            steps: P.expr = _const(BATCH_CALL_STEPS)
            if dom is not None:
                steps = P.BinOp(left=_call("len", _name(dom)), op=P.Add(), right=steps)
            prologue += self._with_module(m, lambda: self.base.call_charge(definition, steps))
        # type_params is 3.12's field (the ignore is for the 3.10 the check targets): older Pythons take and ignore it.
        func = P.FunctionDef(name=name, args=P.arguments(posonlyargs=[], args=[P.arg(arg=a) for a in args],
                                                          kwonlyargs=[], kw_defaults=[], defaults=[]),
                             body=prologue + stmts, decorator_list=[], returns=None,
                             type_params=[])  # type: ignore[call-arg,unused-ignore]
        self.emitted.append(func)

    def _body(self, fn: _Function, body) -> list[P.stmt]:
        saved = self.fn
        self.fn = fn
        try:
            if not isinstance(body, tuple):
                node, kind = self.ex(body)
                return [self._return(node, kind, body)]
            out = self.block(body)
            out.append(self._end())
            return out
        finally:
            self.fn = saved

    def _end(self) -> P.stmt:
        fn = self.current
        if fn.dom is None:
            return P.Return(value=_const(None))
        if fn.result == "fails":
            return P.Return(value=_name("_fail"))
        return P.Return(value=_call("_V.finish", _name(_RESULT), _name("_live"), _const(None), _name(fn.dom)))

    # -- statements ------------------------------------------------------------------------------
    def block(self, stmts) -> list[P.stmt]:
        out: list[P.stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s) -> list[P.stmt]:
        handler = getattr(self, "_st_" + type(s).__name__, None)
        if handler is None:  # a call made for its effect is one: never asked beyond the per-node scan
            raise NotVectorisable(f"a {type(s).__name__.lower()} statement runs for its effect", s.span,
                                  isinstance(s, A.ExprStmt))
        return handler(s)

    def _st_Pass(self, s) -> list[P.stmt]:
        return [P.Pass()]

    def _st_ExprStmt(self, s: A.ExprStmt) -> list[P.stmt]:
        """A call made for its effect, under a condition on the nodes: the lanes that reach it
        would each run it, so the form runs it for none and hands the call to the per-node code
        (``_V.no_lane_reaches``, PerNodeOnly before anything changed) when some lane reaches it.
        Where no lane does (predicates' equivalence cache holding a verdict for every node), the
        form answers.  Reached by every lane, it has no batch form (node by node only)."""
        mask = self._effective_mask() if self.current.mask is not None and self.current.node_rule else None
        if mask is None:
            raise NotVectorisable("a exprstmt statement runs for its effect", s.span, True)
        return [P.Expr(value=_call("_V.no_lane_reaches", mask))]

    def _st_When(self, s: A.When) -> list[P.stmt]:
        return self._if([(s.cond, (s.stmt,))], (), s)

    def _st_If(self, s: A.If) -> list[P.stmt]:
        return self._if(list(s.branches), s.orelse, s)

    def _if(self, branches, orelse, s) -> list[P.stmt]:
        fn = self.current
        conds = [self.ex(c) for c, _ in branches]
        if all(k == SCALAR for _, k in conds):
            node: P.stmt | None = None
            tail = self._branch_body(orelse) if orelse else []
            for (cond, _), (body_stmts) in zip(reversed(conds), reversed([b for _, b in branches])):
                node = P.If(test=cond, body=self._branch_body(body_stmts) or [P.Pass()], orelse=tail)
                tail = [node]
            return tail
        if fn.dom is None:
            raise NotVectorisable("a condition on nodes outside a loop over them", s.span)
        out: list[P.stmt] = []
        outer = fn.mask
        rest = outer
        for at, ((cond_node, kind), (_, body)) in enumerate(zip(conds, branches)):
            lanes = self._lanes(cond_node, kind)
            # The lanes not taken matter only to a later branch or the else: the condition is
            # evaluated once, and its negation only when something reads it.
            needs_rest = at + 1 < len(branches) or bool(orelse)
            if needs_rest and not isinstance(lanes, P.Name):
                cond_name = self._temp("_c")
                out.append(_assign(cond_name, lanes))
                lanes = _name(cond_name)
            taken = self._temp("_m")
            out.append(_assign(taken, _call("_V.both", rest, lanes) if rest is not None else lanes))
            fn.mask = _name(taken)
            out.extend(self.block(body))
            if not needs_rest:
                break
            remaining = self._temp("_m")
            out.append(_assign(remaining, _call("_V.both", rest, _call("_V.negate", lanes))
                               if rest is not None else _call("_V.negate", lanes)))
            rest = _name(remaining)
        if orelse:
            fn.mask = rest
            out.extend(self.block(orelse))
        fn.mask = outer
        return out

    def _branch_body(self, body) -> list[P.stmt]:
        return self.block(body)

    def _temp(self, base: str) -> str:
        self.current.temp += 1
        return f"{base}{self.current.temp}"

    def _lanes(self, node: P.expr, kind: str) -> P.expr:
        """A condition as a lane mask (a scalar one broadcast)."""
        if kind == SCALAR:
            return _call("_V.broadcast", node, _name(self.current.batch))
        if kind not in (VECTOR, FAILS):
            raise NotVectorisable("a condition that is not a truth value per node")
        return node

    def _effective_mask(self) -> P.expr | None:
        fn = self.current
        if fn.live:
            return _call("_V.both", fn.mask, _name("_live")) if fn.mask is not None else _name("_live")
        return fn.mask

    def _local(self, s) -> str:
        return self.base.names.declared(s)

    def _st_Let(self, s: A.Let) -> list[P.stmt]:
        node, kind = self.ex(s.value)
        py = self._local(s)
        self.current.kinds[py] = self._join(self.current.seed.get(py, kind), kind)
        self._remember_fit_error(py, kind, s.value)
        return [_assign(py, node)]

    def _remember_fit_error(self, py: str, kind: str, value) -> None:
        """A local now holding a per-node fit error made by a call: its lanes' statuses can be asked
        again (_fit_error_attr); any other value forgets it."""
        if kind == FAILS and isinstance(value, A.Call):
            self.current.fit_errors[py] = value
        else:
            self.current.fit_errors.pop(py, None)

    def _st_Assign(self, s: A.Assign) -> list[P.stmt]:
        return self._assign_to(s.target, s.value, None, s)

    def _st_AugAssign(self, s: A.AugAssign) -> list[P.stmt]:
        return self._assign_to(s.target, s.value, s.op, s)

    def _assign_to(self, target, value_expr, op, s) -> list[P.stmt]:
        fn = self.current
        value, kind = self.ex(value_expr)
        if isinstance(target, A.Index):
            return self._assign_lane_entry(target, value, kind, op, s)
        if not isinstance(target, A.Name):
            raise NotVectorisable("an assignment to an attribute has an effect", s.span, True)
        ref = self.base.info.ref_of(target)
        if ref.kind not in ("local", "hookparam"):
            raise NotVectorisable(f"an assignment to {ref.kind} '{target.id}' has an effect", s.span, True)
        py = self.base.name_of(ref)
        old_kind = fn.kinds.get(py, SCALAR)
        if op is not None:
            value, kind = self._binary(op, _name(py), old_kind, value, kind, self.base.t(target), s)
        if fn.mask is not None:
            if kind in (RESOURCES, FAILS, NAMES, BATCH, NODEMAP) or old_kind in (RESOURCES, FAILS, NAMES):
                raise NotVectorisable("a value other than a number changes under a condition on nodes", s.span)
            value, kind = _call("_V.choose", fn.mask, value, _name(py)), VECTOR
        fn.kinds[py] = self._join(old_kind, kind)
        self._remember_fit_error(py, kind, value_expr if op is None else None)
        return [_assign(py, value)]

    @staticmethod
    def _join(a: str, b: str) -> str:
        if a == b:
            return a
        if {a, b} <= {SCALAR, VECTOR}:
            return VECTOR
        return b

    def _assign_lane_entry(self, target: A.Index, value, kind, op, s) -> list[P.stmt]:
        fn = self.current
        root = target.obj
        while isinstance(root, A.Index):
            root = root.obj
        ref = self.base.info.refs.get(root.nid) if isinstance(root, A.Name) else None
        if fn.node_rule and (ref is None or ref.kind not in ("local", "hookparam")):
            # its per-node code runs once per node, each time changing the entry
            raise NotVectorisable("an assignment to an entry of state has an effect", s.span, True)
        mapping, mkind = self.ex(target.obj)
        key, kkind = self.ex(target.key)
        if mkind == SCALAR and kkind == SCALAR and kind == SCALAR and fn.mask is None:
            # An entry of an ordinary map, outside any per-node choice: as the per-node form does it.
            if op is not None:
                current: P.expr = P.Subscript(value=mapping, slice=key, ctx=P.Load())
                value = self.base._arith(op, self.base.t(target), self.base.t(s.value), current, value)
            return [P.Assign(targets=[P.Subscript(value=mapping, slice=key, ctx=P.Store())], value=value)]
        if mkind != NODEMAP or kkind != NODE:
            raise NotVectorisable("only a per-node map entry can change in a loop over nodes", s.span)
        if op is not None:
            current = _call("_V.map_lanes", mapping, _name(fn.batch), _const(None))
            value, kind = self._binary(op, current, VECTOR, value, kind, Type("float"), s)
        return [P.Expr(value=_call("_V.map_store", mapping, _name(fn.batch), self._effective_mask() or
                                   _const(None), value))]

    def _st_Fail(self, s: A.Fail) -> list[P.stmt]:
        fn = self.current
        if fn.result != "fails":
            raise NotVectorisable("fail outside a failure hook", s.span)
        fails: P.expr = _const(True)
        if self.base.t(s.message).name == "FitError":
            node, kind = self.ex(s.message)
            if kind not in (FAILS, SCALAR):
                raise NotVectorisable("a fit error that is not per node", s.span)
            fails = node if kind == FAILS else _call("_V.is_set", node)
        mask = self._effective_mask()
        failed = _call("_V.fail", _name("_fail"), mask if mask is not None else _const(None), fails, _name(fn.batch))
        out: list[P.stmt] = [_assign("_fail", failed)]
        if self.base.t(s.message).name != "FitError" and fail_code(s, self.failing_hook) != "unschedulable":
            # The per-node code returns here: the lanes failing here run nothing after it.
            if fn.mask is None:
                out.append(P.Return(value=_name("_fail")))
            else:
                fn.live = True
                out.append(_assign("_live", _call("_V.retire", _name("_live"), fn.mask, _name(fn.batch))))
        return out

    def _st_Return(self, s: A.Return) -> list[P.stmt]:
        fn = self.current
        if fn.result == "fails":
            if s.value is not None:
                raise NotVectorisable("a failure hook returning a value", s.span)
            if fn.mask is None:
                return [P.Return(value=_name("_fail"))]
            fn.live = True
            return [_assign("_live", _call("_V.retire", _name("_live"), fn.mask, _name(fn.batch)))]
        if s.value is None:
            raise NotVectorisable("a return without a value", s.span)
        t = self.base.t(s.value)
        node: P.expr
        if fn.result == "fits" and t.name == "FitError" and not t.optional:
            node, kind = _const(True), SCALAR  # a certain failure: its message is the per-node form's
        else:
            node, kind = self.ex(s.value)
        if fn.mask is None:
            return [self._return(node, kind, s.value)]
        fn.live = True
        value = self._result_value(node, kind, s.value)
        return [P.Assign(targets=[P.Tuple(elts=[_store(_RESULT), _store("_live")], ctx=P.Store())],
                         value=_call("_V.returned", _name(_RESULT), _name("_live"), fn.mask, value,
                                     _name(fn.batch)))]

    def _result_value(self, node, kind, expr) -> P.expr:
        if self.current.result == "fits":
            # A FitError? result counts only as "fails or not": its message is the per-node form's.
            if self.base.t(expr).name == "none":
                return _const(False)
            if kind == FAILS:
                return node
            if kind == SCALAR:
                return _call("_V.is_set", node)
            raise NotVectorisable("a fit error that is not per node", expr.span)
        if kind in (NAMES, FAILS):
            raise NotVectorisable("a result that is not a number, a resource or a node set", expr.span)
        return node

    def _return(self, node, kind, expr) -> P.stmt:
        fn = self.current
        if fn.dom is None:
            return P.Return(value=node)
        value = self._result_value(node, kind, expr)
        return P.Return(value=_call("_V.finish", _name(_RESULT), _name("_live") if fn.live else _const(None),
                                    value, _name(fn.dom)))

    def _st_Break(self, s) -> list[P.stmt]:
        if self.current.mask is not None:
            raise NotVectorisable("a break that depends on the node", s.span)
        return [P.Break()]

    def _st_Continue(self, s) -> list[P.stmt]:
        if self.current.mask is not None:
            raise NotVectorisable("a continue that depends on the node", s.span)
        return [P.Continue()]

    def _st_For(self, s: A.For) -> list[P.stmt]:
        fn = self.current
        it, kind = self.ex(s.iter)
        var = self._local(s)
        if kind == SCALAR:
            batches = isinstance(s.iter, A.ListLit) and s.iter.items and all(
                self.ex(i)[1] == BATCH for i in s.iter.items)
            fn.kinds[var] = BATCH if batches else SCALAR
            # charged to the session's budget like the per-node form's loops (policy_lang/compiler.py)
            return [P.For(target=_store(var), iter=self.base.each(it, s.body), body=self.block(s.body) or [P.Pass()],
                          orelse=[])]
        if kind != BATCH:
            raise NotVectorisable("a loop over a collection that differs from node to node", s.span)
        if fn.dom is not None:
            raise NotVectorisable("a loop over nodes inside a node rule", s.span)
        # A loop over a node list runs once, lane-wise; only per-node map entries and its own lets change.
        inner = _Function(var, self._temp("_d"), fn.kinds)
        inner.temp = fn.temp + 100
        inner.result = fn.result
        self.fn = inner
        try:
            self._loop_body_is_lanewise(s.body)
            body = self.block(s.body)
        finally:
            self.fn = fn
        fn.temp = inner.temp
        return [_assign(inner.batch, it), _assign(var, _name(inner.batch))] + body

    def _loop_body_is_lanewise(self, body) -> None:
        for s in body:
            for node in statements(s):
                if isinstance(node, (A.Return, A.Break, A.Continue, A.Fail, A.Drain, A.While)):
                    raise NotVectorisable("a loop over nodes that stops or returns early", node.span)
                if isinstance(node, (A.Assign, A.AugAssign)) and not isinstance(node.target, A.Index):
                    raise NotVectorisable("a loop over nodes carrying a value from node to node", node.span)

    # -- expressions --------------------------------------------------------------------------------
    def ex(self, e) -> tuple[P.expr, str]:
        if not self._depends(e):
            return self._scalar(e), SCALAR
        handler = getattr(self, "_ex_" + type(e).__name__, None)
        if handler is None:
            return self._per_lane(e)
        return handler(e)

    def _scalar(self, e) -> P.expr:
        return self.base.ex(e)

    def _kind_of_name(self, e: A.Name) -> str:
        ref = self.base.info.refs.get(e.nid)
        if ref is None or ref.kind not in ("local", "hookparam"):
            return SCALAR
        py = self.base.name_of(ref)
        if py == self.current.lane:
            return NODE
        return self.current.kinds.get(py, SCALAR)

    def _depends(self, e) -> bool:
        """Does the expression involve a per-node value, a node list or a per-node map?"""
        for node in preorder(e):
            if isinstance(node, A.Name) and self._kind_of_name(node) != SCALAR:
                return True
        return False

    def _ex_Name(self, e: A.Name):
        kind = self._kind_of_name(e)
        if kind == NODE:  # the node of each lane: the batch itself
            return _name(self.current.batch), kind
        return _name(self.base.name_of(self.base.info.ref_of(e))), kind

    def _ex_Attr(self, e: A.Attr):
        obj, kind = self.ex(e.obj)
        if kind == NODE:
            return _call("_V.node_attr", _name(self.current.batch), _const(e.name), self._delayed(e)), \
                self._kind_for(self.base.t(e))
        if kind == RESOURCES and e.name in ("cpu", "memory"):
            return _call("_V.resource_get", obj, _const(e.name)), VECTOR
        if kind == FAILS and isinstance(e.obj, A.Name):
            return self._fit_error_attr(e, obj)
        if kind in (BATCH, NODEMAP):
            raise NotVectorisable(f"'.{e.name}' of a node list", e.span)
        return self._per_lane(e)

    def _fit_error_attr(self, e: A.Attr, mask: P.expr):
        """``failure.unresolvable`` (any attribute) of a local holding a per-node fit error: a batch
        form knows only which lanes fail, so the call that made it is asked again node by node, for
        the failing lanes alone; the others have no fit error (false)."""
        source = self.current.fit_errors.get(self.base.name_of(self.base.info.ref_of(e.obj)))
        if source is None:
            raise NotVectorisable(f"'.{e.name}' of a fit error over nodes", e.span)
        free, values = self._lane_values(source)
        status = P.Lambda(args=P.arguments(posonlyargs=[], args=[P.arg(arg="_f")], kwonlyargs=[], kw_defaults=[],
                                           defaults=[]),
                          body=P.BoolOp(op=P.And(), values=[
                              P.Compare(left=_name("_f"), ops=[P.IsNot()], comparators=[_const(None)]),
                              P.Attribute(value=_name("_f"), attr=e.name, ctx=P.Load())]))
        lane = P.Lambda(args=P.arguments(posonlyargs=[], args=[P.arg(arg=p) for p in free], kwonlyargs=[],
                                         kw_defaults=[], defaults=[]), body=P.Call(status, [self._scalar(source)], []))
        return _call("_V.per_lane", lane, _name(self.current.batch), mask, _const(VECTOR), *values), VECTOR

    def _kind_for(self, t: Type) -> str:
        if t.name == "Resource":
            return RESOURCES
        if t.name == "FitError":
            return FAILS
        if t.name == "Node" and not t.optional:
            return NODE
        return VECTOR

    def _ex_Unary(self, e: A.Unary):
        node, kind = self.ex(e.operand)
        if kind == SCALAR:
            return self._scalar(e), SCALAR
        if kind not in (VECTOR, FAILS):
            return self._per_lane(e)
        if e.op == "not":
            return _call("_V.negate", node), VECTOR
        return P.UnaryOp(op=P.USub(), operand=node), VECTOR

    def _ex_Binary(self, e: A.Binary):
        left, lk = self.ex(e.left)
        if e.op in ("and", "or") and self.current.dom is not None and lk in (SCALAR, VECTOR, FAILS):
            if lk == SCALAR:  # the mask a lane-by-lane part takes is one value per lane
                left, lk = self._lanes(left, lk), VECTOR
            held = self._held_name()
            right, rk = self._under(held, e.op == "or", e.right)
            left = self._hold(held, left, right)
        else:
            right, rk = self.ex(e.right)
        if lk == SCALAR and rk == SCALAR:  # node lists and maps read as lists and maps by per-node code
            return self._scalar(e), SCALAR
        return self._binary(e.op, left, lk, right, rk, self.base.t(e.left), e, self.base.t(e.right))

    _ARITH = {"+": P.Add, "-": P.Sub, "*": P.Mult}
    _COMPARE = {"<": P.Lt, "<=": P.LtE, ">": P.Gt, ">=": P.GtE, "==": P.Eq, "!=": P.NotEq}

    def _binary(self, op, left, lk, right, rk, lt: Type, e, rt: Type | None = None):
        rt = rt or lt
        if lk in (BATCH, NODEMAP) or rk in (BATCH, NODEMAP):
            if op in ("==", "!=") and (lk == SCALAR or rk == SCALAR):
                test = P.Compare(left=left, ops=[P.Is() if op == "==" else P.IsNot()], comparators=[right])
                return test, SCALAR
            raise NotVectorisable(f"'{op}' on a node list", e.span)
        if op in ("and", "or"):
            return _call("_V.both" if op == "and" else "_V.either", left, right), VECTOR
        if op in ("==", "!=") and (lt.name == "none" or rt.name == "none"):
            other, kind = (right, rk) if lt.name == "none" else (left, lk)
            is_set = other if kind == FAILS else _call("_V.is_set", other)
            return (is_set if op == "!=" else _call("_V.negate", is_set)), VECTOR
        if lk == RESOURCES or rk == RESOURCES:
            if op in ("<=", "<", "+", "-"):
                return _call("_V.resources", _const(op), left, right), (VECTOR if op in ("<=", "<") else RESOURCES)
            raise NotVectorisable(f"'{op}' on resources of many nodes", e.span)
        if lk not in (VECTOR, SCALAR) or rk not in (VECTOR, SCALAR):
            raise NotVectorisable(f"'{op}' on a value that is not a number per node", e.span)
        kind = SCALAR if lk == SCALAR and rk == SCALAR else VECTOR  # (an update of a plain number)
        if self.current.mask is not None:  # lanes the mask leaves out may hold none: not computed on
            left, right = (_call("_V.present", n) if k == VECTOR else n for n, k in ((left, lk), (right, rk)))
        if op in self._ARITH:
            if kind == SCALAR:  # charged as the per-node form charges it
                return self.base._arith(op, lt, rt, left, right), kind
            return P.BinOp(left=left, op=self._ARITH[op](), right=right), kind
        if op == "/":
            return _call("_div" if kind == SCALAR else "_V.divide", left, right), kind
        if op in self._COMPARE:
            return P.Compare(left=left, ops=[self._COMPARE[op]()], comparators=[right]), kind
        if op in ("in", "not in"):
            return _call("_V.member", _const(op == "in"), left, right), VECTOR
        raise NotVectorisable(f"'{op}' per node", e.span)

    def _ex_Conditional(self, e: A.Conditional):
        cond, ck = self.ex(e.cond)
        if ck == SCALAR:
            then, tk = self.ex(e.then)
            orelse, ok = self.ex(e.orelse)
            kind = tk if tk == ok else self._join(tk, ok)
            return P.IfExp(test=cond, body=then, orelse=orelse), kind
        held = self._held_name()
        then, tk = self._under(held, False, e.then)
        orelse, ok = self._under(held, True, e.orelse)
        if {tk, ok} - {SCALAR, VECTOR}:
            raise NotVectorisable("a per-node choice between values that are not numbers", e.span)
        return _call("_V.choose", self._hold(held, self._lanes(cond, ck), then, orelse), then, orelse), VECTOR

    # Per-node code evaluates the right side of ``and`` / ``or`` and a conditional's branches only
    # for the values that reach them; lane by lane, the batch form's code for them must skip the
    # other lanes too, where it may fail (a missing map key) though the per-node code never asks.
    # The lanes that reach such a part narrow the mask while it is translated (``_under``), and
    # are held in a local evaluated first (``_hold``) when the translation reads them.
    def _held_name(self) -> str:
        self.held += 1
        return f"_k{self.held}"

    def _under(self, held: str, negated: bool, e) -> tuple[P.expr, str]:
        """``e`` translated with the current mask narrowed to the lanes ``held`` (or not) names."""
        fn = self.current
        outer = fn.mask
        taken = _call("_V.negate", _name(held)) if negated else _name(held)
        fn.mask = _call("_V.both", outer, taken) if outer is not None else taken
        try:
            return self.ex(e)
        finally:
            fn.mask = outer

    @staticmethod
    def _hold(held: str, lanes: P.expr, *readers: P.expr) -> P.expr:
        """``lanes``, assigned to ``held`` as it is evaluated when one of ``readers`` reads it."""
        if any(isinstance(n, P.Name) and n.id == held for r in readers for n in P.walk(r)):
            return P.NamedExpr(target=_store(held), value=lanes)
        return lanes

    def _ex_ListLit(self, e: A.ListLit):
        items = [self.ex(i) for i in e.items]
        if any(k not in (SCALAR, BATCH) for _, k in items):
            return self._per_lane(e)
        return P.List(elts=[n for n, _ in items], ctx=P.Load()), SCALAR

    def _comprehension(self, e, body: Callable[[], tuple]):
        it, kind = self.ex(e.iter)
        if kind != BATCH or not isinstance(e.iter, A.Name):
            if self.current.dom is not None:
                return None
            raise NotVectorisable("a comprehension over something other than a node list", e.span)
        var = self.base.names.declared(e)
        outer = self.current
        assert isinstance(it, P.Name)  # a node list named by the policy is a Python local
        inner = _Function(var, it.id, outer.kinds)
        inner.temp, inner.result = outer.temp, outer.result
        self.fn = inner
        try:
            return body()
        finally:
            self.fn = outer
            outer.temp = inner.temp

    def _ex_ListComp(self, e: A.ListComp):
        def lanes():
            elem, ek = self.ex(e.elem)
            if ek != NODE:
                raise NotVectorisable("a list of per-node values", e.span)
            if e.cond is None:
                return _name(self.current.dom), BATCH
            cond, ck = self.ex(e.cond)
            return _call("_V.subset", _name(self.current.dom), self._lanes(cond, ck)), BATCH
        result = self._comprehension(e, lanes)
        return result if result is not None else self._per_lane(e)

    def _ex_MapComp(self, e: A.MapComp):
        def lanes():
            key, kk = self.ex(e.key)
            if kk != NODE or e.cond is not None:
                raise NotVectorisable("a map keyed by something other than each node", e.span)
            value, vk = self.ex(e.value)
            if vk not in (SCALAR, VECTOR):
                raise NotVectorisable("a map of per-node values that are not numbers", e.span)
            return _call("_V.node_map", _name(self.current.dom), value), NODEMAP
        result = self._comprehension(e, lanes)
        return result if result is not None else self._per_lane(e)

    def _ex_Index(self, e: A.Index):
        obj, ok = self.ex(e.obj)
        key, kk = self.ex(e.key)
        if ok == NODEMAP and kk == NODE:
            return _call("_V.map_lanes", obj, _name(self.current.batch), _const(None)), VECTOR
        if ok == BATCH and kk == SCALAR:
            return P.Subscript(value=obj, slice=key, ctx=P.Load()), SCALAR
        kind, dom = self._kind_for(self.base.t(e)), self.current.dom
        if ok == SCALAR and kind != NODE and dom is not None and self._is_lane_name(e.key):  # a map read by name
            return _call("_V.at_names", obj, _name(dom), self._mask_arg(), _const(kind)), kind
        return self._per_lane(e)

    def _is_lane_name(self, e) -> bool:
        """``e`` is ``node.name`` of the lane's node."""
        return (isinstance(e, A.Attr) and e.name == "name" and isinstance(e.obj, A.Name)
                and self._kind_of_name(e.obj) == NODE)

    def _ex_Call(self, e: A.Call):
        info = self.base.info.call_of(e)
        kind = info.kind
        name = info.name or getattr(e.func, "id", "") or getattr(e.func, "name", "")
        if name in _EFFECT_NAMES or (kind == "method" and self.base.t(A.receiver(e)).name in _EFFECT_TYPES):
            raise NotVectorisable(f"'{name}' has an effect", e.span, True)
        args = [self.ex(a) for a in e.args]
        if e.kwargs:
            return self._per_lane(e)
        if kind == "container":
            obj, ok = self.ex(A.receiver(e))
            if ok == NODEMAP and name == "get" and args and args[0][1] == NODE:
                default = args[1][0] if len(args) > 1 else _const(None)
                return _call("_V.map_lanes", obj, _name(self.current.batch), default), VECTOR
            if ok == NODEMAP and name in ("values", "keys"):
                return _call(P.Attribute(value=obj, attr=name, ctx=P.Load())), SCALAR
            if ok == SCALAR and name == "get" and args and args[0][1] == NODE:
                default = args[1][0] if len(args) > 1 else _const(None)
                return _call("_V.dict_lanes", obj, _name(self.current.batch), default), VECTOR
            kind, dom = self._kind_for(self.base.t(e)), self.current.dom
            if (ok == SCALAR and name == "get" and kind != NODE and dom is not None and args
                    and self._is_lane_name(e.args[0]) and all(k == SCALAR for _, k in args[1:])):
                return _call("_V.get_at_names", obj, _name(dom), self._mask_arg(), _const(kind),
                             *[n for n, _ in args[1:]]), kind
            return self._per_lane(e)
        if kind == "builtin":
            if name == "len" and args[0][1] in (BATCH, NODEMAP):
                return _call("len", args[0][0]), SCALAR
            if name in ("min", "max") and len(e.args) == 1:
                column = self._values_of_map(e.args[0])
                if column is not None:  # of a per-node map's values: over its column
                    return _call(f"_V.map_{name}", column), SCALAR
            if name == "len" and args[0][1] == NAMES:
                return _call("_V.count", args[0][0]), VECTOR
            if name in ("min", "max") and len(args) == 1 and args[0][1] == SCALAR:  # of a plain list
                return self._scalar(e), SCALAR
            if name in ("min", "max") and all(k == SCALAR for _, k in args):  # of plain values
                return _call(name, *[n for n, _ in args]), SCALAR
            if name in ("float", "int", "min", "max") and all(k in (SCALAR, VECTOR) for _, k in args):
                return _call(f"_V.{name}_", *[n for n, _ in args]), VECTOR
            return self._per_lane(e)
        if kind == "def":
            return self._call_def(e, info, args)
        if kind == "dispatch":
            return self._call_dispatch(e, info, args)
        if kind == "function" and info.py == "_math.floor" and args[0][1] == VECTOR:
            return _call("_V.floor", args[0][0]), VECTOR
        if kind in ("function", "method") and self.current.dom is not None:
            return self._library(e, info, args)
        if kind == "function":
            # Over a node list: the library's batch form, else the per-node code reading the batch as a
            # list (or a per-node map as a map).
            delayed = P.Lambda(args=P.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                defaults=[]), body=self._scalar(e))
            return _call("_V.library", _const(info.py), delayed, _const(None), *[n for n, _ in args]), SCALAR
        if kind == "method":
            return self._scalar(e), SCALAR
        raise NotVectorisable(f"'{name}' with a node list", e.span)

    def _values_of_map(self, e) -> P.expr | None:
        """The code of ``m`` when ``e`` is ``m.values()`` of a per-node map, else None."""
        call = self.base.info.calls.get(e.nid) if isinstance(e, A.Call) else None
        if call is None or call.kind != "container" or call.name != "values":
            return None
        obj, kind = self.ex(A.receiver(e))
        return obj if kind == NODEMAP else None

    def _call_def(self, e: A.Call, info, args):
        kinds = tuple(k for _, k in args)
        owner = next((m for m in self.modules if info.name in m.defs and
                      f"f_{info.name}" == info.py), None)
        over_maps = NODEMAP in kinds and set(kinds) <= {NODEMAP, SCALAR}  # a per-node map stands for a map
        if owner is None or any(k in (FAILS, NAMES) for k in kinds) or (NODEMAP in kinds and not over_maps):
            return self._per_lane(e)
        if all(k == SCALAR for k in kinds):
            return self._scalar(e), self._result_kind(self.base.t(e), kinds)
        decl = owner.defs[info.name]
        norm = kinds
        try:
            batch = self._with_module(owner, lambda: self._def(owner, decl, norm))
        except NotVectorisable as exc:
            if over_maps:  # the per-node code, reading each per-node map as a map
                return self._scalar(e), self._result_kind(self.base.t(e), kinds)
            returned = self.base.t(e)
            if (BATCH in kinds and set(kinds) <= {BATCH, SCALAR} and returned.name == "map"
                    and returned.args[0].name == "Node" and returned.args[1].name in _ROW_LOCAL_RESULTS
                    and not returned.args[1].optional):
                # The per-node code over the batch's nodes, once; the numbers it maps them to: a column.
                positions = P.Tuple(elts=[_const(i) for i, k in enumerate(kinds) if k == BATCH], ctx=P.Load())
                return _call("_V.per_node_map", _name(info.py), positions,
                             P.Tuple(elts=[n for n, _ in args], ctx=P.Load())), NODEMAP
            if self.current.dom is None:
                raise
            if exc.effect:  # its per-node code, lane by lane, would change state once per lane
                raise NotVectorisable(f"'{info.name}' has an effect", e.span, True) from exc
            return self._per_lane(e)
        call_args = [n for n, _ in args]
        if not any(k == NODE for k in norm) and any(k in _LANE_KINDS for k in norm):
            call_args.append(_name(self.current.batch))
        returns = owner.def_types[info.name].args[-1] if owner.def_types.get(info.name) else Type("unknown")
        if (norm.count(NODE) == 1 and set(norm) <= {NODE, SCALAR} and returns.name in _ROW_LOCAL_RESULTS
                and not returns.optional and self._is_row_local(owner, decl)):
            # A row-local definition of one node: memoised over every row (see the module docstring).
            return _call("_V.row_memo", _name(self.current.batch), _name(batch), _name(info.py), _const(norm.index(NODE)),
                         P.Tuple(elts=call_args, ctx=P.Load()), _const(returns.name == "bool")), VECTOR
        return _call(batch, *call_args), self._result_kind(returns, norm)

    # -- row-local definitions ------------------------------------------------------------
    def _is_row_local(self, m: CheckedModule, decl: A.FuncDef) -> bool:
        key = (m.module.name, decl.name)
        if key not in self.row_local:
            self.row_local[key] = False  # a recursive definition is not row-local
            body = decl.body if isinstance(decl.body, tuple) else (A.Return(decl.body, decl.span),)
            outer, self._rl_hooks = self._rl_hooks, None  # hooks count only in the node check itself
            try:
                self.row_local[key] = self._with_module(m, lambda: all(self._rl_stmt(s) for s in body))
            finally:
                self._rl_hooks = outer
        return self.row_local[key]

    def _hook_guard(self, hook, m: CheckedModule, body: tuple) -> P.expr | None:
        """For a failure hook of (task, node): ``lambda task, node: <guard>`` when its body is
        row-local except for top-level ``if`` blocks whose conditions read no node and have no
        effect (the guard: any of them true); none when the body is not of that shape.  While
        the guard is false for a task, the hook answers like a row-local rule, and the fast engine
        memoises its failures per pod spec (batch_dispatch.first_failure).  ``body``: the hook's
        body as its batch form stands for it (without its switches, :meth:`_hook_switched`)."""
        decl = hook.decl
        if hook.sig.kind != "failure" or [t.name for t in hook.sig.params] != ["Task", "Node"]:
            return None
        params = [self.base.names_of(m).declared(span) for _, span in decl.params]
        body = body if isinstance(body, tuple) else (A.Return(body, decl.span),)

        def shape() -> P.expr | None:
            guards: list[P.expr] = []
            for stmt in body:
                if self._rl_stmt(stmt):
                    continue
                if not (isinstance(stmt, A.If) and len(stmt.branches) == 1 and not stmt.orelse):
                    return None
                cond = stmt.branches[0][0]
                if not self._node_free(cond, params[1]) or not self._effect_free(cond):
                    return None
                guards.append(self.base.ex(cond))
            return _lambda(params, _any(guards) if guards else _const(False))
        return self._with_module(m, shape)

    def _check_row_local_test(self, m: CheckedModule, decl: A.FuncDef) -> P.expr | None:
        """For a node check ``(task, node) -> FitError?`` (what ``predicate_nodes`` runs):
        ``lambda task: <row-local now>`` when its body is row-local except for failure hooks it asks
        about exactly its own ``(task, node)``; such a check is row-local for a task while every
        plugin of each of those hooks is (``batch_dispatch.first_failure``'s ``row_local``), and the
        predicate helper then keeps its answers per pod spec, row by row.  None otherwise."""
        params = [self.base.names_of(m).declared(p) for p in decl.params]
        body = decl.body if isinstance(decl.body, tuple) else (A.Return(decl.body, decl.span),)
        hooks: list[str] = []

        def row_local() -> bool:
            self._rl_hooks = (params, hooks)
            try:
                return all(self._rl_stmt(s) for s in body)
            finally:
                self._rl_hooks = None
        if not self._with_module(m, row_local):
            return None
        dispatchers = P.Tuple(elts=[P.Attribute(value=_name("_H"), attr=h, ctx=P.Load()) for h in hooks],
                              ctx=P.Load())
        return _lambda(params, _call("_rt.batch_forms.hooks_row_local", dispatchers, _name(params[0])))

    def _rl_hook(self, e: A.Call, info) -> bool:
        """A failure hook asked about the node check's own (task, node), while analysing one."""
        if self._rl_hooks is None:
            return False
        params, hooks = self._rl_hooks
        names = [self.base.info.refs.get(a.nid) if isinstance(a, A.Name) else None for a in e.args]
        if self.base.t(e).name != "FitError" or [self.base.name_of(r) if r else None for r in names] != params:
            return False
        name = info.name or _callee(e)
        if name not in hooks:
            hooks.append(name)
        return True

    def _node_free(self, e, node_py: str) -> bool:
        for node in preorder(e):
            ref = self.base.info.refs.get(node.nid) if isinstance(node, A.Name) else None
            if ref is not None and self.base.name_of(ref) == node_py:
                return False
        return True

    def _effect_free(self, e, seen: frozenset = frozenset()) -> bool:
        """No call with an effect in the expression, nor in the definitions it calls."""
        info = self.base.info
        for node in preorder(e):
            if not isinstance(node, A.Call):
                continue
            call = info.calls.get(node.nid)
            if call is None or call.name in _EFFECT_NAMES or call.kind == "dispatch" or (
                    call.kind == "container" and call.name not in _CONTAINER_READS) or (
                    call.kind == "method" and self.base.t(A.receiver(node)).name in _EFFECT_TYPES):
                return False
            if call.kind == "def" and call.name not in seen:
                owner = next((m for m in self.modules if call.name in m.defs and f"f_{call.name}" == call.py), None)
                if owner is None or not self._with_module(owner, lambda: self._def_effect_free(
                        owner.defs[call.name], seen | {call.name})):
                    return False
        return True

    def _def_effect_free(self, decl: A.FuncDef, seen: frozenset) -> bool:
        body = decl.body if isinstance(decl.body, tuple) else (A.Return(decl.body, decl.span),)
        for stmt in body:
            for inner in statements(stmt):
                if not isinstance(inner, (A.Let, A.Return, A.If, A.When, A.Pass)):
                    return False
                exprs = [getattr(inner, "value", None), getattr(inner, "cond", None)]
                exprs += [c for c, _ in getattr(inner, "branches", ())]
                if not all(x is None or self._effect_free(x, seen) for x in exprs):
                    return False
        return True

    def _rl_stmt(self, s) -> bool:
        if isinstance(s, (A.Pass, A.Break, A.Continue)):
            return True
        if isinstance(s, A.Fail):
            return self._rl_expr(s.message)
        if isinstance(s, A.Let):
            return self._rl_expr(s.value)
        if isinstance(s, (A.Assign, A.AugAssign)):
            ref = self.base.info.refs.get(s.target.nid) if isinstance(s.target, A.Name) else None
            return ref is not None and ref.kind == "local" and self._rl_expr(s.value)
        if isinstance(s, A.Return):
            return s.value is None or self._rl_expr(s.value)
        if isinstance(s, A.When):
            return self._rl_expr(s.cond) and self._rl_stmt(s.stmt)
        if isinstance(s, A.If):
            return (all(self._rl_expr(c) and all(self._rl_stmt(x) for x in body) for c, body in s.branches)
                    and all(self._rl_stmt(x) for x in s.orelse))
        if isinstance(s, A.For):  # over plain values only (a node list is not row-local)
            return self._rl_expr(s.iter) and all(self._rl_stmt(x) for x in s.body)
        return False

    def _rl_expr(self, e) -> bool:
        info = self.base.info
        if e is None or isinstance(e, A.Literal):
            return True
        if isinstance(e, A.Name):  # a task or node itself only as an argument or an attribute's owner
            return self._rl_name(e) and self.base.t(e).name not in ("Task", "Node")
        if isinstance(e, A.Attr):
            owner = self.base.t(e.obj)
            # A fit error's attributes (`failure.unresolvable`) are its own: one a row-local body
            # made (a failure hook asked about the check's own task and node) is row-local too.
            allowed = (owner.name == "Node" and not owner.optional and e.name in ROW_NODE_ATTRIBUTES | ROW_NODE_CONSTANTS
                       or owner.name == "Task" and e.name in ROW_TASK_ATTRIBUTES
                       or owner.name in ("Resource", "FitError"))
            return allowed and (self._rl_name(e.obj) if isinstance(e.obj, A.Name) else self._rl_expr(e.obj))
        if isinstance(e, A.Call):
            return self._rl_call(e)
        if isinstance(e, A.Unary):
            return self._rl_expr(e.operand)
        if isinstance(e, A.Binary) and e.op in ("in", "not in") and self._row_state_at_node(e.right, e.left):
            return True
        if isinstance(e, A.Binary):
            return self._rl_expr(e.left) and self._rl_expr(e.right)
        if isinstance(e, A.Conditional):
            return self._rl_expr(e.cond) and self._rl_expr(e.then) and self._rl_expr(e.orelse)
        if isinstance(e, A.Index):
            return self._row_state_at_node(e.obj, e.key) or self._rl_expr(e.obj) and self._rl_expr(e.key)
        if isinstance(e, A.ListLit):
            return all(self._rl_expr(x) for x in e.items)
        if isinstance(e, A.MapLit):
            return all(self._rl_expr(k) and self._rl_expr(v) for k, v in e.entries)
        if isinstance(e, (A.ListComp, A.MapComp)):
            parts = [e.iter, e.cond] + ([e.elem] if isinstance(e, A.ListComp) else [e.key, e.value])
            return all(self._rl_expr(x) for x in parts)
        return False

    def _row_state_at_node(self, obj, key) -> bool:
        """``obj`` is a state of this plugin read at ``key``, its node's name, and may be a row state
        (row_state.py): a map of plain values from node names, never assigned as a whole (so the
        map the session holds is the one the runtime watches) nor kept across sessions."""
        info = self.base.info
        if not (isinstance(obj, A.Name) and isinstance(key, A.Attr) and key.name == "name"
                and isinstance(key.obj, A.Name) and self._rl_expr(key)):
            return False
        ref = info.refs.get(obj.nid)
        if ref is None or ref.kind != "state" or info is not self.base.c or info.module.kind != "plugin":
            return False
        name = ref.py[len("s_"):]
        t = info.states.get(name)
        if (t is None or t.name != "map" or len(t.args) != 2 or t.args[0].name != "string"
                or t.args[1].name not in _ROW_STATE_VALUES or t.args[1].optional or name in info.process_states
                or any(name in assigned for assigned in info.assigned_states.values())):
            return False
        if name not in self.row_states:
            self.row_states.append(name)
        return True

    def _rl_name(self, e: A.Name) -> bool:
        ref = self.base.info.refs.get(e.nid)
        return ref is not None and ref.kind in ("local", "hookparam", "arg", "const")

    def _rl_call(self, e: A.Call) -> bool:
        info = self.base.info.calls.get(e.nid)
        if info is None or e.kwargs or not all(self._rl_name(a) if isinstance(a, A.Name) else self._rl_expr(a)
                                               for a in e.args):
            return False
        if info.kind == "builtin":
            return info.name in _PURE_BUILTINS or getattr(e.func, "id", "") in _PURE_BUILTINS
        if info.kind == "function":
            return (info.py.startswith("_math.") or info.py in ROW_LOCAL_LIBRARY
                    or self._rl_hooks is not None and (info.py.startswith("_res.") or info.py in _CHECK_LIBRARY))
        if info.kind == "method":
            return self.base.t(A.receiver(e)).name == "Resource" and info.name == "get" and self._rl_expr(A.receiver(e))
        if info.kind == "container" and info.name == "get" and e.args:
            return self._row_state_at_node(A.receiver(e), e.args[0])
        if info.kind == "def":
            owner = next((m for m in self.modules if info.name in m.defs and f"f_{info.name}" == info.py), None)
            return owner is not None and self._is_row_local(owner, owner.defs[info.name])
        if info.kind == "dispatch":
            return self._rl_hook(e, info)
        return False

    def _result_kind(self, t: Type, kinds) -> str:
        if any(k in _LANE_KINDS for k in kinds):
            return FAILS if t.name == "FitError" else RESOURCES if t.name == "Resource" else VECTOR
        if t.name == "list" and t.args and t.args[0].name == "Node":
            return BATCH
        if t.name == "map" and t.args and t.args[0].name == "Node":
            return NODEMAP
        return SCALAR

    def _call_dispatch(self, e: A.Call, info, args):
        kinds = [k for _, k in args]
        positions = P.Tuple(elts=[_const(i) for i, k in enumerate(kinds) if k in (NODE, BATCH)], ctx=P.Load())
        values = [(_name(self.current.batch) if k == NODE else n) for n, k in args]
        dispatcher = P.Attribute(value=_name("_H"), attr=info.name or _callee(e), ctx=P.Load())
        forms = P.Attribute(value=_name("_rt"), attr="batch_forms", ctx=P.Load())
        t = self.base.t(e)
        lanes = [self._mask_arg()] if kinds.count(NODE) == 1 and BATCH not in kinds and t.name == "FitError" else []
        result = _call("_V.dispatch", forms, dispatcher, positions, P.Tuple(elts=values, ctx=P.Load()), *lanes)
        if NODE in kinds:
            return result, FAILS if t.name == "FitError" else VECTOR
        if BATCH in kinds:
            return result, NODEMAP if t.name == "map" else SCALAR
        return self._per_lane(e)

    def _library(self, e: A.Call, info, args):
        """A standard-library call with per-node arguments: its batch form if the runtime has one,
        else lane by lane through the per-node code of the call."""
        if info.kind == "method":
            key = f"{self.base.t(A.receiver(e)).name}.{info.name}"
            obj, ok = self.ex(A.receiver(e))
            if key == "Resource.get" and ok == RESOURCES and args[0][1] == SCALAR:  # any name, one column
                return _call("_V.resource_get", obj, args[0][0]), VECTOR
            if ok != SCALAR:
                return self._per_lane(e)
            values = [obj] + [n for n, _ in args]
        else:
            key = info.py
            values = [n for n, _ in args]
        kind = self._kind_for(self.base.t(e))
        if self.base.t(e).name == "list" and self.base.t(e).args and self.base.t(e).args[0].name == "string":
            kind = NAMES
        return _call("_V.library", _const(key), self._delayed(e), self._mask_arg(), *values), kind

    def _delayed(self, e) -> P.Lambda:
        """``lambda: <the expression, lane by lane>``: run only when no column answers."""
        return P.Lambda(args=P.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                        body=self._per_lane(e)[0])

    def _mask_arg(self) -> P.expr:
        mask = self._effective_mask()
        return mask if mask is not None else _const(None)

    def _lane_values(self, e) -> tuple[list[str], list[P.expr]]:
        """The per-node names ``e`` reads (a lambda's parameters) and what holds them in the batch."""
        fn = self.current
        if fn.dom is None:
            raise NotVectorisable("an expression over a node list with no lane-wise form", e.span)
        free = []
        # Last child first: this order names the lane parameters of the generated lambda (and
        # which name a refusal speaks of), so it is kept as the batch forms always had it.
        for node in preorder(e, last_child_first=True):
            if isinstance(node, A.Name):
                ref = self.base.info.refs.get(node.nid)
                if ref is None:  # a built-in called by name (`len`): nothing per node to hand over
                    continue
                kind = self._kind_of_name(node)
                py = self.base.name_of(ref)
                if kind in (FAILS, NAMES, BATCH, NODEMAP):
                    raise NotVectorisable(f"'{node.id}' has no per-node value here", node.span)
                if kind in (NODE, VECTOR, RESOURCES) and py not in free:
                    free.append(py)
        return free, [(_name(fn.dom) if py == fn.lane else _name(py)) for py in free]

    def _per_lane(self, e):
        """The expression's per-node code, run for each lane (the fallback of last resort)."""
        fn = self.current
        free, values = self._lane_values(e)
        code = self._scalar(e)
        lam = P.Lambda(args=P.arguments(posonlyargs=[], args=[P.arg(arg=p) for p in free], kwonlyargs=[],
                                        kw_defaults=[], defaults=[]), body=code)
        kind = self._kind_for(self.base.t(e))
        if kind == NODE:
            raise NotVectorisable("a node chosen per node", e.span)
        return _call("_V.per_lane", lam, _name(fn.dom), self._mask_arg(), _const(kind), *values), kind


def _register(per_node: str, batch: str | P.expr, guard: P.expr | None = None,
              row_local: P.expr | None = None) -> P.stmt:
    """``_rt.batch_forms.add(per_node, _BatchForm(batch, guard=..., row_local=...))``: the batch
    form handed to the session's registry (runtime/framework/batch_forms.py) with what it declares."""
    keywords = [P.keyword(arg=name, value=value) for name, value in (("guard", guard), ("row_local", row_local))
                if value is not None]
    form = _call("_BatchForm", _name(batch) if isinstance(batch, str) else batch, keywords=keywords)
    return P.Expr(value=_call("_rt.batch_forms.add", _name(per_node), form))


def _lambda(params: list[str], body: P.expr) -> P.Lambda:
    return P.Lambda(args=P.arguments(posonlyargs=[], args=[P.arg(arg=p) for p in params], kwonlyargs=[],
                                     kw_defaults=[], defaults=[]), body=body)


def _any(tests: list[P.expr]) -> P.expr:
    return P.BoolOp(op=P.Or(), values=tests) if len(tests) > 1 else tests[0]


def _is_node_check(decl: A.FuncDef) -> bool:
    """``(Task, Node) -> FitError?``: a definition actions hand to ``predicate_nodes``."""
    return ([p.type.name for p in decl.params] == ["Task", "Node"] and decl.returns.name == "FitError")


def batch_forms(compiler: Compiler) -> tuple[list[P.stmt], list[Fallback]]:
    """Stage 6 (``driver.py``): the batch forms of the module ``compiler`` lowered, as statements
    for its ``__build__``, and the rules left to per-node evaluation."""
    return Vectorizer(compiler).emit()

