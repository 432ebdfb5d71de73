"""One Volcano session's extender verbs, answered in a persistent child process that can be killed.

Between ``onSessionOpen`` and ``onSessionClose`` every verb is answered from
the fumarole session the open built (docs/volcano-extender.md), so unlike
``POST /v1/sessions`` the work cannot be a fresh child per request: the
session lives in one child, forked at the open, which builds it and then
answers verb after verb.  The service's threads only wait on that child's
pipe (without the GIL), so a verb whose policy runs away cannot freeze
``/healthz``, other requests or shutdown:

- each verb (and the open itself) has the containment's wall-clock limit;
  past it the child is killed and the verb fails (R001);
- the child's data segment is capped by the memory budget, as every
  contained child's (``Containment.fork``);
- the next verb of the same Volcano session forks a new child, which builds
  the session again from the open's objects (the verbs do not change it), so
  one runaway verb costs that verb, not the rest of the session.

Messages on the pipes are length-prefixed pickles of plain data: the verb and
its JSON body one way, the contained outcome (``contained.outcome_of``) back.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import threading
import time
from typing import Any, Callable

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.serve.contained import Containment, outcome_of

Answer = Callable[[str, dict], Any]  # (verb, body) -> the verb's answer, in the child
_HEADER = struct.Struct("!Q")


class SessionWorker:
    """The child answering one Volcano session; ``build`` makes its answer function, in the child."""

    def __init__(self, containment: Containment, build: Callable[[], Answer], what: str = "extender session") -> None:
        self.containment, self.build, self.what = containment, build, what
        self._pid: int | None = None
        self._to_child = self._from_child = -1
        self._lock = threading.Lock()  # one verb at a time, as one session answers them

    def start(self) -> None:
        """Fork the child and wait until it has built the session (FumaroleError when it could not)."""
        with self._lock:
            self._ensure()

    def ask(self, verb: str, body: dict) -> Any:
        """The answer to one verb (a fresh child first if the last one was stopped)."""
        with self._lock:
            self._ensure()
            try:
                _send(self._to_child, (verb, body))
            except OSError:  # the child died between two verbs: answer from a new one
                self._discard()
                self._ensure()
                _send(self._to_child, (verb, body))
            return self._receive(f"{self.what} ({verb})")

    def stop(self) -> None:
        with self._lock:
            self._discard()

    # -- the child's life -------------------------------------------------------------------
    def _ensure(self) -> None:
        if self._pid is not None:
            return
        self._pid, self._to_child, self._from_child = self.containment.fork(
            lambda requests, answers: _serve(self.build, requests, answers), self.what)
        self._receive(self.what)  # the build's outcome: ready, or why not

    def _receive(self, what: str) -> Any:
        """The next outcome from the child within the hard limit; the child is stopped when it ran over,
        died, or ran out of memory (its session may be half-changed), and the failure raised."""
        limit = self.containment.hard_limit()
        data, timed_out = _read_message(self._from_child, None if limit is None else time.monotonic() + limit)
        if timed_out or data is None:
            self._discard()
            return self.containment.decode(b"" if data is None else data, timed_out, what)
        kind = pickle.loads(data)[0]
        if kind in ("memory", "internal"):
            self._discard()
        return self.containment.decode(data, False, what)

    def _discard(self) -> None:
        if self._pid is not None:
            self.containment.release(self._pid, self._to_child, self._from_child)
            self._pid = None

def _serve(build: Callable[[], Answer], requests: int, answers: int) -> None:
    """The child: build the session, say so, then answer each request until the pipe closes."""
    answer: list[Answer] = []
    _send(answers, outcome_of(lambda: answer.append(build())))
    if not answer:
        return
    while True:
        message, _ = _read_message(requests, None)
        if message is None:
            return
        verb, body = pickle.loads(message)
        _send(answers, outcome_of(lambda: answer[0](verb, body)))


def _send(fd: int, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_message(fd: int, deadline: float | None) -> tuple[bytes | None, bool]:
    """One message: its bytes (None when the pipe closed first) and whether the deadline passed first."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    buffer = bytearray()
    wanted = _HEADER.size
    header_done = False
    while len(buffer) < wanted:
        wait_ms = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
        if not poller.poll(wait_ms):
            return None, True
        chunk = os.read(fd, min(1 << 20, wanted - len(buffer)))
        if not chunk:
            return None, False
        buffer += chunk
        if not header_done and len(buffer) == _HEADER.size:
            wanted = _HEADER.size + _HEADER.unpack(bytes(buffer))[0]
            header_done = True
    return bytes(buffer[_HEADER.size:]), False


def worker_failure(err: FumaroleError) -> bool:
    """Whether a FumaroleError from a worker or a contained verb says the child ran over or died
    (R001: the policy's fault, a 500 for Volcano) rather than that the request was wrong."""
    return bool(err.diagnostics) and err.diagnostics[0].code in ("R001", "F004")

