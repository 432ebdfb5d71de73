"""How a bundle reads the clock, and until when a session's decisions stay the same.

A replay may skip a session only where running it could not change anything.  For a bundle
that reads ``now``, an unchanged cluster can still decide anew as time passes -- a task
outgrows its minimum run time, a job outwaits its SLA -- so replay used to run such a bundle
every period.  Most policies read the clock in one way only: they compare a linear function of
it (``now - start_time >= min_runtime``) with something that does not move.  Such a comparison
has the same outcome until one known instant, so a session that compared only such values
decides the same until the earliest of those instants, and the clock may jump there.

Two parts make that sound:

- :func:`clock_use` reads a policy's generated Python (what actually runs) and follows every
  value computed from ``_rt.now``: through ``+ - * /``, unary minus, the branches of a
  conditional, ``min``/``max``, local variables and the results of the functions that return
  it, into comparisons.  Any other use -- an argument to a library function, a stored state, a
  hook's result, a lambda, a container -- makes the use ``OPAQUE`` and replay runs every
  period, as before.
- :class:`WatchedClock` is the session time as a float that, in a ``LINEAR`` bundle, records for
  each comparison the instant its outcome would flip (:class:`ClockWatch`).  A use the reading
  above allows but this value cannot follow at run time (a column of numbers, a product of two
  clocks) marks the watch opaque instead.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Iterator

NONE, LINEAR, OPAQUE = "none", "linear", "opaque"

# Nodes a clock value may flow into and stay one (its parent is then followed).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# Calls a clock value passes through as one: min and max compare it (and return an argument);
# `_div` is the language's `/` (namespace.py: `a / b`, Go's infinities on a zero divisor, decided
# by comparing `a` with 0, which the watch records too).
_PASSING = ("min", "max", "_div")


def clock_use(source: str) -> str:
    """NONE when the module never reads ``_rt.now``, LINEAR when every value computed from it ends
    in a comparison through the forms above, OPAQUE otherwise."""
    tree = ast.parse(source)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    seeds = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "now"
             and isinstance(node.value, ast.Name) and node.value.id == "_rt"]
    if not seeds:
        return NONE
    loads: dict[str, list[ast.Name]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(node)
    shared = {name for node in ast.walk(tree) if isinstance(node, (ast.Nonlocal, ast.Global)) for name in node.names}
    carrying: set[str] = set()  # variables holding a clock value somewhere
    returning: set[str] = set()  # functions returning one
    work: list[ast.AST] = list(seeds)
    seen: set[int] = set()
    while work:
        node = work.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        parent = parents.get(id(node))
        step = _follow(node, parent, parents)
        if step is None:
            return OPAQUE
        kind, target = step
        if kind == "value":
            work.append(target)
        elif kind == "variable":
            if target in shared:  # a state that outlives the call
                return OPAQUE
            if target not in carrying:
                carrying.add(target)
                work.extend(loads.get(target, ()))
        elif kind == "function" and target not in returning:
            returning.add(target)
            for use in loads.get(target, ()):
                call = parents.get(id(use))
                if not (isinstance(call, ast.Call) and call.func is use):
                    return OPAQUE  # the function passed as a value: its results go who knows where
                work.append(call)
    return LINEAR


def _follow(node: ast.AST, parent: ast.AST | None, parents: dict[int, ast.AST]) -> tuple[str, Any] | None:
    """Where a clock value at ``node`` goes next: ("value", node), ("variable", name), ("function",
    name), ("end", None) at a comparison, or None where it leaves what replay can follow."""
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC):
        return "value", parent
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)):
        return "value", parent
    if isinstance(parent, ast.IfExp) and node is not parent.test:
        return "value", parent
    if isinstance(parent, ast.Compare):
        return ("end", None) if all(isinstance(op, _ORDER) for op in parent.ops) else None
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _PASSING \
            and not parent.keywords and any(arg is node for arg in parent.args):
        return "value", parent
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return "variable", parent.targets[0].id
    if isinstance(parent, ast.AugAssign) and isinstance(parent.target, ast.Name) \
            and isinstance(parent.op, (ast.Add, ast.Sub)):
        return "variable", parent.target.id
    if isinstance(parent, ast.Return) and parent.value is node:
        function = _enclosing_function(parent, parents)
        return ("function", function.name) if function is not None else None
    return None


def _enclosing_function(node: ast.AST, parents: dict[int, ast.AST]) -> ast.FunctionDef | None:
    above = parents.get(id(node))
    while above is not None and not isinstance(above, ast.FunctionDef):
        above = parents.get(id(above))
    return above


class ClockWatch:
    """One session's record: the earliest instant after ``at`` at which a comparison it made would
    come out otherwise (``until``), or ``opaque`` when it used the clock in a way not followed."""

    __slots__ = ("at", "until", "opaque")

    def __init__(self, at: float) -> None:
        self.at, self.until, self.opaque = at, math.inf, False

    def now(self) -> float:
        return WatchedClock.at_slope(self.at, 1.0, self)

    def steady_until(self) -> float:
        """Until when a session that ran at ``at`` decides the same: ``at`` itself if not known."""
        return self.at if self.opaque else self.until


class WatchedClock(float):
    """A float equal to ``slope * t + c`` at the watch's instant; comparisons record their flip."""

    __slots__ = ("slope", "watch")
    __array_ufunc__ = None  # a numpy operand defers to the reflected methods below, which see it
    slope: float
    watch: ClockWatch

    @classmethod
    def at_slope(cls, value: float, slope: float, watch: ClockWatch) -> "WatchedClock | float":
        if slope == 0.0:
            return value  # no longer moves with the clock
        clock = cls(value)
        clock.slope, clock.watch = slope, watch
        return clock

    def _lift(self, other: object) -> tuple[float, float] | None:
        if type(other) is WatchedClock:
            return float(other), other.slope
        if isinstance(other, (int, float)):
            return float(other), 0.0
        self.watch.opaque = True  # an array or an object: its arithmetic with the clock is not followed
        return None

    def _arith(self, other: Any, op: Callable[[Any, Any], Any], reflected: bool) -> Any:
        lifted = self._lift(other)
        mine = float(self)
        if lifted is None:
            return op(other, mine) if reflected else op(mine, other)
        value, slope = lifted
        a, b = ((value, slope), (mine, self.slope)) if reflected else ((mine, self.slope), (value, slope))
        result = op(a[0], b[0])
        if op is operator.add or op is operator.sub:
            return WatchedClock.at_slope(result, op(a[1], b[1]), self.watch)
        if op is operator.mul and (a[1] == 0.0 or b[1] == 0.0):
            return WatchedClock.at_slope(result, a[1] * b[0] + b[1] * a[0], self.watch)
        if op is operator.truediv and b[1] == 0.0:
            return WatchedClock.at_slope(result, a[1] / b[0], self.watch)
        self.watch.opaque = True  # not linear in the clock any more
        return result

    def __add__(self, other: object) -> Any:
        return self._arith(other, operator.add, False)

    def __radd__(self, other: object) -> Any:
        return self._arith(other, operator.add, True)

    def __sub__(self, other: object) -> Any:
        return self._arith(other, operator.sub, False)

    def __rsub__(self, other: object) -> Any:
        return self._arith(other, operator.sub, True)

    def __mul__(self, other: object) -> Any:
        return self._arith(other, operator.mul, False)

    def __rmul__(self, other: object) -> Any:
        return self._arith(other, operator.mul, True)

    def __truediv__(self, other: object) -> Any:
        return self._arith(other, operator.truediv, False)

    def __rtruediv__(self, other: object) -> Any:
        return self._arith(other, operator.truediv, True)

    def __neg__(self) -> Any:
        return WatchedClock.at_slope(-float(self), -self.slope, self.watch)

    def __pos__(self) -> Any:
        return self

    def _compare(self, other: object, op: Callable[[Any, Any], Any]) -> Any:
        lifted = self._lift(other)
        mine = float(self)
        if lifted is None:
            return op(mine, other)
        value, slope = lifted
        gap = self.slope - slope
        if gap != 0.0:
            flips = self.watch.at - (mine - value) / gap
            if flips >= self.watch.at:  # equal now, it may differ at any later instant
                # A little early: a session run just before the exact instant only costs a session.
                self.watch.until = min(self.watch.until, flips - 1e-3)
        return op(mine, value)

    def __lt__(self, other: object) -> Any:
        return self._compare(other, operator.lt)

    def __le__(self, other: object) -> Any:
        return self._compare(other, operator.le)

    def __gt__(self, other: object) -> Any:
        return self._compare(other, operator.gt)

    def __ge__(self, other: object) -> Any:
        return self._compare(other, operator.ge)

    def __eq__(self, other: object) -> Any:
        return self._compare(other, operator.eq)

    def __ne__(self, other: object) -> Any:
        return self._compare(other, operator.ne)

    __hash__ = float.__hash__

    def _opaque(self, name: str) -> Callable[..., Any]:
        self.watch.opaque = True
        return getattr(float(self), name)

    def __floordiv__(self, other: object) -> Any:
        return self._opaque("__floordiv__")(other)

    def __mod__(self, other: object) -> Any:
        return self._opaque("__mod__")(other)

    def __pow__(self, other: object, mod: None = None) -> Any:
        return self._opaque("__pow__")(other)

    def __abs__(self) -> Any:
        return self._opaque("__abs__")()

    def __round__(self, ndigits: Any = None) -> Any:
        return self._opaque("__round__")(ndigits)

    def __floor__(self) -> Any:
        return self._opaque("__floor__")()

    def __ceil__(self) -> Any:
        return self._opaque("__ceil__")()

    def __trunc__(self) -> Any:
        return self._opaque("__trunc__")()

    def __bool__(self) -> bool:
        return self._opaque("__bool__")()

    def __format__(self, spec: str) -> str:
        return self._opaque("__format__")(spec)


def sources_use(sources: Iterator[str]) -> str:
    """The use of a whole bundle: OPAQUE if any module's is, LINEAR if any is, else NONE."""
    uses = {clock_use(source) for source in sources}
    return OPAQUE if OPAQUE in uses else LINEAR if LINEAR in uses else NONE
