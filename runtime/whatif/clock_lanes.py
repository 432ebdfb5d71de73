"""A column of clocks: a batch form's ``now - metrics_time`` over a node column, watched lane by lane.

A node rule's batch form (policy_lang/vectorize.py) computes ``now - x`` for every node at once,
so the watched clock (runtime/whatif/clock_reads.py) meets a numpy column.  :class:`WatchedLanes`
is that column with how fast each lane moves with the clock: ``+ - * /`` with numbers or plain
columns keep it one (``linear_slope``), and an order comparison with such operands records the
earliest instant a lane's outcome would flip (a NaN lane, a node without metrics, never flips).
Any other numpy use -- another ufunc, a numpy function, reading a lane out -- marks the watch
opaque, as the scalar clock does for what it cannot follow.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Protocol

import numpy as np


class Watch(Protocol):
    """What the lanes record into (clock_reads.Watch; this module is below it, as it uses the lanes)."""

    at: float
    opaque: bool

    def flips_at(self, instant: float) -> None: ...


def linear_slope(op: Callable[[Any, Any], Any], left_slope: Any, right_slope: Any, left: Any, right: Any) -> Any:
    """How fast ``left op right`` moves, given how fast its operands do (numbers, or lanes of a
    column), or None where it is not linear in the clock (a product or quotient of moving values)."""
    if op is operator.add or op is operator.sub:
        return op(left_slope, right_slope)
    if op is operator.mul and (_still(left_slope) or _still(right_slope)):
        return left_slope * right + right_slope * left
    if op is operator.truediv and _still(right_slope):
        return left_slope / right
    return None


def _still(slope: Any) -> bool:
    return bool(np.all(slope == 0.0))

_ARITHMETIC: dict[Any, Callable[[Any, Any], Any]] = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul, np.true_divide: operator.truediv}
_ORDER = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)


class WatchedLanes(np.ndarray):
    """Float lanes equal to ``slope * t + c`` each at the watch's instant."""

    slope: Any  # a number, or an array of one per lane
    watch: Watch | None

    @classmethod
    def of(cls, values: Any, slope: Any, watch: Watch) -> Any:
        if bool(np.all(slope == 0.0)):
            return np.asarray(values, dtype=float)  # no longer moves with the clock
        lanes = np.asarray(values, dtype=float).view(cls)
        lanes.slope, lanes.watch = slope, watch
        return lanes

    @classmethod
    def combine(cls, clock: Any, column: np.ndarray, op: Callable[[Any, Any], Any], reflected: bool) -> Any:
        """``clock op column`` (or ``column op clock``) for the scalar clock's arithmetic."""
        lifted = cls._lift(column, clock.watch)
        if lifted is None:
            clock.watch.opaque = True
            return op(column, float(clock)) if reflected else op(float(clock), column)
        mine = (float(clock), clock.slope)
        left, right = (lifted, mine) if reflected else (mine, lifted)
        return cls._arith(op, left, right, clock.watch)

    @classmethod
    def compare(cls, clock: Any, column: np.ndarray, op: Callable[[Any, Any], Any]) -> Any:
        """``clock op column`` for the scalar clock's comparisons: lane by lane."""
        lanes = cls.of(np.full(np.shape(column), float(clock)), clock.slope, clock.watch)
        return op(lanes, column)

    def __array_finalize__(self, obj: Any) -> None:
        self.slope = getattr(obj, "slope", 0.0)
        self.watch = getattr(obj, "watch", None)

    @staticmethod
    def _lift(operand: Any, watch: Watch) -> tuple[Any, Any] | None:
        """``(value, slope)`` of an operand, or None for one not followed (objects, another watch)."""
        if isinstance(operand, WatchedLanes):
            return (operand.view(np.ndarray), operand.slope) if operand.watch is watch else None
        if hasattr(operand, "watch"):  # a watched scalar: a clock (with its slope), or a step, not followed
            slope = getattr(operand, "slope", None)
            return (float(operand), slope) if slope is not None and operand.watch is watch else None
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return float(operand), 0.0
        if isinstance(operand, np.ndarray):
            try:
                return np.asarray(operand, dtype=float), 0.0
            except (TypeError, ValueError):
                return None
        return None

    @classmethod
    def _arith(cls, op: Callable[[Any, Any], Any], left: tuple[Any, Any], right: tuple[Any, Any],
               watch: Watch) -> Any:
        result = op(left[0], right[0])
        slope = linear_slope(op, left[1], right[1], left[0], right[0])
        if slope is None:
            watch.opaque = True
            return result
        return cls.of(result, slope, watch)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        watch = self.watch
        plain = [x.view(np.ndarray) if isinstance(x, WatchedLanes) else x for x in inputs]
        if watch is None:
            return getattr(ufunc, method)(*plain, **kwargs)
        lifted = [self._lift(x, watch) for x in inputs]
        left, right = (lifted[0], lifted[1]) if len(lifted) == 2 else (None, None)
        if method != "__call__" or kwargs or left is None or right is None:
            watch.opaque = True
            return getattr(ufunc, method)(*plain, **kwargs)
        if ufunc in _ARITHMETIC:
            return self._arith(_ARITHMETIC[ufunc], left, right, watch)
        if ufunc in _ORDER:
            _record_flips(watch, left, right)
            return ufunc(left[0], right[0])
        watch.opaque = True
        return ufunc(*plain)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        self._not_followed()
        return super().__array_function__(func, types, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        self._not_followed()
        return super().__getitem__(key)

    def __iter__(self) -> Any:
        self._not_followed()
        return super().__iter__()

    def __bool__(self) -> bool:
        self._not_followed()
        return super().__bool__()

    def tolist(self) -> Any:
        self._not_followed()
        return super().tolist()

    def item(self, *args: Any) -> Any:
        self._not_followed()
        return super().item(*args)

    def _not_followed(self) -> None:
        if self.watch is not None:
            self.watch.opaque = True


def _record_flips(watch: Watch, left: tuple[Any, Any], right: tuple[Any, Any]) -> None:
    """The earliest instant any lane of ``left`` compared with ``right`` comes out otherwise."""
    gap = np.broadcast_to(np.asarray(left[1] - right[1], dtype=float), np.broadcast(left[0], right[0]).shape)
    moving = gap != 0.0
    if not moving.any():
        return
    distance = np.broadcast_to(np.asarray(left[0] - right[0], dtype=float), gap.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        flips = watch.at - distance[moving] / gap[moving]
    ahead = flips[flips >= watch.at]  # NaN lanes (no value) never compare true: they never flip
    if ahead.size:
        watch.flips_at(float(ahead.min()))
