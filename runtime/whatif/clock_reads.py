"""Until when a session's decisions stay the same, recorded by the clock the session reads.

A replay may skip a session only where running it could not change anything.  For a bundle
that reads ``now``, an unchanged cluster can still decide anew as time passes -- a task
outgrows its minimum run time, a job outwaits its SLA, a revocable zone's window closes -- so
replay used to run such a bundle every period.  Most policies read the clock in one way only:
they compare a linear function of it (``now - start_time >= min_runtime``), or a step of it
(``floor(now)``), with something that does not move.  Such a comparison has the same outcome
until one known instant, so a session that compared only such values decides the same until
the earliest of those instants, and the clock may jump there.

Two parts make that sound:

- runtime/whatif/clock_flow.py reads a policy's generated Python and checks that every value
  computed from ``_rt.now`` reaches a decision only through forms followed here (``LINEAR``);
  any other use makes it ``OPAQUE`` and replay runs every period, as before.
- :class:`WatchedClock` is the session time as a float that, in a ``LINEAR`` bundle, records for
  each comparison the instant its outcome would flip (:class:`ClockWatch`); :class:`WatchedStep`
  is ``floor`` of one, :class:`~fumarole.runtime.whatif.clock_lanes.WatchedLanes` a column of them
  (a batch form's ``now - metrics_time``), and :meth:`WatchedClock.stays_within` is how a library
  function whose result is piecewise constant in the clock (``local_time``'s day) records its
  next change.  A use the reading allows but these values cannot follow at run time (a product of
  two clocks, an array of objects) marks the watch opaque instead.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from fumarole.runtime.whatif.clock_lanes import WatchedLanes, linear_slope

class ClockWatch:
    """One session's record: the earliest instant after ``at`` at which a comparison it made would
    come out otherwise (``until``), or ``opaque`` when it used the clock in a way not followed;
    ``kept`` when it kept a value of the clock in the process state, so that the state it leaves
    depends on its instant, not only on its comparisons' outcomes."""

    __slots__ = ("at", "until", "opaque", "kept")

    def __init__(self, at: float) -> None:
        self.at, self.until, self.opaque, self.kept = at, math.inf, False, False

    def now(self) -> float:
        return WatchedClock.at_slope(self.at, 1.0, self)

    def steady_until(self) -> float:
        """Until when a session that ran at ``at`` decides the same: ``at`` itself if not known."""
        return self.at if self.opaque else self.until

    def crossing(self, value: float, slope: float, bound: float) -> None:
        """A value moving at ``slope`` per second, ``value`` at ``at``, was compared with ``bound``
        (slopes relative): the outcome may change once it reaches the bound."""
        if slope != 0.0:
            self.flips_at(self.at - (value - bound) / slope)

    def flips_at(self, instant: float) -> None:
        """Some outcome may change at ``instant`` (one already past is no news)."""
        if instant >= self.at:  # equal now, it may differ at any later instant
            # A little early: a session run just before the exact instant only costs a session.
            self.until = min(self.until, instant - 1e-3)


class _Watched(float):
    """A number computed from the watched clock: any use not followed marks the watch opaque."""

    __slots__ = ("watch",)
    __array_ufunc__ = None  # a numpy operand defers to the reflected methods, which see it
    watch: ClockWatch

    def _opaque(self, name: str) -> Callable[..., Any]:
        self.watch.opaque = True
        return getattr(float(self), name)

    def kept(self) -> float:
        """The value as the process state keeps it for the next session: the number it is now."""
        self.watch.kept = True
        return float(self)

    def _compare(self, other: object, op: Callable[[Any, Any], Any]) -> Any:
        """A comparison: each kind of watched number records where its outcome flips."""
        raise NotImplementedError

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

    def __add__(self, other: object) -> Any:
        return self._opaque("__add__")(other)

    def __radd__(self, other: object) -> Any:
        return self._opaque("__radd__")(other)

    def __sub__(self, other: object) -> Any:
        return self._opaque("__sub__")(other)

    def __rsub__(self, other: object) -> Any:
        return self._opaque("__rsub__")(other)

    def __mul__(self, other: object) -> Any:
        return self._opaque("__mul__")(other)

    def __rmul__(self, other: object) -> Any:
        return self._opaque("__rmul__")(other)

    def __truediv__(self, other: object) -> Any:
        return self._opaque("__truediv__")(other)

    def __rtruediv__(self, other: object) -> Any:
        return self._opaque("__rtruediv__")(other)

    def __neg__(self) -> Any:
        return self._opaque("__neg__")()

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


class WatchedClock(_Watched):
    """A float equal to ``slope * t + c`` at the watch's instant; comparisons record their flip."""

    __slots__ = ("slope",)
    slope: float

    @classmethod
    def at_slope(cls, value: float, slope: float, watch: ClockWatch) -> "WatchedClock | float":
        if slope == 0.0:
            return value  # no longer moves with the clock
        clock = cls(value)
        clock.slope, clock.watch = slope, watch
        return clock

    def _lift(self, other: object) -> tuple[float, float] | None:
        if type(other) is WatchedClock and other.watch is self.watch:
            return float(other), other.slope
        if isinstance(other, (int, float)) and not isinstance(other, _Watched):
            return float(other), 0.0
        self.watch.opaque = True  # an object, or a step of the clock: its arithmetic with it is not followed
        return None

    def _arith(self, other: Any, op: Callable[[Any, Any], Any], reflected: bool) -> Any:
        if isinstance(other, np.ndarray):
            return WatchedLanes.combine(self, other, op, reflected)
        lifted = self._lift(other)
        mine = float(self)
        if lifted is None:
            return op(other, mine) if reflected else op(mine, other)
        value, slope = lifted
        a, b = ((value, slope), (mine, self.slope)) if reflected else ((mine, self.slope), (value, slope))
        result = op(a[0], b[0])
        moves = linear_slope(op, a[1], b[1], a[0], b[0])
        if moves is None:
            self.watch.opaque = True  # not linear in the clock any more
            return result
        return WatchedClock.at_slope(result, moves, self.watch)

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
        if isinstance(other, np.ndarray):
            return WatchedLanes.compare(self, other, op)
        lifted = self._lift(other)
        mine = float(self)
        if lifted is None:
            return op(mine, other)
        value, slope = lifted
        self.watch.crossing(mine, self.slope - slope, value)
        return op(mine, value)

    def __floor__(self) -> Any:
        return WatchedStep.of(self)

    def stays_within(self, low: float, high: float) -> None:
        """A result that depends on the clock only through whether it lies in ``[low, high)`` (a
        local date's midnight to the next) holds until the clock leaves that span."""
        self.watch.crossing(float(self), self.slope, low)
        self.watch.crossing(float(self), self.slope, high)


class WatchedStep(_Watched):
    """``floor`` of a watched clock (a whole second, as Go's ``Unix()``).  Compared with a bound ``b``
    it comes out otherwise only where the clock itself crosses ``ceil(b)`` or ``floor(b) + 1``
    (``floor(x) < b`` is ``x < ceil(b)``, ``floor(x) <= b`` is ``x < floor(b) + 1``, ``==`` holds on
    ``[b, b + 1)``), so those crossings are recorded.  Any arithmetic on it is not followed."""

    __slots__ = ("clock",)
    clock: WatchedClock

    @classmethod
    def of(cls, clock: WatchedClock) -> "WatchedStep":
        step = cls(math.floor(float(clock)))
        step.clock, step.watch = clock, clock.watch
        return step

    def _compare(self, other: object, op: Callable[[Any, Any], Any]) -> Any:
        if not isinstance(other, (int, float)) or isinstance(other, _Watched):
            self.watch.opaque = True
        elif math.isfinite(other):
            clock = self.clock
            for bound in (math.ceil(other), math.floor(other) + 1):
                self.watch.crossing(float(clock), clock.slope, float(bound))
        return op(float(self), other)

