"""HTTP for ``fumarole serve``: Starlette routes over :class:`Service`, run by uvicorn.

Why Starlette and uvicorn: a hand-written server would have to get HTTP/1.1
framing, keep-alive, slow clients and shutdown right; these two are small,
well kept, and leave every decision that matters here (body limits, error
bodies, auth) in this file.  Handlers are async only to read the body with a
limit; sessions, compiles and extender calls run in the thread pool, so the
event loop keeps accepting requests while a bundle compiles.

Every error is JSON ``{"error": ..., "diagnostics": [...]}``: 400 malformed
input, 401 missing or wrong admin token, 403 admin disabled, 404/405 unknown
route or method, 409 a concurrent bundle change or nothing to roll back, 413
body too large, 422 a bundle that failed verification, 500 a policy that
failed while running.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import uvicorn
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.devices import atoi
from fumarole.runtime.ingest.strict_json import strict_json
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.serve.extender import PREFIX, VERBS, Extender
from fumarole.runtime.serve.extender_codec import PayloadError
from fumarole.runtime.serve.extender_worker import worker_failure
from fumarole.runtime.serve.registry import Busy, diagnostics_json
from fumarole.runtime.serve.service import Service, session_failed
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

MiB = 1024 * 1024
log = logging.getLogger("fumarole")
# The content types a browser may send cross-origin without asking first (CORS "simple requests")
SIMPLE_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")


@dataclass(frozen=True)
class Options:
    """Request limits and admin access."""

    admin_token: str | None = None
    admin_enabled: bool = True
    max_session_bytes: int = 32 * MiB
    max_bundle_bytes: int = 16 * MiB
    max_extender_bytes: int = 64 * MiB


def is_loopback(host: str) -> bool:
    """True when every address ``host`` resolves to is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def check_listen(host: str, options: Options) -> str | None:
    """Why the service must not listen on ``host`` with these options, or None."""
    if options.admin_enabled and not options.admin_token and not is_loopback(host):
        return (f"refusing to listen on {host or 'all interfaces'} with admin endpoints and no admin token: "
                "give --admin-token-file, --no-admin, or a loopback address")
    return None


def _error(status: int, message: str, diagnostics: list | None = None, headers: dict | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if diagnostics:
        body["diagnostics"] = diagnostics
    return JSONResponse(body, status_code=status, headers=headers)


async def _body(request: Request, limit: int) -> bytes:
    length = request.headers.get("content-length", "")
    declared = atoi(length)
    if declared is not None and declared > limit:
        raise HTTPException(413, f"body larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"body larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _json_body(data: bytes) -> Any:
    """An extender body: UTF-8 JSON under the depth, duplicate-key and number rules of session bodies."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, f"malformed JSON: not UTF-8 text (byte {exc.start})") from None
    try:
        return strict_json(text)
    except FumaroleError as err:
        raise HTTPException(400, err.diagnostics[0].headline()) from None


def same_origin(request: Request) -> str | None:
    """Why a browser sent this request from another site, or None.

    A page the operator has open can make the browser send a "simple" POST anywhere, the
    loopback service included; the browser says where it came from in ``Origin`` and
    ``Sec-Fetch-Site``.  A request with neither header did not come from a page.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site is {site!r}"
    origin = request.headers.get("origin")
    if origin is None:
        return None
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or parts.netloc.lower() != request.headers.get("host", "").lower():
        return f"Origin {origin!r} is not this service"
    return None


def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Answer every failure as JSON from inside the handler, so the connection stays usable.

    An exception that leaves a Starlette handler is answered by the server-error middleware
    and then re-raised into uvicorn, which closes the connection: a keep-alive client (Volcano)
    sees a reset after one bad request.
    """
    @functools.wraps(handler)
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except HTTPException as exc:
            return _error(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 and the service keeps serving
            log.exception("internal error on %s %s", request.method, request.url.path)
            return _error(500, f"internal error: {type(exc).__name__}: {exc}")
    return run


def create_app(service: Service, options: Options = Options()) -> Starlette:
    extender = Extender(service.registry, service.containment)
    registry = service.registry

    def admin(request: Request) -> None:
        if not options.admin_enabled:
            raise HTTPException(403, "admin endpoints are disabled (--no-admin)")
        cross_site = same_origin(request)
        if cross_site is not None:
            raise HTTPException(403, f"admin endpoints refuse requests from web pages ({cross_site})")
        if options.admin_token is None:
            content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if not content_type or content_type in SIMPLE_CONTENT_TYPES:
                raise HTTPException(415, "admin endpoints without an admin token need a Content-Type a web "
                                    "page cannot send unasked, e.g. application/json or application/gzip "
                                    f"(got {content_type or 'none'})")
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), options.admin_token.encode()):
            raise HTTPException(401, "admin endpoints need 'Authorization: Bearer <token>'",
                                headers={"WWW-Authenticate": "Bearer"})

    async def healthz(request: Request) -> Response:
        active = registry.active
        return JSONResponse({"status": "ok", "digest": active.digest if active else None},
                            status_code=200 if active else 503)

    async def metrics(request: Request) -> Response:
        active = registry.active
        info = active.stamp() if active else {}
        return PlainTextResponse(service.metrics.render(info), media_type="text/plain; version=0.0.4")

    async def status(request: Request) -> Response:
        return JSONResponse(service.status())

    async def sessions(request: Request) -> Response:
        data = await _body(request, options.max_session_bytes)
        content_type = request.headers.get("content-type", "")
        now = request.query_params.get("now")

        try:
            return JSONResponse(await run_in_threadpool(service.run_session, data, now, content_type))
        except FumaroleError as err:
            status_code = 500 if session_failed(err) else 400
            return _error(status_code, err.diagnostics[0].headline(), diagnostics_json(err.diagnostics))

    async def decisions(request: Request) -> Response:
        try:
            since = int(request.query_params.get("since", "0"))
            limit = int(request.query_params.get("limit", "1000"))
        except ValueError:
            raise HTTPException(400, "since and limit must be integers") from None
        return JSONResponse(service.decisions.since(since, max(1, min(limit, 10000))))

    async def activate(request: Request) -> Response:
        admin(request)
        data = await _body(request, options.max_bundle_bytes)
        smoke = request.query_params.get("smoke", "true").lower() not in ("false", "0", "no")
        try:
            outcome, revision = await run_in_threadpool(registry.activate, data, "upload", "upload", True, smoke)
        except FumaroleError as err:
            return _error(422, "bundle not activated; the active bundle is unchanged", diagnostics_json(err.diagnostics))
        except Busy as exc:
            return _error(409, str(exc))
        return JSONResponse({"outcome": outcome, "active": revision.describe()})

    async def rollback(request: Request) -> Response:
        admin(request)
        try:
            revision = await run_in_threadpool(registry.rollback)
        except FumaroleError as err:
            return _error(409, err.diagnostics[0].message, diagnostics_json(err.diagnostics))
        except Busy as exc:
            return _error(409, str(exc))
        return JSONResponse({"outcome": "rolled back", "active": revision.describe()})

    async def shadow(request: Request) -> Response:
        admin(request)
        data = await _body(request, options.max_bundle_bytes) if request.method == "PUT" else None
        try:
            revision = await run_in_threadpool(registry.set_shadow, data, "shadow upload")
        except FumaroleError as err:
            return _error(422, "shadow bundle not installed", diagnostics_json(err.diagnostics))
        except Busy as exc:
            return _error(409, str(exc))
        return JSONResponse({"shadow": revision.describe() if revision else None})

    async def extend(request: Request) -> Response:
        verb = request.path_params["verb"]
        if verb not in VERBS:
            service.metrics.extender.inc(verb="unknown", code="404")
            raise HTTPException(404, f"unknown extender verb {verb!r}; fumarole answers {', '.join(VERBS)}")
        data = await _body(request, options.max_extender_bytes)
        try:
            answer, revision = await run_in_threadpool(extender.handle, verb, _json_body(data))
            code = 200
        except FumaroleError as err:  # the child ran over, ran out of memory or broke: 500; else 400
            code = 500 if worker_failure(err) else 400
            answer, revision = {"error": err.diagnostics[0].headline()}, None
        except PayloadError as exc:
            answer, revision, code = {"error": str(exc)}, None, 400
        except PolicyRuntimeError as exc:
            answer, revision, code = {"error": f"policy failed while running: {exc.message}"}, None, 500
        service.metrics.extender.inc(verb=verb, code=str(code))
        headers = {"X-Fumarole-Digest": revision.digest} if revision is not None else None
        return JSONResponse(answer, status_code=code, headers=headers)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    async def internal_error(request: Request, exc: Exception) -> Response:
        return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    routes = [
        Route("/healthz", guarded(healthz), methods=["GET"]),
        Route("/metrics", guarded(metrics), methods=["GET"]),
        Route("/v1/status", guarded(status), methods=["GET"]),
        Route("/v1/sessions", guarded(sessions), methods=["POST"]),
        Route("/v1/decisions", guarded(decisions), methods=["GET"]),
        Route("/v1/bundles/active", guarded(activate), methods=["PUT"]),
        Route("/v1/bundles/rollback", guarded(rollback), methods=["POST"]),
        Route("/v1/bundles/shadow", guarded(shadow), methods=["PUT", "DELETE"]),
        Route(PREFIX + "/{verb}", guarded(extend), methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: internal_error})


def listen_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket with TCP_NODELAY, which accepted connections inherit.

    Without it, a keep-alive client (Volcano's Go client, httpx) waits for the delayed ACK
    between the response's header and body writes, on every request (benchmarks/README.md
    has what that cost).
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock


def _server(app: Starlette, log_level: str) -> uvicorn.Server:
    # at SIGTERM, requests still running get 5 s; then the service exits (sessions are killed by on_exit)
    return uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False, timeout_keep_alive=30,
                                         timeout_graceful_shutdown=5))


class Running:
    """A uvicorn server on its own thread (tests, benchmarks, embedding)."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        self.socket = listen_socket(host, port)
        self.server = _server(app, "warning")
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        bound = self.socket.getsockname()
        self.url = f"http://{host if ':' not in host else f'[{host}]'}:{bound[1]}"

    def __enter__(self) -> "Running":
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server thread stopped during start-up")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()


def serve(app: Starlette, sock: socket.socket, on_exit: Callable[[], None] | None = None) -> None:
    """Run in the foreground on a socket from :func:`listen_socket` until SIGINT/SIGTERM (``fumarole serve``)."""
    try:
        _server(app, "info").run(sockets=[sock])
    finally:
        sock.close()
        if on_exit is not None:
            on_exit()
