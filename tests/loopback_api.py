"""A Kubernetes API server on the loopback interface, for the snapshot tests: a handler base that
answers JSON, a server on a free port run in a thread, and a kubeconfig naming it."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import yaml

NODES = "/api/v1/nodes"
CONFIGMAP = "/api/v1/namespaces/volcano-system/configmaps/volcano-scheduler-configmap"


class JsonHandler(BaseHTTPRequestHandler):
    """Replies as the API server does (JSON with its length), and keeps the test output quiet."""

    def send_json(self, status: int, body: object) -> None:
        self.send_raw(status, json.dumps(body).encode())

    def send_raw(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """``handler`` serving on a free loopback port until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def write_kubeconfig(path: Path, port: int, token: str = "s3cret", context: str = "test") -> Path:
    """A kubeconfig at ``path`` whose ``context`` reaches the loopback port with a bearer ``token``."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "loop", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "loop", "user": "reader"}}],
    }))
    return path
