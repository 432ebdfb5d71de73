"""Where a policy's clock goes: whether every value computed from ``now`` ends in a comparison.

Replay may let an idle session stand for the ones after it only until the clock could change its
mind (runtime/whatif/clock_reads.py records, at run time, the instant each comparison with the
clock flips).  That record is complete only where every value computed from ``_rt.now`` reaches
a decision through a comparison it sees.  :func:`clock_use` checks this on the policy's generated
Python (what actually runs) by following three kinds of values:

- a *clock*: ``_rt.now`` and whatever is computed from it through ``+ - * /``, unary minus, the
  branches of a conditional, ``min``/``max``/``_div``, ``_math.floor`` (a step of the clock, whose
  comparisons the watch also follows), ``_V.present`` (a column of clocks, idem), local and session
  variables and the results of the functions that return one; it ends in ``< <= > >= == !=``, in
  ``is``/``is not None`` (never true of a number, whatever the time), in ``_go.local_time``'s
  instant (which records the next local midnight itself), or in the map the session saves as
  process state (saved as the plain number: the next session compares it as a constant);
- a *function value* returning a clock: a lambda whose body is one, or a policy function passed
  as a value.  It may be called (a clock), charged (``_B.called``), assigned, or passed to one of
  the policy's own functions, whose parameter then carries it (preempt's ``keep_best(nodes,
  fn(n) => top_priority_start(...))``);
- a *container* of clocks: a comprehension whose elements or values are clocks; it may be
  assigned and indexed (a clock), nothing else (keep_best's map of scores).

Any other use -- a library function's argument, a hook's result, a dictionary key, a module
global, a container passed on -- makes the use ``OPAQUE``, and replay runs every period.
"""

from __future__ import annotations

import ast
from typing import Iterator

from fumarole.policy_lang.compiled import PROCESS_STATE_ENTRY, STATE_VIEW

NONE, LINEAR, OPAQUE = "none", "linear", "opaque"

# The kinds of values followed.
CLOCK, FUNCTION, CONTAINER = "clock", "function", "container"

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# Calls a clock passes through as a clock: min and max compare it (and return an argument); `_div`
# is the language's `/` (namespace.py: Go's infinities on a zero divisor, decided by comparing with
# 0, which the watch records too).
_PASSING = ("min", "max", "_div")
# Library calls (namespace.py's `_lib.name`) a clock passes through as one, and those it ends in.
_PASSING_LIBRARY = (("_math", "floor"), ("_V", "present"))
_ENDING_LIBRARY = (("_go", "local_time"),)
# The entries of a builder's result the session reads as data, not as hooks: the process state it
# saves at close (as plain numbers, process_state.py) and the read-only view tools watch.
_STATE_MAPS = (PROCESS_STATE_ENTRY, STATE_VIEW)


def clock_use(source: str) -> str:
    """NONE when the module never reads ``_rt.now``, LINEAR when every value computed from it ends
    in a comparison through the forms above, OPAQUE otherwise."""
    return _Flow(ast.parse(source)).use()


def sources_use(sources: Iterator[str]) -> str:
    """The use of a whole bundle: OPAQUE if any module's is, LINEAR if any is, else NONE."""
    uses = {clock_use(source) for source in sources}
    return OPAQUE if OPAQUE in uses else LINEAR if LINEAR in uses else NONE


class _Opaque(Exception):
    """A value went where the analysis cannot follow it."""


class _Flow:
    """One module's value flow, followed from every read of ``_rt.now``."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self.loads: dict[str, list[ast.Name]] = {}
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        self.globals: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.FunctionDef):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Global):
                self.globals.update(node.names)
        self.seen: set[tuple[int, str]] = set()
        self.carrying: set[tuple[str, str]] = set()  # (variable, kind) pairs holding a followed value
        self.returning: set[str] = set()  # functions returning a clock
        self.work: list[tuple[ast.AST, str]] = []

    def use(self) -> str:
        seeds = [node for node in ast.walk(self.tree) if isinstance(node, ast.Attribute) and node.attr == "now"
                 and isinstance(node.value, ast.Name) and node.value.id == "_rt"]
        if not seeds:
            return NONE
        self.work = [(seed, CLOCK) for seed in seeds]
        try:
            while self.work:
                node, kind = self.work.pop()
                if (id(node), kind) not in self.seen:
                    self.seen.add((id(node), kind))
                    self._step(node, kind)
        except _Opaque:
            return OPAQUE
        return LINEAR

    def _step(self, node: ast.AST, kind: str) -> None:
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Assign):
            if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) and parent.value is node:
                return self._variable(parent.targets[0].id, kind)
            raise _Opaque
        if kind == CLOCK:
            self._clock(node, parent)
        elif kind == FUNCTION:
            self._function(node, parent)
        elif isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
            self.work.append((parent, CLOCK))  # an element of a container of clocks
        else:
            raise _Opaque

    def _clock(self, node: ast.AST, parent: ast.AST | None) -> None:
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC) \
                or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)) \
                or isinstance(parent, ast.IfExp) and node is not parent.test:
            self.work.append((parent, CLOCK))
        elif isinstance(parent, ast.Compare):
            if not all(isinstance(op, _ORDER) for op in parent.ops) and not _against_none(parent):
                raise _Opaque
        elif isinstance(parent, ast.Call) and not parent.keywords and any(arg is node for arg in parent.args):
            self._argument(node, parent)
        elif isinstance(parent, ast.AugAssign) and isinstance(parent.target, ast.Name) \
                and isinstance(parent.op, (ast.Add, ast.Sub)):
            self._variable(parent.target.id, CLOCK)
        elif isinstance(parent, ast.Return) and parent.value is node:
            self._returned(self._enclosing_function(parent))
        elif isinstance(parent, ast.Lambda) and parent.body is node:
            self.work.append((parent, FUNCTION))
        elif isinstance(parent, ast.DictComp) and parent.value is node \
                or isinstance(parent, ast.ListComp) and parent.elt is node:
            self.work.append((parent, CONTAINER))
        elif not self._in_state_map(node, parent):
            raise _Opaque

    def _argument(self, node: ast.AST, call: ast.Call) -> None:
        """A clock as a call's argument: passed through, ended, or not followed."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in _PASSING:
            self.work.append((call, CLOCK))
        elif _library(func) in _PASSING_LIBRARY and len(call.args) == 1:
            self.work.append((call, CLOCK))
        elif _library(func) in _ENDING_LIBRARY and call.args[0] is node:
            pass
        else:
            raise _Opaque

    def _function(self, node: ast.AST, parent: ast.AST | None) -> None:
        """A function value returning a clock: called, charged, or passed to a policy function."""
        if isinstance(parent, ast.Call) and parent.func is node:
            self.work.append((parent, CLOCK))
        elif isinstance(parent, ast.Call) and _library(parent.func) == ("_B", "called") \
                and len(parent.args) == 1 and not parent.keywords:
            self.work.append((parent, FUNCTION))
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and not parent.keywords \
                and any(arg is node for arg in parent.args):
            self._variable(self._parameter(parent.func.id, parent.args.index(node)), FUNCTION)  # type: ignore[arg-type]
        else:
            raise _Opaque

    def _parameter(self, function: str, position: int) -> str:
        """The name of a policy function's parameter at ``position`` (one definition, plain parameters)."""
        definitions = self.functions.get(function, [])
        if len(definitions) != 1:
            raise _Opaque
        arguments = definitions[0].args
        if arguments.vararg or arguments.posonlyargs or position >= len(arguments.args):
            raise _Opaque
        return arguments.args[position].arg

    def _variable(self, name: str, kind: str) -> None:
        """A variable (local, or the session's state in the builder) holds a value: follow its reads."""
        if name in self.globals:
            raise _Opaque
        if (name, kind) not in self.carrying:
            self.carrying.add((name, kind))
            self.work.extend((use, kind) for use in self.loads.get(name, ()))

    def _returned(self, function: ast.FunctionDef | None) -> None:
        """A policy function returns a clock: each call is one, and the function itself as a value
        returns one."""
        if function is None:
            raise _Opaque
        if function.name not in self.returning:
            self.returning.add(function.name)
            for use in self.loads.get(function.name, ()):
                call = self.parents.get(id(use))
                called = isinstance(call, ast.Call) and call.func is use
                self.work.append((call, CLOCK) if called else (use, FUNCTION))  # type: ignore[arg-type]

    def _enclosing_function(self, node: ast.AST) -> ast.FunctionDef | None:
        above = self.parents.get(id(node))
        while above is not None and not isinstance(above, ast.FunctionDef):
            above = self.parents.get(id(above))
        return above

    def _in_state_map(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """``node`` is a value of the builder's process-state or state-view map (``{'__process_state__':
        lambda: {'name': s_name}}``)."""
        if not (isinstance(parent, ast.Dict) and any(value is node for value in parent.values)):
            return False
        entry = self.parents.get(id(parent))
        if not (isinstance(entry, ast.Lambda) and entry.body is parent):
            return False
        result = self.parents.get(id(entry))
        return isinstance(result, ast.Dict) and any(
            value is entry and isinstance(key, ast.Constant) and key.value in _STATE_MAPS
            for key, value in zip(result.keys, result.values))


def _against_none(compare: ast.Compare) -> bool:
    """``x is None`` / ``x is not None``: a number's identity with None does not move with time."""
    sides = (compare.left, *compare.comparators)
    return len(compare.ops) == 1 and isinstance(compare.ops[0], (ast.Is, ast.IsNot)) \
        and any(isinstance(side, ast.Constant) and side.value is None for side in sides)


def _library(func: ast.expr) -> tuple[str, str] | None:
    """``(module, name)`` of a ``_module.name`` callee."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    return None
