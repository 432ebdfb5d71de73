"""Misbehaving HTTP extenders on loopback, for the extender client's tests.

Each mode is what one connection gets: an answer that never comes, a slow
drip, garbage, an error status, a body past the client's 10 MiB, a connection
closed at once, or a good answer.  The server records the verbs it was asked.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Callable, Iterator

BIG = (10 << 20) + 1


def _respond(status: str, body: bytes, extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


def _read_request(conn: socket.socket) -> str:
    """The request's path (the whole request is read, so closing does not reset it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return ""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head.split(b" ")[1].decode()


def _silent(conn: socket.socket, stop: threading.Event) -> None:
    stop.wait(30)


def _drip(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b" ")
        time.sleep(0.05)


MODES: dict[str, Callable[[socket.socket, threading.Event], None]] = {
    "silent": _silent,
    "drip": _drip,
    "garbage": lambda conn, stop: conn.sendall(_respond("200 OK", b"<html>not json</html>")),
    "error500": lambda conn, stop: conn.sendall(_respond("500 Internal Server Error", b'{"status": "x"}')),
    "huge": lambda conn, stop: conn.sendall(_respond("200 OK", b'{"padding":"' + b"a" * BIG + b'"}')),
    "close": lambda conn, stop: None,
    "truncated": lambda conn, stop: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"status\""),
    "refuse": lambda conn, stop: conn.sendall(_respond("200 OK", b'{"status": "refused", "code": 3}')),
}


@contextlib.contextmanager
def misbehaving(mode: str) -> Iterator[tuple[str, list[str]]]:
    """A server answering every connection in ``mode``: its base URL and the paths asked so far."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()
    asked: list[str] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                asked.append(_read_request(conn))
                MODES[mode](conn, stop)
            except OSError:
                pass

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", asked
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
