"""Progress of long commands on stderr: live on a terminal, a plain line now and then otherwise.

On a terminal, one line is rewritten in place at most ten times a second and erased (``run``) or
ended (replays, sweeps) when the work is done.  Elsewhere (a CI log, a file) nothing is written
for work that ends within :data:`PLAIN_EVERY` seconds, and after that one plain line every
:data:`PLAIN_EVERY` seconds and one when the work ends, so a long run is never silent and a log
never fills with carriage returns.  :class:`ProgressBar` shows a bar only towards a total it truly
knows; without one it counts what was done so far.
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import Callable, TextIO

PLAIN_EVERY = 10.0  # seconds between plain lines where stderr is not a terminal
SPINNER = "|/-\\"


def _is_terminal(stream: TextIO) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


class ProgressBar:
    """``update(done)`` reports ``done`` (of ``total``, when it is known); ``close()`` ends it."""

    def __init__(self, total: float | None, label: str, unit: str = "", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _is_terminal(self.stream)
        self.total = total if total and total > 0 else None
        self.label, self.unit, self.clock = label, unit, clock
        self.started = self._drawn = clock()
        self.done = 0.0
        self.plain_lines = 0
        self._spin = itertools.cycle(SPINNER)

    def update(self, done: float) -> None:
        self.done = done
        now = self.clock()
        if self.terminal and now - self._drawn >= 0.1:
            self._drawn = now
            self.stream.write("\r" + self._status(live=True))
            self.stream.flush()
        elif not self.terminal and now - self._drawn >= PLAIN_EVERY:
            self._drawn = now
            self._plain(self._status(live=False))

    def close(self) -> None:
        if self.terminal:
            self.stream.write("\r" + self._status(live=False, final=True) + "\n")
            self.stream.flush()
        elif self.plain_lines:
            self._plain(self._status(live=False, final=True))

    def _status(self, live: bool, final: bool = False) -> str:
        elapsed = f"{self.clock() - self.started:,.0f}s elapsed"
        if self.total is not None:
            fraction = min(max(self.done / self.total, 0.0), 1.0)
            counted = f"{self.done:,.0f}/{self.total:,.0f}{self.unit}"
            if live:
                return f"{self.label} [{'#' * int(fraction * 30):<30}] {fraction:4.0%} {counted}"
            return f"{self.label}: {fraction:.0%} ({counted}), {elapsed}"
        counted = f"{self.done:,.0f}{self.unit}"
        if live:
            return f"{self.label} {next(self._spin)} {counted} so far"
        return f"{self.label}: {counted}{'' if final else ' so far'}, {elapsed}"

    def _plain(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()
        self.plain_lines += 1


class Progress:
    """Callable as ``progress(phase, placed)``: the phase of a long ``fumarole run`` and the tasks
    placed so far."""

    INTERVAL = 0.1

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream)
        self.clock = clock
        self.phase = ""
        self.shown = self.plain_shown = clock()
        self.width = 0

    def __call__(self, phase: str, placed: int = 0) -> None:
        now = self.clock()
        text = f"fumarole: {phase}" + (f" - {placed:,} tasks placed" if placed else "")
        if not self.enabled:
            if now - self.plain_shown >= PLAIN_EVERY:
                self.plain_shown = now
                self.stream.write(text + "\n")
                self.stream.flush()
            return
        if phase == self.phase and now - self.shown < self.INTERVAL:
            return
        self.phase, self.shown = phase, now
        self._write(text)

    def done(self) -> None:
        """Erase the line (before other output on stderr, and at the end)."""
        if self.enabled and self.width:
            self._write("")
        self.phase = ""

    def _write(self, text: str) -> None:
        pad = max(self.width - len(text), 0)
        self.stream.write("\r" + text + " " * pad + ("\r" if not text else ""))
        self.stream.flush()
        self.width = len(text)
