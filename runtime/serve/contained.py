"""Policy work of ``fumarole serve`` in a child process that a deadline can kill.

A policy's budget (docs/language.md) stops it cooperatively: the compiled code
checks it as it goes.  That is the first line; this module is the one that
does not depend on the policy, the compiler or any library call yielding.  A
session (its body's parse included), a shadow session, an upload's smoke
run and a candidate bundle's first compile each run in a forked child of the
service:

- the parent thread only waits on a pipe, without the GIL, so ``/healthz``,
  other requests and SIGTERM are served whatever the child does;
- past its wall-clock limit the child is killed (SIGKILL), and the request
  gets R001 ("stopped after N s");
- the child's data segment is capped (``RLIMIT_DATA``: what it holds at the
  fork plus the memory budget), so an allocation past the budget fails with
  MemoryError in the child instead of swapping the machine;
- the child dies with the service (``PR_SET_PDEATHSIG``), and
  :meth:`Containment.stop` kills the ones still running at shutdown.

Forking rather than a pool of spawned workers: the child starts with the
compiled bundle, the process state and the parsed objects already in memory
(copy-on-write), so nothing is pickled on the way in and a compiled bundle
never has to cross a process boundary; only the answer (plain JSON-like data)
comes back through the pipe.  Every outcome is one of: the work's value,
its FumaroleError's diagnostics, or a diagnostic saying how the child ended.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import resource
import select
import signal
import threading
import time
from typing import Any, Callable

from fumarole.policy_lang.diagnostics import NO_POSITION, SHOWN_AT_MOST, Diagnostic, FumaroleError, not_shown

MiB = 1024 * 1024
DEFAULT_MEMORY_BUDGET = 2048 * MiB  # per session, beyond what the service holds (serve --session-memory)
_PR_SET_PDEATHSIG = 1
MAX_DIAGNOSTICS = SHOWN_AT_MOST  # per answer, as the command line shows them


def _die_with_parent() -> None:
    """Linux: the kernel kills this child when the service process ends, however it ends."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: Containment.stop still kills children at an orderly shutdown


def _data_bytes() -> int:
    """This process's data segment now (``VmData``): what RLIMIT_DATA is compared with."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def first_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """At most MAX_DIAGNOSTICS of them, then one saying how many more there were (an answer stays small)."""
    if len(diagnostics) <= MAX_DIAGNOSTICS:
        return diagnostics
    last = diagnostics[MAX_DIAGNOSTICS - 1]
    more = Diagnostic(last.code, not_shown(diagnostics[MAX_DIAGNOSTICS:]), last.file, last.span, severity=last.severity)
    return diagnostics[:MAX_DIAGNOSTICS] + [more]


def _child(work: Callable[[], Any], out: int, memory_bytes: int | None) -> None:
    """Run ``work`` and write its outcome to ``out``; never returns."""
    try:
        signal.set_wakeup_fd(-1)  # the parent's event loop owns that file; a signal here is not its business
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        _die_with_parent()
        if memory_bytes is not None:
            limit = _data_bytes() + memory_bytes
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        try:
            outcome: tuple[str, Any] = ("value", work())
        except FumaroleError as err:
            outcome = ("diagnostics", first_diagnostics(err.diagnostics))
        except MemoryError:
            outcome = ("memory", None)
        except RecursionError:
            outcome = ("internal", "RecursionError: maximum recursion depth exceeded")
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent as data
            outcome = ("internal", f"{type(exc).__name__}: {exc}")
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("memory", None))
        except Exception as exc:  # noqa: BLE001 - a value that cannot be sent is the work's failure
            data = pickle.dumps(("internal", f"unsendable result: {type(exc).__name__}: {exc}"))
        view = memoryview(data)
        while view:
            view = view[os.write(out, view):]
    finally:
        os._exit(0)


class Containment:
    """Runs callables in killable children: a wall-clock limit and a memory budget each."""

    def __init__(self, wall_seconds: float | None, memory_bytes: int | None = DEFAULT_MEMORY_BUDGET) -> None:
        self.wall_seconds = wall_seconds
        self.memory_bytes = memory_bytes
        self._children: set[int] = set()
        self._lock = threading.Lock()
        self._stopping = False

    def hard_limit(self) -> float | None:
        """When the child is killed: the policy's own deadline plus a grace to report it itself."""
        if self.wall_seconds is None:
            return None
        return self.wall_seconds + max(1.0, 0.1 * self.wall_seconds)

    def run(self, work: Callable[[], Any], what: str = "session") -> Any:
        """``work()``'s value; FumaroleError with its diagnostics, or with one saying how the child ended."""
        read_end, write_end = os.pipe()
        with self._lock:
            if self._stopping:
                os.close(read_end)
                os.close(write_end)
                raise FumaroleError([Diagnostic("R001", f"the service is shutting down; the {what} did not run",
                                                what, span=NO_POSITION)])
            try:
                pid = os.fork()
            except OSError as exc:  # no memory or no process slot left for a child
                os.close(read_end)
                os.close(write_end)
                raise FumaroleError([Diagnostic("R001", f"the {what} could not start its process: "
                                                f"{exc.strerror or exc}", what, span=NO_POSITION)]) from None
            if pid == 0:  # the child
                os.close(read_end)
                _child(work, write_end, self.memory_bytes)
            self._children.add(pid)
        os.close(write_end)
        try:
            data, timed_out = self._collect(read_end)
        finally:
            os.close(read_end)
            with self._lock:
                self._children.discard(pid)
            _kill_and_reap(pid)
        return self._outcome(data, timed_out, what)

    def _collect(self, read_end: int) -> tuple[bytes, bool]:
        """Everything the child wrote, and whether the hard limit passed first."""
        limit = self.hard_limit()
        deadline = None if limit is None else time.monotonic() + limit
        chunks: list[bytes] = []
        poller = select.poll()
        poller.register(read_end, select.POLLIN | select.POLLHUP)
        while True:
            wait_ms = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            if not poller.poll(wait_ms):
                return b"", True
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)

    def _outcome(self, data: bytes, timed_out: bool, what: str) -> Any:
        if timed_out:
            raise FumaroleError([Diagnostic(
                "R001", f"the {what} ran past --session-timeout ({self.wall_seconds:g} s) and was stopped "
                f"after {self.hard_limit():g} s", what, span=NO_POSITION)])
        if not data:
            raise FumaroleError([Diagnostic("R001", f"the {what} ended abnormally (its process was killed, "
                                            "possibly for memory) and was not answered", what, span=NO_POSITION)])
        kind, payload = pickle.loads(data)
        if kind == "value":
            return payload
        if kind == "diagnostics":
            raise FumaroleError(payload)
        if kind == "memory":
            budget = f"{self.memory_bytes // MiB} MiB" if self.memory_bytes else "the memory available"
            raise FumaroleError([Diagnostic("R001", f"the {what} ran out of its memory budget ({budget}) "
                                            "and was stopped", what, span=NO_POSITION)])
        raise FumaroleError([Diagnostic("F004", f"internal error in the {what}: {payload}", what, span=NO_POSITION)])

    def stop(self) -> None:
        """Kill every running child and refuse new work (the service is shutting down)."""
        with self._lock:
            self._stopping = True
            children = list(self._children)
        for pid in children:
            _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill_and_reap(pid: int) -> None:
    """The child is finished or past its limit: make sure it is gone and leaves no zombie."""
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)
        if finished == 0:
            _kill(pid)
            os.waitpid(pid, 0)
    except ChildProcessError:
        pass
