"""The budget every policy runs on, so that every policy ends.

A *step* is one loop iteration, one element a comprehension or ``range``
produces, or one character or item a ``+`` of strings or lists copies.
Compiled policies charge their steps to the session's :class:`StepBudget`
(``_B`` in generated code): a ``while`` or ``drain`` loop with
``_B.left -= 1`` and a test, a ``for`` loop or comprehension with one call
charging its whole length up front (cheap: no work per item).

The counter ``left`` runs down a chunk of steps; when it goes below zero,
:meth:`StepBudget.spent` checks the limits -- the session's steps, its
deadline, and the steps of the plugin hook invocation running (found on the
call stack, so hooks pay nothing on entry) -- and grants the next chunk.  Each
limit ends the session with a PolicyRuntimeError naming it (R001).
"""

from __future__ import annotations

import sys
import time
from itertools import islice
from typing import Any, Sized

from fumarole.policy_lang.compiled import BATCH_HOOK_PREFIX, PLUGIN_HOOK_PREFIX
from fumarole.runtime.framework.policy_error import PolicyRuntimeError

HOOK_STEPS = 10_000_000  # one plugin hook invocation, with everything it calls
SESSION_STEPS = 2_000_000_000  # one session, every policy together
INTEGER_BITS = 4096  # the largest integer a policy may compute
_CHUNK = 10_000  # steps between two checks of the limits (and of the clock)
_HOOK_PREFIXES = (PLUGIN_HOOK_PREFIX, BATCH_HOOK_PREFIX)  # a plugin hook's function, per node or batch


class StepBudget:
    """Steps left to one session, its deadline, and the limits of a hook invocation."""

    __slots__ = ("left", "used", "session_steps", "hook_steps", "timeout", "deadline", "_granted",
                 "_hook_frame", "_hook_start")

    def __init__(self, session_steps: int = SESSION_STEPS, hook_steps: int = HOOK_STEPS,
                 timeout: float | None = None) -> None:
        self.session_steps, self.hook_steps, self.timeout = session_steps, hook_steps, timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.used = 0
        self.left = self._granted = _CHUNK
        self._hook_frame: Any = None
        self._hook_start = 0

    # -- charged operations (called by compiled policies) ----------------------------
    def spent(self) -> None:
        """The chunk ran out: check every limit, then grant the next chunk."""
        before = self.used
        self.used += self._granted - self.left
        self.left = self._granted = 0  # nothing more is granted if a limit below raises
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise PolicyRuntimeError(f"the session ran past its deadline ({self.timeout:g} s, --session-timeout)")
        if self.used > self.session_steps:
            raise PolicyRuntimeError(f"the session's step budget ran out ({self.session_steps:,} steps: loop "
                                     "iterations and items built); a policy must terminate")
        hook = _outermost_plugin_hook()
        if hook is not self._hook_frame:
            self._hook_frame, self._hook_start = hook, before
        if hook is not None and self.used - self._hook_start > self.hook_steps:
            name = hook.f_code.co_name.split("_", 2)[2]  # _hook_NAME or _bh_NAME
            raise PolicyRuntimeError(f"the step budget of one invocation of hook '{name}' ran out "
                                     f"({self.hook_steps:,} steps: loop iterations and items built); "
                                     "a policy must terminate")
        self.left = self._granted = _CHUNK

    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            self.spent()

    def each(self, items: Sized) -> Sized:
        """A list or map about to be iterated: one step per item, charged at once."""
        self.left -= len(items)
        if self.left < 0:
            self.spent()
        return items

    def each_capped(self, items: Sized) -> Any:
        """As :meth:`each`, for a loop that may append to its own list: only the items there at the start."""
        size = len(items)
        self.charge(size)
        return islice(items, size) if isinstance(items, list) else items

    def range(self, stop: int) -> list[int]:
        self.charge(max(stop, 0))
        return list(range(stop))

    def concat(self, left: Any, right: Any) -> Any:
        """``left + right`` of strings or lists: one step per character or item of the result."""
        self.charge(len(left) + len(right))
        return left + right

    def multiply(self, left: int, right: int) -> int:
        """``left * right`` of integers, refused when the product could pass INTEGER_BITS bits."""
        if left.bit_length() + right.bit_length() > INTEGER_BITS:
            raise PolicyRuntimeError(f"an integer would grow past {INTEGER_BITS:,} bits (the integer size budget)")
        return left * right


def _outermost_plugin_hook() -> Any:
    """The frame of the outermost plugin hook on the call stack, or None."""
    found = None
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name.startswith(_HOOK_PREFIXES) and code.co_filename.startswith("<policy "):
            found = frame
        frame = frame.f_back
    return found


def budget_of(runtime: Any) -> StepBudget:
    """The budget of the session running a policy (a fresh one for a runtime without one, e.g. a test's)."""
    budget = getattr(runtime, "budget", None)
    return budget if isinstance(budget, StepBudget) else StepBudget()
