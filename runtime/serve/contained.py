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

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import SHOWN_AT_MOST, Diagnostic, FumaroleError, not_shown
from fumarole.runtime.serve import serve_errors

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


def enter_child(memory_bytes: int | None) -> None:
    """In a freshly forked child: the default signals, death with the parent, the memory cap."""
    signal.set_wakeup_fd(-1)  # the parent's event loop owns that file; a signal here is not its business
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    _die_with_parent()
    if memory_bytes is not None:
        limit = _data_bytes() + memory_bytes
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def outcome_of(work: Callable[[], Any]) -> tuple[str, Any]:
    """``work()``'s outcome as plain data for the parent: its value, its diagnostics, or how it failed."""
    try:
        return "value", work()
    except FumaroleError as err:
        return "diagnostics", first_diagnostics(err.diagnostics)
    except MemoryError:
        return "memory", None
    except RecursionError:
        return "internal", "RecursionError: maximum recursion depth exceeded"
    except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent as data
        return "internal", f"{type(exc).__name__}: {exc}"


def _child(work: Callable[[], Any], out: int) -> None:
    """Run ``work`` and write its outcome to ``out``."""
    outcome = outcome_of(work)
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        data = pickle.dumps(("memory", None))
    except Exception as exc:  # noqa: BLE001 - a value that cannot be sent is the work's failure
        data = pickle.dumps(("internal", f"unsendable result: {type(exc).__name__}: {exc}"))
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]


class Containment:
    """Runs callables in killable children: a wall-clock limit and a memory budget each."""

    def __init__(self, wall_seconds: float | None, memory_bytes: int | None = DEFAULT_MEMORY_BUDGET,
                 total_bytes: int | None = None) -> None:
        self.wall_seconds = wall_seconds
        self.memory_bytes = memory_bytes
        self.total_bytes = total_bytes  # the process-wide budget: children at once times memory_bytes
        self._held: set[int] = set()  # the parent's ends of the children's pipes
        self._children: set[int] = set()
        self._lock = threading.Lock()
        self._stopping = False

    def hard_limit(self) -> float | None:
        """When the child is killed: the policy's own deadline plus a grace to report it itself."""
        if self.wall_seconds is None:
            return None
        return self.wall_seconds + max(1.0, 0.1 * self.wall_seconds)

    def fork(self, body: Callable[[int, int], None], what: str) -> tuple[int, int, int]:
        """A child running ``body(from_parent, to_parent)`` under the memory budget, then exiting:
        ``(pid, to_child, from_child)``, the parent's ends of its two pipes (``release`` them).

        The pipes are made, the child forked and the parent's copies of the child's ends closed under
        one lock, and every child closes the pipe ends the parent holds for the others: so no child
        holds another's pipe open, and a child's end of file is seen the moment it ends.  FumaroleError
        (R001) when the service is shutting down, its memory budget is spoken for, or no process
        can start."""
        with self._lock:
            if self._stopping:
                raise _refused(f"the service is shutting down; the {what} did not run", what)
            if self.total_bytes is not None and self.memory_bytes is not None and \
                    (len(self._children) + 1) * self.memory_bytes > self.total_bytes:
                raise _refused(f"the service's memory budget ({self.total_bytes // MiB} MiB, --memory-budget) "
                               f"is spoken for by {len(self._children)} running sessions of "
                               f"{self.memory_bytes // MiB} MiB each; the {what} did not run", what)
            down_read, down_write = os.pipe()
            up_read, up_write = os.pipe()
            try:
                pid = os.fork()
            except OSError as exc:  # no memory or no process slot left for a child
                for fd in (down_read, down_write, up_read, up_write):
                    os.close(fd)
                raise _refused(f"the {what} could not start its process: {exc.strerror or exc}", what) from None
            if pid == 0:  # the child
                try:
                    for fd in (down_write, up_read, *self._held):
                        _close(fd)
                    enter_child(self.memory_bytes)
                    body(down_read, up_write)
                finally:
                    os._exit(0)
            os.close(down_read)
            os.close(up_write)
            self._children.add(pid)
            self._held |= {down_write, up_read}
        return pid, down_write, up_read

    def close(self, fd: int) -> None:
        """Close one of the parent's pipe ends (``fork``'s)."""
        with self._lock:
            if fd in self._held:
                self._held.discard(fd)
                _close(fd)

    def release(self, pid: int, *fds: int) -> None:
        """The child's work is over (or past its limit): its pipes closed, the child gone and reaped."""
        for fd in fds:
            self.close(fd)
        with self._lock:
            self._children.discard(pid)
        _kill_and_reap(pid)

    def run(self, work: Callable[[], Any], what: str = "session") -> Any:
        """``work()``'s value; FumaroleError with its diagnostics, or with one saying how the child ended."""
        pid, to_child, from_child = self.fork(lambda _from_parent, to_parent: _child(work, to_parent), what)
        self.close(to_child)
        try:
            data, timed_out = self._collect(from_child)
        finally:
            self.release(pid, from_child)
        return self.decode(data, timed_out, what)

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

    def decode(self, data: bytes, timed_out: bool, what: str) -> Any:
        """A child's outcome (``outcome_of``, pickled) as the value, or the FumaroleError it stands for."""
        limit = self.hard_limit()
        if timed_out:
            assert self.wall_seconds is not None and limit is not None, "only a child with a limit times out"
            raise FumaroleError([serve_errors.ran_past_timeout(what, self.wall_seconds, limit)])
        if not data:
            raise FumaroleError([serve_errors.ended_abnormally(what)])
        kind, payload = pickle.loads(data)
        if kind == "value":
            return payload
        if kind == "diagnostics":
            raise FumaroleError(payload)
        if kind == "memory":
            budget = f"{self.memory_bytes // MiB} MiB" if self.memory_bytes else "the memory available"
            raise FumaroleError([serve_errors.ran_out_of_memory(what, budget)])
        raise FumaroleError([file_errors.child_crashed(what, payload)])

    def stop(self) -> None:
        """Kill every running child and refuse new work (the service is shutting down)."""
        with self._lock:
            self._stopping = True
            children = list(self._children)
        for pid in children:
            _kill(pid)


def _refused(message: str, what: str) -> FumaroleError:
    return FumaroleError([serve_errors.not_started(what, message)])


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


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
