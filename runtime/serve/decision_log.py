"""The decision log: every session's decisions, stamped with the bundle that made them.

Entries get increasing ids so a reader can poll ``GET /v1/decisions?since=N``
without missing or repeating one.  Memory is bounded by count and by bytes:
the oldest entries drop out past ``capacity`` entries or ``max_total_bytes``
of JSON (``oldest`` tells a slow reader what it missed), and an entry larger
than ``max_entry_bytes`` -- a session over objects with megabyte names, say --
is kept without its decisions (``omitted`` says how large it was; the caller
of the session got them in full).  With a state folder the
entries are also appended as JSON lines; the file rotates once to ``.1`` at a
size limit so a long-running service cannot fill the disk.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Any


MiB = 1024 * 1024
_KEPT_WHEN_OMITTED = ("id", "time", "bundle", "durationMs")


class DecisionLog:
    def __init__(self, capacity: int = 1000, path: Path | None = None, max_file_bytes: int = 64 * MiB,
                 max_entry_bytes: int = 1 * MiB, max_total_bytes: int = 64 * MiB) -> None:
        self._entries: deque[tuple[dict, int]] = deque()  # (entry, its JSON size)
        self._capacity = capacity
        self._total_bytes = 0
        self._lock = threading.Lock()
        self._next_id = 1
        self._path = path
        self._max_file_bytes = max_file_bytes
        self._max_entry_bytes = max_entry_bytes
        self._max_total_bytes = max_total_bytes

    def append(self, entry: dict[str, Any]) -> int:
        """Stamp ``entry`` with the next id, keep it (or its summary, when too large), and return the id."""
        with self._lock:
            entry = {"id": self._next_id, **entry}
            self._next_id += 1
            line = json.dumps(entry, sort_keys=True)
            if len(line) > self._max_entry_bytes:
                entry = {**{k: entry[k] for k in _KEPT_WHEN_OMITTED if k in entry},
                         "omitted": {"bytes": len(line), "reason": f"the entry is larger than the log keeps "
                                     f"({self._max_entry_bytes} bytes); the session's caller got it in full"}}
                line = json.dumps(entry, sort_keys=True)
            self._entries.append((entry, len(line)))
            self._total_bytes += len(line)
            while len(self._entries) > self._capacity or self._total_bytes > self._max_total_bytes:
                self._total_bytes -= self._entries.popleft()[1]
            if self._path is not None:
                self._write(self._path, line)
            return entry["id"]

    def _write(self, path: Path, line: str) -> None:
        try:
            if path.exists() and path.stat().st_size > self._max_file_bytes:
                path.replace(path.with_name(path.name + ".1"))
            with path.open("a") as handle:
                handle.write(line + "\n")
        except OSError:
            pass  # the log on disk is best effort; the in-memory log and the session are not affected

    def bounds(self) -> dict[str, int]:
        """The oldest id still held and the last id given out."""
        with self._lock:
            return {"oldest": self._entries[0][0]["id"] if self._entries else self._next_id,
                    "last": self._next_id - 1}

    def since(self, after: int, limit: int = 1000) -> dict[str, Any]:
        with self._lock:
            entries = [e for e, _ in self._entries if e["id"] > after][:limit]
        bounds = self.bounds()
        # `next` is what to pass as `since` next time; it drops when ids restarted (a service restart)
        following = entries[-1]["id"] if entries else min(after, bounds["last"])
        return {"entries": entries, **bounds, "next": following}
