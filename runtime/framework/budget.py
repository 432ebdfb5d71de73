"""The budget every policy runs on, so that every policy ends, in time and in memory.

A *step* is one unit of work a policy asks for: one loop iteration, one call
of a function value or of a definition that calls others (a chain of
definitions each calling the next twice makes 2^n calls without a loop), and
one item or character that an operation builds, copies, scans or compares --
a ``+`` of strings or lists, ``copy()``, ``keys()``, ``values()``, ``range``,
``str``, ``split``, a comprehension's items, ``in`` over a list or string,
``==`` of lists or maps, a comparison of two strings, the text functions
(``lower``, ``trim_space``, ``parse_time``... marked ``sized`` in
runtime/schema.yaml), ``sum``/``max``/``min`` of a list.  So one step costs
bounded time whatever the values' sizes, and the steps a session has bound
its time.  Compiled policies charge their steps to the session's
:class:`StepBudget` (``_B`` in generated code): a ``while`` or ``drain`` loop
with ``_B.left -= 1`` and a test, everything else with one call charging the
whole size up front (cheap: no work per item).  Arithmetic whose operand
types the checker could not tell goes through :meth:`StepBudget.operate`,
which charges and refuses at run time what the typed operators would.

The limits (each ends the session with a PolicyRuntimeError naming it and the
policy position: R001; steps, time and memory with its :class:`BudgetExhausted`,
which no fallback retries, so the position is where the budget was spent):

* **steps**: ``session_steps`` for the whole session; ``hook_steps`` for one
  invocation of a plugin hook, everything it calls included; ``action_steps``
  for one action's ``execute`` (the plugin hooks it calls included);
* **time**: ``timeout`` seconds from the budget's start (``--session-timeout``).
  The clock is read whenever about :data:`CHECK_SECONDS` of charged work has
  passed (the chunk of steps between two checks follows the measured speed),
  and a process-wide watchdog thread empties the counter at the deadline, so
  the policy's very next step sees it however slow its steps are;
* **sizes**: no string, list or map a policy builds may pass
  :data:`VALUE_ITEMS` characters or items, no integer :data:`INTEGER_BITS` bits;
* **memory**: the process's resident memory may grow by at most
  ``memory_bytes`` over its size when the budget started (read from
  ``/proc/self/statm`` at the checks and before any large value is built;
  where that file does not exist, only the sizes bound memory).  Out-of-memory
  itself (a ``resource`` limit of a worker process) is reported by the session
  as this budget too.

The API the rest of fumarole uses is small: ``StepBudget(timeout=...)`` (the
other limits have defaults), one per session, handed to ``Session(budget=)``;
:meth:`StepBudget.renew` before each further request served from a session
kept open (the extender's verbs), which gives it a fresh deadline, fresh steps
and a fresh memory baseline.
"""

from __future__ import annotations

import heapq
import os
import sys
import threading
import time
import weakref
from itertools import islice
from types import FrameType
from typing import Any, Sized

from fumarole.policy_lang.compiled import ACTION_HOOK_PREFIX, BATCH_HOOK_PREFIX, PLUGIN_HOOK_PREFIX
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.policy_error import BudgetExhausted, PolicyRuntimeError

HOOK_STEPS = 10_000_000  # one plugin hook invocation, with everything it calls
ACTION_STEPS = 500_000_000  # one action's execute, with the plugin hooks it calls
SESSION_STEPS = 2_000_000_000  # one session, every policy together
MEMORY_BYTES = 1024 ** 3  # growth of the process's resident memory during one session (an L session: ~0.4 GiB)
VALUE_ITEMS = 16_777_216  # the longest string (characters), list or map (items) a policy may build
INTEGER_BITS = 4096  # the largest integer a policy may compute
CHECK_SECONDS = 0.01  # charged work between two readings of the clock (and of the memory)
_CHUNK = 10_000  # the most steps between two checks of the limits
_LARGE = 1_000_000  # a value this size is weighed against the memory budget before it is built
_POKED = -(1 << 60)  # the counter the watchdog leaves at a deadline: far below any real charge
_PLUGIN_PREFIXES = (PLUGIN_HOOK_PREFIX, BATCH_HOOK_PREFIX)  # a plugin hook's function, per node or batch


class StepBudget:
    """Steps, time and memory left to one session, and the steps of the hook or action running."""

    __slots__ = ("left", "used", "session_steps", "hook_steps", "action_steps", "timeout", "memory_bytes",
                 "deadline", "_granted", "_checked_at", "_memory_checked_at", "_memory_start", "_hook", "_action",
                 "__weakref__")

    def __init__(self, session_steps: int = SESSION_STEPS, hook_steps: int = HOOK_STEPS,
                 timeout: float | None = None, memory_bytes: int | None = MEMORY_BYTES,
                 action_steps: int = ACTION_STEPS) -> None:
        self.session_steps, self.hook_steps, self.action_steps = session_steps, hook_steps, action_steps
        self.timeout, self.memory_bytes = timeout, memory_bytes
        self.renew()

    def renew(self) -> None:
        """Start again: a fresh deadline, no steps used, memory measured from now."""
        now = time.monotonic()
        self.deadline = None if self.timeout is None else now + self.timeout
        self.used = 0
        self.left = self._granted = _CHUNK
        self._checked_at = self._memory_checked_at = now
        self._memory_start = _resident_bytes() if self.memory_bytes is not None else None
        self._hook = _Invocation(PLUGIN_HOOK_PREFIX, self.hook_steps, "hook")
        self._action = _Invocation(ACTION_HOOK_PREFIX, self.action_steps, "action hook")
        if self.deadline is not None:
            _WATCHDOG.watch(self, self.deadline)

    # -- the checks -------------------------------------------------------------------
    def spent(self) -> None:
        """The chunk ran out (or the watchdog emptied it): check every limit, then grant the next chunk."""
        before = self.used
        steps = self._granted - (self.left if self.left > _POKED // 2 else 0)
        self.used += steps
        self.left = self._granted = 0  # nothing more is granted if a limit below raises
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            raise BudgetExhausted(f"the session ran past its deadline ({self.timeout:g} s, --session-timeout)")
        if self.used > self.session_steps:
            raise BudgetExhausted(f"the session's step budget ran out ({self.session_steps:,} steps: loop "
                                     "iterations and items built); a policy must terminate")
        hook, action = _running_invocations()
        self._hook.check(hook, before, self.used)
        self._action.check(action, before, self.used)
        if now - self._memory_checked_at >= CHECK_SECONDS:
            self._memory_checked_at = now
            self._check_memory(0)
        self.left = self._granted = self._next_chunk(now, self.used - before)

    def _next_chunk(self, now: float, steps: int) -> int:
        """As many steps as the last ones ran in CHECK_SECONDS (between 1 and _CHUNK)."""
        elapsed, self._checked_at = now - self._checked_at, now
        if elapsed <= 0:
            return _CHUNK
        return max(1, min(_CHUNK, int(steps * CHECK_SECONDS / elapsed)))

    def _check_memory(self, coming: int) -> None:
        """Refuse when resident memory (plus ``coming`` bytes about to be built) passes the budget."""
        resident, start, limit = _resident_bytes(), self._memory_start, self.memory_bytes
        if start is None or limit is None or resident is None:  # no budget, or no /proc to read
            return
        if resident + coming - start > limit:
            raise BudgetExhausted(f"the session's memory budget ran out ({limit / 2 ** 20:,.0f} MiB "
                                     "beyond what the process held when it started); a policy keeps too much")

    def _sized(self, items: int, what: str) -> None:
        """``what`` (a string or list of ``items`` characters or items) is about to be built: within the
        size budget, and charged."""
        self.left -= items
        if self.left < 0:
            self.spent()
        if items > VALUE_ITEMS:
            unit = "characters" if what.endswith("string") else "items"
            raise PolicyRuntimeError(f"{what} of {items:,} {unit} would pass the size budget ({VALUE_ITEMS:,} "
                                     "items or characters per string, list or map)")
        if items >= _LARGE:
            self._check_memory(items * 8)

    # -- charged operations (called by compiled policies) ----------------------------
    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            self.spent()

    def each(self, items: Sized) -> Any:
        """A list, map or string about to be iterated, scanned or compared: one step per item, charged at once."""
        self.left -= len(items)
        if self.left < 0:
            self.spent()
        return items

    def scan(self, value: Any) -> Any:
        """A value of a type the checker could not tell, about to be compared or searched: as :meth:`each`
        when it is a string, list or map."""
        if isinstance(value, (str, list, dict)):
            self.each(value)
        return value

    def each_capped(self, items: Sized) -> Any:
        """As :meth:`each`, for a loop that may append to its own list: only the items there at the start."""
        size = len(items)
        self.charge(size)
        return islice(items, size) if isinstance(items, list) else items

    def range(self, stop: int) -> list[int]:
        self._sized(max(stop, 0), "range(): a list")
        return list(range(stop))

    def concat(self, left: Any, right: Any) -> Any:
        """``left + right`` of strings or lists: one step per character or item of the result."""
        self._sized(len(left) + len(right), "`+`: a string" if isinstance(left, str) else "`+`: a list")
        return left + right

    def copy(self, value: Any) -> Any:
        """``copy()`` of a list or map: one step per item."""
        self.each(value)
        return value.copy()

    def keys(self, mapping: dict) -> list:
        self.each(mapping)
        return list(mapping)

    def values(self, mapping: dict) -> list:
        self.each(mapping)
        return list(mapping.values())

    def split(self, text: str, sep: str) -> list[str]:
        """Go's strings.Split as Python's: one step per character scanned."""
        self.each(text)
        return text.split(sep)

    def text(self, value: Any, spell: Any) -> str:
        """``str(value)`` as ``spell`` writes it: collections charged before, the text after."""
        if isinstance(value, (list, dict)):
            self.each(value)
        written = spell(value)
        self._sized(len(written), "str(): a string")
        return written

    def called(self, function: Any) -> Any:
        """A function value about to be called: one step (calls can multiply without any loop)."""
        self.left -= 1
        if self.left < 0:
            self.spent()
        return function

    def multiply(self, left: int, right: int) -> int:
        """``left * right`` of integers, refused when the product could pass INTEGER_BITS bits."""
        if left.bit_length() + right.bit_length() > INTEGER_BITS:
            raise PolicyRuntimeError(f"an integer would grow past {INTEGER_BITS:,} bits (the integer size budget)")
        return left * right

    def operate(self, op: str, left: Any, right: Any) -> Any:
        """``left op right`` (+ - * %) where the checker could not tell the operand types.

        Does what the typed operators do -- numbers, a ``+`` of two strings or
        two lists (charged), resources -- and refuses the rest (string or list
        repetition, ``%`` formatting) as the checker would have.
        """
        if _is_number(left) and _is_number(right):
            if op == "*" and isinstance(left, int) and isinstance(right, int):
                return self.multiply(left, right)
            if op == "%" and not (isinstance(left, int) and isinstance(right, int)):
                raise PolicyRuntimeError("`%` needs two ints")
            return _PLAIN[op](left, right)
        if op == "+" and type(left) is type(right) and isinstance(left, (str, list)):
            return self.concat(left, right)
        if _is_resource(left) and (op in "+-" and _is_resource(right) or op == "*" and _is_number(right)):
            return _PLAIN[op](left, right)
        raise PolicyRuntimeError(f"`{op}` is not defined for {_type_name(left)} and {_type_name(right)}")


class _Invocation:
    """The steps of the outermost running invocation of one kind (plugin hook or action)."""

    __slots__ = ("prefix", "limit", "what", "frame", "start")

    def __init__(self, prefix: str, limit: int, what: str) -> None:
        self.prefix, self.limit, self.what = prefix, limit, what
        self.frame: Any = None
        self.start = 0

    def check(self, frame: Any, before: int, used: int) -> None:
        if frame is not self.frame:
            self.frame, self.start = frame, before
        if frame is not None and used - self.start > self.limit:
            name = frame.f_code.co_name.split("_", 2)[2]  # _hook_NAME, _bh_NAME or _action_NAME
            raise BudgetExhausted(f"the step budget of one invocation of {self.what} '{name}' ran out "
                                     f"({self.limit:,} steps: loop iterations and items built); "
                                     "a policy must terminate")


def _running_invocations() -> tuple[Any, Any]:
    """The frames of the outermost plugin hook and the outermost action on the call stack (or None)."""
    hook = action = None
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<policy "):
            if code.co_name.startswith(_PLUGIN_PREFIXES):
                hook = frame
            elif code.co_name.startswith(ACTION_HOOK_PREFIX):
                action = frame
        frame = frame.f_back
    return hook, action


class _Watchdog:
    """One daemon thread for the process: at a budget's deadline it empties the budget's counter.

    The policy's next step then calls ``spent()``, which reads the clock and
    ends the session.  The counter is emptied again every CHECK_SECONDS for a
    while (a policy's own ``left -= 1`` may overwrite one write); a budget
    renewed or dropped is left alone.
    """

    _REPEATS = 200

    def __init__(self) -> None:
        self.start_afresh()

    def start_afresh(self) -> None:
        """No thread and nothing due (also what a forked child starts from)."""
        self._lock = threading.Condition()
        self._due: list[tuple[float, int, weakref.ref, float, int]] = []
        self._order = 0
        self._thread: threading.Thread | None = None

    def watch(self, budget: StepBudget, deadline: float) -> None:
        with self._lock:
            self._push(deadline, weakref.ref(budget), deadline, self._REPEATS)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fumarole-budget-deadline", daemon=True)
                self._thread.start()
            self._lock.notify()

    def _push(self, at: float, ref: weakref.ref, deadline: float, repeats: int) -> None:
        self._order += 1
        heapq.heappush(self._due, (at, self._order, ref, deadline, repeats))

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._lock.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, ref, deadline, repeats = heapq.heappop(self._due)
                budget = ref()
                if budget is None or budget.deadline != deadline:
                    continue
                budget.left = _POKED
                if repeats > 1:
                    self._push(time.monotonic() + CHECK_SECONDS, ref, deadline, repeats - 1)


_WATCHDOG = _Watchdog()
# A forked child (serve runs each session in one, runtime/serve/contained.py) has only the thread that
# forked: the watchdog thread and whatever its lock looked like stay behind, so the child starts afresh.
os.register_at_fork(after_in_child=_WATCHDOG.start_afresh)


def _resident_bytes() -> int | None:
    """The process's resident memory, or None where Linux's /proc is not there."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_resource(value: Any) -> bool:
    return isinstance(value, Resource)


def _type_name(value: Any) -> str:
    return {str: "string", list: "list", dict: "map", bool: "bool", int: "int", float: "float",
            type(None): "none"}.get(type(value), type(value).__name__)


_PLAIN = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "%": lambda a, b: a % b}


def budget_of(runtime: Any) -> StepBudget:
    """The budget of the session running a policy (a fresh one for a runtime without one, e.g. a test's)."""
    budget = getattr(runtime, "budget", None)
    return budget if isinstance(budget, StepBudget) else StepBudget()
