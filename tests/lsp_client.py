"""A minimal Language Server Protocol client over stdio, as an editor drives `fumarole lsp` (for tests)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class LspClient:
    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "fumarole.runtime.cli.main", "lsp"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue = queue.Queue()
        self.notifications: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                key, _, value = line.decode().partition(":")
                headers[key.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self._next(deadline)
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")
        raise TimeoutError(method)

    def _next(self, deadline: float) -> dict:
        message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
        if "method" in message and "id" not in message:
            self.notifications.append(message)
        elif "method" in message:  # a request from the server (e.g. window/workDoneProgress): accept it
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    def wait_for(self, method: str, predicate=lambda params: True, timeout: float = 60) -> dict:
        """The first notification ``method`` (already received or to come) whose params satisfy ``predicate``."""
        deadline = time.monotonic() + timeout
        while True:
            for note in self.notifications:
                if note["method"] == method and predicate(note["params"]):
                    self.notifications.remove(note)
                    return note["params"]
            if time.monotonic() >= deadline:
                raise TimeoutError(method)
            try:
                self._next(deadline)
            except queue.Empty:
                pass

    def close(self) -> int:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
