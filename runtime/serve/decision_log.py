"""The decision log: every session's decisions, stamped with the bundle that made them.

Entries get increasing ids so a reader can poll ``GET /v1/decisions?since=N``
without missing or repeating one.  Memory is bounded (the oldest entries drop
out; ``oldest`` tells a slow reader what it missed).  With a state folder the
entries are also appended as JSON lines; the file rotates once to ``.1`` at a
size limit so a long-running service cannot fill the disk.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Any


class DecisionLog:
    def __init__(self, capacity: int = 1000, path: Path | None = None, max_file_bytes: int = 64 * 1024 * 1024) -> None:
        self._entries: deque[dict] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._next_id = 1
        self._path = path
        self._max_file_bytes = max_file_bytes

    def append(self, entry: dict[str, Any]) -> int:
        """Stamp ``entry`` with the next id, keep it, and return the id."""
        with self._lock:
            entry = {"id": self._next_id, **entry}
            self._next_id += 1
            self._entries.append(entry)
            if self._path is not None:
                self._write(entry)
            return entry["id"]

    def _write(self, entry: dict) -> None:
        try:
            if self._path.exists() and self._path.stat().st_size > self._max_file_bytes:
                self._path.replace(self._path.with_name(self._path.name + ".1"))
            with self._path.open("a") as handle:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
        except OSError:
            pass  # the log on disk is best effort; the in-memory log and the session are not affected

    def bounds(self) -> dict[str, int]:
        """The oldest id still held and the last id given out."""
        with self._lock:
            return {"oldest": self._entries[0]["id"] if self._entries else self._next_id, "last": self._next_id - 1}

    def since(self, after: int, limit: int = 1000) -> dict[str, Any]:
        with self._lock:
            entries = [e for e in self._entries if e["id"] > after][:limit]
        bounds = self.bounds()
        # `next` is what to pass as `since` next time; it drops when ids restarted (a service restart)
        following = entries[-1]["id"] if entries else min(after, bounds["last"])
        return {"entries": entries, **bounds, "next": following}
