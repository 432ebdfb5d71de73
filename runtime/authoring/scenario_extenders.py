"""A scenario's stand-in HTTP extenders: canned answers per verb, served on loopback while it runs.

A scenario whose scheduler configuration enables Volcano's ``extender``
plugin names the extender by ``extender.urlPrefix``; its ``extenders`` block
(docs/scenarios.md) says what that extender answers, verb by verb.  While the
case runs, each prefix is served by a small HTTP server on 127.0.0.1 and the
session's calls under that prefix go there (``extender_http.stand_ins``), so
the plugin's real client, with its timeouts and Go-style decoding, is what
the case exercises.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from functools import partial
from typing import Any, Callable, Iterator

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.authoring import scenario_errors
from fumarole.runtime.framework.extender_http import stand_ins
from fumarole.runtime.ingest.yamlpos import key_position, position

ANSWER_KEYS = frozenset({"status", "body", "raw", "delay"})
MAX_DELAY = 10.0  # seconds a canned answer may wait (a timeout case needs only a little past httpTimeout)


@dataclass(frozen=True)
class Canned:
    """One verb's answer: an HTTP status, a body (JSON, or raw text as written), after a delay."""

    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0


def read_extenders(doc: dict, file: str) -> tuple[dict[str, dict[str, Canned]], list[Diagnostic]]:
    """The `extenders` block: URL prefix -> verb -> answer; S002/S006 at the place of a bad entry."""
    block = doc.get("extenders")
    if block is None:
        return {}, []
    if not isinstance(block, dict):
        return {}, [scenario_errors.extenders_not_a_mapping(file, Span(*position(doc, "extenders")))]
    out: dict[str, dict[str, Canned]] = {}
    diags: list[Diagnostic] = []
    for prefix, verbs in block.items():
        if not isinstance(verbs, dict):
            diags.append(scenario_errors.extender_not_a_mapping(file, Span(*position(block, prefix)), prefix))
            continue
        answers: dict[str, Canned] = {}
        for verb, answer in verbs.items():
            canned, problem = _canned(answer)
            if problem:
                key, made = problem
                at = key_position(answer, key) if key else position(verbs, verb)
                diags.append(made(file, Span(*at), prefix, verb))
            else:
                answers[str(verb)] = canned
        out[str(prefix)] = answers
    return out, diags


# A problem with one verb's answer: the key it is at ("" for the answer itself) and its
# diagnostic, made once the caller knows the file, the position, the prefix and the verb.
_Problem = tuple[Any, Callable[[str, Span, Any, Any], Diagnostic]]


def _canned(answer: Any) -> tuple[Canned, _Problem | None]:
    if not isinstance(answer, dict):
        return Canned(), ("", scenario_errors.answer_not_a_mapping)
    for key in answer:
        if key not in ANSWER_KEYS:
            return Canned(), (key, partial(scenario_errors.answer_unknown_key, key=key, known=ANSWER_KEYS))
    status, delay = answer.get("status", 200), answer.get("delay", 0)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return Canned(), ("status", scenario_errors.answer_status)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_DELAY:
        return Canned(), ("delay", partial(scenario_errors.answer_delay, most=MAX_DELAY))
    if "raw" in answer and "body" in answer:
        return Canned(), ("raw", scenario_errors.answer_body_and_raw)
    if "raw" in answer:
        if not isinstance(answer["raw"], str):
            return Canned(), ("raw", scenario_errors.answer_raw_not_text)
        body = answer["raw"].encode()
    else:
        body = json.dumps(answer.get("body", {})).encode()
    return Canned(status, body, float(delay)), None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answers: dict[str, Canned]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        canned = self.server.answers.get(self.path.rsplit("/", 1)[-1])
        if canned is None:
            canned = Canned(404, b"")
        if canned.delay:
            time.sleep(canned.delay)
        try:
            self.send_response(canned.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(canned.body)))
            self.end_headers()
            self.wfile.write(canned.body)
        except OSError:  # the client gave up (its timeout): nothing to tell it
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass


@contextmanager
def serving(extenders: dict[str, dict[str, Canned]]) -> Iterator[None]:
    """Serve each prefix's answers on a loopback port, and route the session's calls there."""
    servers: list[_Server] = []
    try:
        routes: dict[str, str] = {}
        for prefix, answers in extenders.items():
            server = _Server(("127.0.0.1", 0), _Handler)
            server.answers = answers
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
            servers.append(server)
            routes[prefix] = f"http://127.0.0.1:{server.server_address[1]}"
        with stand_ins(routes):
            yield
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
