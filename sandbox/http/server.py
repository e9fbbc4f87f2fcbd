"""`python -m sandbox serve`: a judge engine (docker or process) behind an HTTP API.

    ALETHEIA_SANDBOX_TOKEN=... python -m sandbox serve --engine process --port 8765

Endpoints (FastAPI on uvicorn; the batch format is in wire.py):
  GET  /v1/health   no token; 200 {"ok": true, ...} while serving, 503 while starting to drain
  GET  /v1/version  the engine's stamp, protocol, languages refused here, and the limits below
  POST /v1/judge    a batch of requests -> their results, in order

Limits, each answered rather than absorbed: a bearer token on everything but health (401);
a body size cap (413, checked on Content-Length and while reading); a body that stops arriving
(no bytes for `body_idle_s`) is answered 408 and its connection closed, and a client that hangs up
mid-body costs one warning line, never a traceback; at most `max_batch`
requests per batch (413); a bounded queue: at most `max_queue` requests admitted and not yet
answered, beyond which a batch is answered 429 "busy" with Retry-After instead of waiting in
memory (a batch is always admitted when nothing is pending, so any batch within the limits
eventually runs). SIGTERM / SIGINT: stop accepting, finish the admitted batches (up to
`drain_timeout_s`), close the engine.

The engine's verdict cache is the server's: clients send `use_cache` with each batch.
Plain HTTP: serve on 127.0.0.1 or a trusted network, or give uvicorn a certificate
(--ssl-certfile/--ssl-keyfile).
"""

from __future__ import annotations

import hmac
import json
import logging
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import TypeAdapter
from starlette.requests import ClientDisconnect

from sandbox.http.wire import PROTOCOL, BadBatch, TestSets, decode_batch
from sandbox.models import MAX_MEMORY_LIMIT_MB, JudgeResult

log = logging.getLogger("sandbox.serve")
RESULTS = TypeAdapter(list[JudgeResult])


@dataclass
class ServeLimits:
    max_body_mb: int = 256  # a batch's JSON (a contest problem's tests can be large)
    max_batch: int = 512  # requests per batch
    max_queue: int | None = None  # requests admitted and not yet answered; None: 32 x slots
    test_sets_mb: int = 512  # test sets kept so clients need not resend them
    retry_after_s: int = 1
    body_idle_s: float = 60.0  # longest pause while a body arrives (a stalled client: 408)


class _State:
    def __init__(self, engine: Any, limits: ServeLimits):
        self.engine = engine
        self.limits = limits
        slots = int(getattr(engine, "pool_size", 1) or 1)
        self.capacity = limits.max_queue or 32 * slots
        self.pending = 0  # requests admitted, not yet answered (touched on the event loop only)
        self.draining = False
        self.sets = TestSets(limits.test_sets_mb << 20)
        self.judged = 0
        self.refused_busy = 0


class _AsciiJSON(JSONResponse):
    """JSON with every non-ASCII character escaped: an answer that echoes a client's text (a
    lone surrogate in a test-set name) is always encodable, so it never turns into a 500."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return _AsciiJSON({"error": message, **extra}, status_code=status)


class _BodyRefused(Exception):
    """The body cannot be read whole: the answer to send instead of a verdict."""

    def __init__(self, answer: JSONResponse):
        self.answer = answer


async def _read_body(request: Request, cap: int, idle_s: float) -> bytes:
    """The whole body, at most `cap` bytes, with at most `idle_s` between two reads."""
    body = bytearray()
    chunks = request.stream().__aiter__()
    while True:
        try:
            with anyio.fail_after(idle_s):
                chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return bytes(body)
        except TimeoutError:
            answer = _error(408, f"no byte of the batch for {idle_s:g} s: send it whole")
            answer.headers["Connection"] = "close"  # the rest of the body is never read
            raise _BodyRefused(answer) from None
        except ClientDisconnect:
            log.warning("a batch's connection closed after %d bytes, before its end", len(body))
            raise _BodyRefused(_error(400, "the connection closed mid-body")) from None
        body += chunk
        if len(body) > cap:
            raise _BodyRefused(_error(413, f"the batch is over the limit of {cap} bytes"))


def create_app(
    open_engine_fn: Callable[[], Any], token: str, limits: ServeLimits | None = None
) -> FastAPI:
    """The app; the engine is opened at startup and closed at shutdown (after draining)."""
    limits = limits or ServeLimits()
    if not token:
        raise ValueError("the server needs a token (ALETHEIA_SANDBOX_TOKEN or --token-file)")
    expected = f"Bearer {token}".encode()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = await anyio.to_thread.run_sync(open_engine_fn)
        app.state.s = _State(engine, limits)
        log.info("serving %s", engine.stamp)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(engine.close)

    app = FastAPI(title="aletheia sandbox", lifespan=lifespan, docs_url=None, redoc_url=None)

    def authorized(request: Request) -> bool:
        got = request.headers.get("authorization", "").encode()
        return hmac.compare_digest(got, expected)

    @app.get("/v1/health")
    async def health(request: Request) -> JSONResponse:
        s: _State = request.app.state.s
        body = {
            "ok": not s.draining,
            "pending": s.pending,
            "capacity": s.capacity,
            "judged": s.judged,
            "refused_busy": s.refused_busy,
        }
        return JSONResponse(body, status_code=503 if s.draining else 200)

    @app.get("/v1/version")
    async def version(request: Request) -> JSONResponse:
        if not authorized(request):
            return _error(401, "missing or wrong bearer token")
        s: _State = request.app.state.s
        return JSONResponse(
            {
                "protocol": PROTOCOL,
                "engine": getattr(s.engine, "engine_name", type(s.engine).__name__),
                "stamp": s.engine.stamp,
                "slots": int(getattr(s.engine, "pool_size", 1) or 1),
                "unavailable": dict(getattr(s.engine, "unavailable", {}) or {}),
                "limits": {
                    "max_body_bytes": limits.max_body_mb << 20,
                    "max_batch": limits.max_batch,
                    "max_queue": s.capacity,
                    "max_memory_limit_mb": MAX_MEMORY_LIMIT_MB,
                    "body_idle_s": limits.body_idle_s,
                },
            }
        )

    @app.post("/v1/judge")
    async def judge(request: Request) -> Response:
        s: _State = request.app.state.s
        if not authorized(request):
            return _error(401, "missing or wrong bearer token")
        if s.draining:
            return _error(503, "the server is shutting down", retry=True)
        cap = limits.max_body_mb << 20
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            return _error(413, f"the batch is {int(declared)} bytes; the limit is {cap}")
        try:
            body = await _read_body(request, cap, limits.body_idle_s)
        except _BodyRefused as refused:
            return refused.answer
        try:
            reqs, use_cache, missing = await anyio.to_thread.run_sync(decode_batch, body, s.sets)
        except BadBatch as exc:
            return _error(400, str(exc))
        if missing:
            return _AsciiJSON({"missing_tests": missing}, status_code=409)
        if len(reqs) > limits.max_batch:
            return _error(
                413, f"{len(reqs)} requests in one batch; the limit is {limits.max_batch}"
            )
        if s.pending and s.pending + len(reqs) > s.capacity:
            s.refused_busy += 1
            return JSONResponse(
                {"error": "busy", "pending": s.pending, "capacity": s.capacity},
                status_code=429,
                headers={"Retry-After": str(limits.retry_after_s)},
            )
        s.pending += len(reqs)
        try:
            results = await anyio.to_thread.run_sync(
                lambda: s.engine.judge(reqs, use_cache=use_cache)
            )
            payload = await anyio.to_thread.run_sync(RESULTS.dump_json, results)
        finally:
            s.pending -= len(reqs)
        s.judged += len(reqs)
        stamp = s.engine.stamp.encode()
        return Response(
            content=b'{"stamp":' + _json_str(stamp) + b',"results":' + payload + b"}",
            media_type="application/json",
        )

    return app


def _json_str(raw: bytes) -> bytes:
    return json.dumps(raw.decode()).encode()


def serve(
    open_engine_fn: Callable[[], Any],
    *,
    token: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    limits: ServeLimits | None = None,
    drain_timeout_s: float = 600.0,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    log_level: str = "warning",
) -> None:
    """Run the server until SIGTERM / SIGINT, then drain and close the engine."""
    app = create_app(open_engine_fn, token, limits)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=int(drain_timeout_s),
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        limit_concurrency=None,
    )
    server = _DrainingServer(config)
    server.app_ref = app
    server.run()


class _DrainingServer(uvicorn.Server):
    """uvicorn's server, telling the app when shutdown begins: health answers 503 and new
    batches are refused with 503 (clients go elsewhere) while the admitted ones finish."""

    app_ref: FastAPI | None = None

    def handle_exit(self, sig: int, frame: Any) -> None:
        s = getattr(getattr(self.app_ref, "state", None), "s", None)
        if s is not None and not s.draining:
            s.draining = True
            log.warning("%s: draining, %d request(s) pending", signal.Signals(sig).name, s.pending)
        super().handle_exit(sig, frame)
