"""HttpEngine: judge through one or more `python -m sandbox serve` servers.

    with open_engine("http", url=["http://a:8765", "http://b:8765"], token=...) as engine:
        results = engine.judge(requests)

The same interface as the local engines (judge, judge_iter, stamp, close). Requests go in
batches of `batch_size`, `parallel` batches in flight (enough to keep the servers' slots busy
across batch boundaries); results stream back per batch, in input order for `judge`.

Nothing is lost under load: a server that answers "busy" (429) or "shutting down" (503) is asked
again after Retry-After (with jitter, another server first when there are several), for up to
`busy_timeout_s`. A server that fails (connection refused or reset, a timeout, a 5xx) is set
aside for a while and the batch goes to the next one; when every server has failed
`max_attempts` times in a row for a batch, judging stops with one line saying which servers
failed and how. Opening the engine when no server answers, or one refuses the token, is
`EngineUnavailable` (one line; the flows do not retry it): `probe` checks the same in seconds. Batches are idempotent (a verdict depends only on the request), so resending
one that a dying server may have half judged is safe.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import httpx
from pydantic import TypeAdapter

from sandbox.engines import EngineBase, EngineUnavailable
from sandbox.http.versions import NoAnswer, gather, token_of, urls_of
from sandbox.http.wire import encode_batch
from sandbox.models import JudgeRequest, JudgeResult
from sandbox.pool import Progress, SandboxError, request_timeout

log = logging.getLogger("sandbox.http")
RESULTS = TypeAdapter(list[JudgeResult])


class _TooLarge(Exception):
    pass


class _Server:
    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.down_until = 0.0
        self.known: OrderedDict[str, None] = OrderedDict()  # test sets it has (as far as we know)
        self.lock = threading.Lock()

    def has(self, ref: str) -> bool:
        with self.lock:
            return ref in self.known

    def remember(self, refs: Iterable[str], forget: Iterable[str] = ()) -> None:
        with self.lock:
            for ref in forget:
                self.known.pop(ref, None)
            for ref in refs:
                self.known[ref] = None
                self.known.move_to_end(ref)
            while len(self.known) > 4096:
                self.known.popitem(last=False)


class HttpEngine(EngineBase):
    """A client of sandbox servers (see module doc).

    url: one server URL or several (tried in turn, failed ones set aside).
    token: the servers' bearer token; None -> ALETHEIA_SANDBOX_TOKEN.
    batch_size: requests per HTTP batch; parallel: batches in flight (None: enough for the
    servers' slots, at least 2). cache: False sends use_cache=false with every batch.
    pool_size, selftest: accepted for config compatibility with the local engines; the servers'
    own pools decide (their self-tests ran when they started).
    """

    engine_name = "http"

    def __init__(
        self,
        url: str | list[str] | tuple[str, ...],
        token: str | None = None,
        *,
        batch_size: int = 16,
        parallel: int | None = None,
        cache: bool = True,
        connect_timeout_s: float = 5.0,
        max_attempts: int = 3,
        busy_timeout_s: float = 3600.0,
        pool_size: int | None = None,  # accepted, unused: see the docstring
        selftest: bool = True,
        cache_path: Any = None,
    ):
        self.servers = [_Server(u) for u in urls_of(url)]
        self.token = token_of(token)
        self.batch_size = max(1, batch_size)
        self.use_cache = cache
        self.max_attempts = max(1, max_attempts)
        self.busy_timeout_s = busy_timeout_s
        self._closed = False
        self._rr = itertools.count()
        self._http = httpx.Client(
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=httpx.Timeout(connect=connect_timeout_s, read=None, write=60, pool=None),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
        )
        try:
            infos = _versions(self._http, self.servers)
        except EngineUnavailable:
            self._http.close()
            raise
        info = next(iter(infos.values()))
        self.info = info
        self._stamp = info["stamp"]
        self.unavailable: dict[str, str] = dict(info.get("unavailable") or {})
        self.max_batch = int(info["limits"]["max_batch"])
        self.batch_size = min(self.batch_size, self.max_batch)
        slots = sum(int(i.get("slots", 1)) for i in infos.values())
        self.parallel = parallel or max(2, -(-2 * slots // self.batch_size))

    # -- the engine interface --------------------------------------------------------------

    @property
    def stamp(self) -> str:
        """The servers' engine stamp: the verdicts are theirs."""
        return self._stamp

    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]:
        """Yield (input index, result) per finished batch. Consumes `requests` lazily."""
        if self._closed:
            raise SandboxError("this HttpEngine is closed")
        total = len(requests) if hasattr(requests, "__len__") else None  # type: ignore[arg-type]
        bar = Progress(total) if progress else None
        cache = use_cache and self.use_cache
        batches = self._batches(requests)
        pool = ThreadPoolExecutor(self.parallel, thread_name_prefix="sandbox-http")
        inflight: dict[Future, list[int]] = {}
        try:
            for batch in itertools.islice(batches, self.parallel):
                inflight[pool.submit(self._send, [r for _, r in batch], cache)] = [
                    i for i, _ in batch
                ]
            while inflight:
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    indices = inflight.pop(fut)
                    results = fut.result()  # a failed batch ends the whole call, one line
                    for index, result in zip(indices, results):
                        if bar:
                            bar.advance(result)
                        yield index, result
                    nxt = next(batches, None)
                    if nxt is not None:
                        inflight[pool.submit(self._send, [r for _, r in nxt], cache)] = [
                            i for i, _ in nxt
                        ]
        finally:
            for fut in inflight:
                fut.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            if bar:
                bar.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._http.close()

    # -- internals --------------------------------------------------------------------------

    def _batches(
        self, requests: Iterable[JudgeRequest | dict]
    ) -> Iterator[list[tuple[int, JudgeRequest]]]:
        batch: list[tuple[int, JudgeRequest]] = []
        for index, raw in enumerate(requests):
            try:
                req = raw if isinstance(raw, JudgeRequest) else JudgeRequest.model_validate(raw)
            except ValueError as exc:
                raise ValueError(f"request {index} is not a valid JudgeRequest: {exc}") from exc
            batch.append((index, req))
            if len(batch) >= self.batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    def _check_usable(self) -> None:
        if not self._usable():
            raise EngineUnavailable(
                f"no sandbox server runs {self._stamp!r} any more (one restarted with another "
                "engine or toolchain): open a new http engine"
            )

    def _usable(self) -> list[_Server]:
        """Servers that still run our engine (one restarted with another is dropped for good)."""
        return [s for s in self.servers if s.down_until != float("inf")]

    def _order(self) -> list[_Server]:
        """Servers to try, starting at the next in turn; ones set aside after a failure last."""
        usable = self._usable()
        n = len(usable)
        start = next(self._rr) % max(n, 1)
        turn = [usable[(start + k) % n] for k in range(n)]
        now = time.monotonic()
        return [s for s in turn if s.down_until <= now] + [s for s in turn if s.down_until > now]

    def _send(self, reqs: list[JudgeRequest], use_cache: bool) -> list[JudgeResult]:
        try:
            return self._send_once(reqs, use_cache)
        except _TooLarge as exc:
            if len(reqs) == 1:
                raise SandboxError(
                    f"a request is too large for the sandbox servers: {exc}"
                ) from exc
            half = len(reqs) // 2
            return self._send(reqs[:half], use_cache) + self._send(reqs[half:], use_cache)

    def _send_once(self, reqs: list[JudgeRequest], use_cache: bool) -> list[JudgeResult]:
        read_timeout = 60.0 + sum(request_timeout(r) for r in reqs)
        failures: dict[str, list[str]] = {}
        busy_since: float | None = None
        busy_wait = 0.5
        force: set[str] = set()  # test sets to send whatever we believe the server has
        while True:
            self._check_usable()
            busy: httpx.Response | None = None
            for server in self._order():
                refs = {r.tests_ref for r in reqs}
                send = {ref for ref in refs if ref in force or not server.has(ref)}
                body = encode_batch(reqs, send, use_cache)
                try:
                    resp = self._http.post(
                        server.url + "/v1/judge",
                        content=body,
                        headers={"Content-Type": "application/json"},
                        timeout=httpx.Timeout(5.0, read=read_timeout, write=60.0, pool=None),
                    )
                except httpx.HTTPError as exc:
                    self._failed(server, failures, _why(exc))
                    continue
                code = resp.status_code
                if code == 200:
                    data = resp.json()
                    if data.get("stamp") != self._stamp:  # restarted with another engine
                        why = f"now runs another engine ({data.get('stamp')!r})"
                        failures[server.url] = [why] * self.max_attempts
                        server.down_until = float("inf")  # never again: verdicts would mix
                        continue
                    server.remember(send)
                    results = RESULTS.validate_python(data["results"])
                    if len(results) != len(reqs):
                        raise SandboxError(
                            f"{server.url} answered {len(results)} results for {len(reqs)}"
                        )
                    return results
                message = _message(resp)
                if code == 409:  # it dropped test sets we thought it had: send them
                    missing = set(resp.json().get("missing_tests") or [])
                    server.remember((), forget=missing)
                    force |= missing
                    continue
                if code in (429, 503):  # busy or draining: the next server, then wait
                    busy = resp
                    continue
                if code == 401:
                    raise EngineUnavailable(f"{server.url} refused the token")
                if code == 413:
                    raise _TooLarge(f"{server.url}: {message}")
                if code in (400, 422):
                    raise SandboxError(f"{server.url} rejected a batch: {message}")
                self._failed(server, failures, f"HTTP {code}: {message}")
            if busy is not None:
                busy_since = busy_since or time.monotonic()
                if time.monotonic() - busy_since > self.busy_timeout_s:
                    raise SandboxError(
                        f"the sandbox servers stayed busy for {self.busy_timeout_s:.0f} s "
                        f"({_message(busy)})"
                    )
                busy_wait = self._backoff(busy, busy_wait)
                continue
            self._check_usable()
            if failures and all(
                len(failures.get(s.url, [])) >= self.max_attempts for s in self._usable()
            ):
                what = "; ".join(f"{u}: {v[-1]} ({len(v)} attempts)" for u, v in failures.items())
                lone = "" if len(self.servers) > 1 else "; no other server to try"
                raise SandboxError(f"sandbox server(s) failed: {what}{lone}")
            now = time.monotonic()
            usable = self._usable()
            if failures and all(s.down_until > now for s in usable):
                time.sleep(max(0.0, min(s.down_until for s in usable) - now))

    def _failed(self, server: _Server, failures: dict[str, list[str]], why: str) -> None:
        tries = failures.setdefault(server.url, [])
        tries.append(why)
        back = time.monotonic() + min(0.5 * 2 ** (len(tries) - 1), 5.0)
        server.down_until = max(server.down_until, back)
        log.warning("sandbox server %s failed (%s); trying again elsewhere", server.url, why)

    @staticmethod
    def _backoff(resp: httpx.Response, current: float) -> float:
        """Sleep as the server asks (Retry-After) or the current backoff, with jitter; return
        the next backoff."""
        try:
            asked = float(resp.headers.get("retry-after", ""))
        except ValueError:
            asked = current
        time.sleep(max(asked, current) * random.uniform(0.5, 1.0))
        return min(current * 2, 5.0)


def _versions(http: httpx.Client, servers: list[_Server], timeout_s: float = 30) -> dict[str, dict]:
    """url -> /v1/version of every server that answers (sandbox.http.versions.gather); the
    others are set aside for a few seconds."""

    def fetch(url: str) -> tuple[int, bytes]:
        try:
            resp = http.get(url + "/v1/version", timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise NoAnswer(f"{url}: {_why(exc)}") from exc
        return resp.status_code, resp.content

    infos, _ = gather([s.url for s in servers], fetch)
    for server in servers:
        if server.url not in infos:
            server.down_until = time.monotonic() + 5
    return infos


def _why(exc: httpx.HTTPError) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
        return str(data.get("error") or data)[:300]
    except ValueError:
        return resp.text[:300]
