"""Progress on a terminal's stderr; nothing at all when stderr is not a terminal.

:class:`ProgressBar` draws a bar towards a known total (``whatif`` replays);
:class:`Progress` shows the phase of a long ``fumarole run`` and the tasks
placed so far, one line rewritten in place at most ten times a second and
erased when the run ends.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``update(done)`` redraws at most ten times a second; ``close()`` ends the line."""

    def __init__(self, total: float, label: str, unit: str = "", stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() and total > 0
        self.total, self.label, self.unit = total, label, unit
        self._drawn = 0.0

    def update(self, done: float) -> None:
        if not self.enabled or time.monotonic() - self._drawn < 0.1:
            return
        self._drawn = time.monotonic()
        fraction = min(max(done / self.total, 0.0), 1.0)
        bar = "#" * int(fraction * 30)
        self.stream.write(f"\r{self.label} [{bar:<30}] {fraction:4.0%} {done:,.0f}/{self.total:,.0f}{self.unit}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._drawn = 0.0
            self.update(self.total)
            self.stream.write("\n")
            self.stream.flush()


class Progress:
    """Callable as ``progress(phase, placed)``; does nothing unless ``stream`` is a terminal."""

    INTERVAL = 0.1

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.phase = ""
        self.shown = 0.0
        self.width = 0

    def __call__(self, phase: str, placed: int = 0) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase == self.phase and now - self.shown < self.INTERVAL:
            return
        self.phase, self.shown = phase, now
        self._write(f"fumarole: {phase}" + (f" - {placed:,} tasks placed" if placed else ""))

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
