"""A one-line progress bar on a terminal's stderr; nothing at all when stderr is not a terminal."""

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
