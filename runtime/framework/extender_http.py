"""The one place a policy reaches outside: a JSON POST to Volcano's HTTP extender, bounded.

Volcano's extender plugin (``plugins/extender/extender.go``, ``send``) posts
``json.Marshal(request)`` to ``strings.TrimRight(urlPrefix, "/") + "/" + verb``
with ``Content-Type: application/json`` on an ``http.Client`` whose ``Timeout``
is ``extender.httpTimeout`` (connecting, the headers and the whole body
together), treats any status but 200 as an error, and reads at most 10 MiB of
the answer.  :func:`post` does the same, with what a policy needs beyond it:

* the wait ends at the earlier of the call's timeout and the session's
  deadline (``--session-timeout``), whatever the server does (silent, a slow
  drip of bytes, a huge body): a timer shuts the socket at that instant;
* a timeout Go reads as "none" (zero or negative) still ends, at the session's
  deadline or after :data:`UNBOUNDED_CAP` seconds;
* redirects are not followed and proxies are not used (a redirect is a status
  other than 200: an error).

It never raises for what the server does: every failure comes back as Go's
error text, which the plugin reports (``ignorable`` decides what it means).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator
from urllib.parse import urlsplit

MAX_BODY = 10 << 20  # Volcano's maxBodySize: the most of an answer the plugin reads
UNBOUNDED_CAP = 30.0  # the wait for a call configured without a timeout, when the session has no deadline
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Answer:
    """What came back: the body (at most MAX_BODY bytes), whether there was more, or Go's error text."""

    body: bytes = b""
    truncated: bool = False
    error: str = ""


# URL prefixes answered elsewhere: a scenario's stand-in extenders (docs/scenarios.md, `extenders`)
# serve the prefixes its configuration names from loopback ports.
_STAND_INS: ContextVar[dict[str, str]] = ContextVar("extender_stand_ins", default={})


@contextmanager
def stand_ins(routes: dict[str, str]) -> Iterator[None]:
    """While inside, a verb under one of ``routes``' prefixes is posted to the base it maps to."""
    token = _STAND_INS.set({prefix.rstrip("/"): base.rstrip("/") for prefix, base in routes.items()})
    try:
        yield
    finally:
        _STAND_INS.reset(token)


def verb_url(url_prefix: str, verb: str) -> str:
    """Where Volcano posts a verb: the prefix without trailing slashes, a slash, the verb."""
    return url_prefix.rstrip("/") + "/" + verb


def _routed(url: str) -> str:
    for prefix, base in _STAND_INS.get().items():
        if url.startswith(prefix + "/"):
            return base + url[len(prefix):]
    return url


def post(url: str, verb: str, body: bytes, timeout: float, deadline: float | None) -> Answer:
    """POST ``body`` to ``url``; ``timeout`` is the call's (Go's ``http.Client.Timeout``, <= 0: none),
    ``deadline`` the session's (``time.monotonic()`` seconds, or None)."""
    start = time.monotonic()
    wait = timeout if timeout > 0 else UNBOUNDED_CAP
    if deadline is not None:
        wait = min(wait, deadline - start)
    where = f'Post "{url}"'
    parts = urlsplit(_routed(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Answer(error=f'{where}: unsupported protocol scheme "{parts.scheme}"')
    if wait <= 0:
        return Answer(error=f"{where}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
    try:
        port = parts.port
    except ValueError:
        return Answer(error=f'{where}: invalid port in "{parts.netloc}"')
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, port, timeout=wait)
    guard: threading.Timer | None = None
    stage = "awaiting headers"
    try:
        conn.connect()  # within `wait` (the socket's timeout)
        # The response takes the socket over from the connection, so the timer holds it itself.
        guard = threading.Timer(max(0.0, wait - (time.monotonic() - start)), _shut, (conn.sock,))
        guard.daemon = True
        guard.start()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        if response.status != 200:
            return Answer(error=f"failed {verb} with extender at URL {url}, code {response.status}")
        stage = "reading body"
        data = bytearray()
        while len(data) <= MAX_BODY:
            chunk = response.read1(min(_CHUNK, MAX_BODY + 1 - len(data)))
            if not chunk:
                break
            data += chunk
        if time.monotonic() - start >= wait:  # the timer shut the socket: the end seen is not the body's
            return Answer(error=f"{where}: context deadline exceeded (Client.Timeout exceeded while {stage})")
        return Answer(bytes(data[:MAX_BODY]), len(data) > MAX_BODY)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if time.monotonic() - start >= wait:
            return Answer(error=f"{where}: context deadline exceeded (Client.Timeout exceeded while {stage})")
        return Answer(error=f"{where}: {_describe(exc)}")
    finally:
        if guard is not None:
            guard.cancel()
        conn.close()


def _shut(sock: socket.socket) -> None:
    """The deadline passed: make every blocked read or write on the socket return at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _describe(exc: BaseException) -> str:
    """Go's wording for the common transport failures, else Python's."""
    if isinstance(exc, ConnectionRefusedError):
        return "connect: connection refused"
    if isinstance(exc, (http.client.RemoteDisconnected, http.client.IncompleteRead, ConnectionResetError)):
        return "EOF" if isinstance(exc, http.client.RemoteDisconnected) else "unexpected EOF"
    if isinstance(exc, socket.gaierror):
        return "dial tcp: lookup failed: no such host"
    return str(exc) or type(exc).__name__
