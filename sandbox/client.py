"""SandboxClient: judge candidates on a pool of long-lived sandbox containers.

    with SandboxClient(pool_size=2) as client:
        results = client.judge(requests, progress=True)      # same order as the input
        for index, result in client.judge_iter(requests):    # as they finish
            ...

Concurrency: one worker thread per container; a bounded task queue (2 x pool size) gives
backpressure, so a generator of a million requests is consumed as fast as the pool judges.
Failures of the sandbox itself (a container killed, the daemon restarted) are retried on a fresh
container; a result is SE only when that keeps failing.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from sandbox.cache import VerdictCache
from sandbox.container import (
    ContainerSpec,
    RunnerDied,
    SandboxContainer,
    StartFailed,
    cgroup_parent_for,
    remove_stale_containers,
)
from sandbox.image import cache_dir, docker_client, ensure_image
from sandbox.models import MAX_MEMORY_LIMIT_MB, JudgeRequest, JudgeResult, TestResult

log = logging.getLogger("sandbox")

COMPILE_BUDGET_S = 35.0  # the runner's compile wall limit (30 s) + margin
CHECKER_BUDGET_S = 21.0
STORE_BUDGET_S = 120.0  # sending a test set of a few hundred MB through `docker run -i`


class SandboxError(RuntimeError):
    """The pool could not be brought up (no engine, broken image)."""


@dataclass
class _Task:
    index: int
    request: JudgeRequest
    key: str
    results: queue.Queue
    cancelled: threading.Event


class _Done:
    def __init__(self, count: int, error: BaseException | None = None):
        self.count, self.error = count, error


_STOP = object()


class SandboxClient:
    """A pool of sandbox containers and the verdict cache in front of it.

    pool_size: containers (= concurrent candidates); None -> os.cpu_count().
    image: an image tag or id; None -> the current definition's tag, built if missing.
    cache / cache_path: the host verdict cache (SQLite); default <cache dir>/verdicts.sqlite.
    max_attempts: how often a candidate is tried on a fresh container after a sandbox failure.
    """

    def __init__(
        self,
        pool_size: int | None = None,
        image: str | None = None,
        *,
        cache: bool = True,
        cache_path: str | Path | None = None,
        max_attempts: int = 3,
        restart_timeout_s: float = 180.0,
        selftest: bool = True,
        container_memory_mb: int = MAX_MEMORY_LIMIT_MB + 1024,
        inline_tests_max_bytes: int = 64 << 10,
    ):
        # Test sets up to this size travel inline with each request (one round trip, as cheap as
        # a hash for small tests); larger ones go to the container's store once, by hash.
        self.inline_tests_max_bytes = inline_tests_max_bytes
        self.pool_size = max(1, pool_size or os.cpu_count() or 1)
        self.max_attempts = max_attempts
        self.restart_timeout_s = restart_timeout_s
        tag = image or ensure_image()
        try:
            engine = docker_client()
            self._image_id = engine.images.get(tag).id
            self._cgroup_driver = engine.info().get("CgroupDriver", "")
        except Exception as exc:  # docker-py raises several kinds here
            raise SandboxError(f"sandbox image {tag!r} is not available: {exc}") from exc
        self.spec = ContainerSpec(image=self._image_id, memory_mb=container_memory_mb)
        path = cache_path or (cache_dir() / "verdicts.sqlite")
        self._cache = VerdictCache(path) if cache else None
        self._tasks: queue.Queue = queue.Queue(maxsize=2 * self.pool_size)
        self._store_lines: dict[str, bytes] = {}  # tests_ref -> encoded store request (recent)
        self._store_lock = threading.Lock()
        self._closed = False
        remove_stale_containers()
        with ThreadPoolExecutor(self.pool_size) as ex:
            futures = [ex.submit(self._start_container, slot) for slot in range(self.pool_size)]
            containers = []
            errors = []
            for f in futures:
                try:
                    containers.append(f.result())
                except StartFailed as exc:
                    errors.append(exc)
        if errors:
            for c in containers:
                c.close()
            raise SandboxError(f"could not start the sandbox pool: {errors[0]}")
        if selftest:
            report = containers[0].request({"op": "selftest"}, timeout_s=180)
            if not report.get("ok"):
                for c in containers:
                    c.close()
                raise SandboxError(f"sandbox self-test failed: {report}")
        self._live: dict[int, SandboxContainer | None] = dict(enumerate(containers))
        self._workers = [
            threading.Thread(
                target=self._worker, args=(i, c), name=f"sandbox-worker-{i}", daemon=True
            )
            for i, c in enumerate(containers)
        ]
        for w in self._workers:
            w.start()

    # -- public API -------------------------------------------------------------------------

    @property
    def containers(self) -> list[str]:
        """Names of the pool's current containers (for operators and recovery tests)."""
        return [c.name for c in self._live.values() if c is not None]

    @property
    def image(self) -> str:
        """The image id (sha256:...) every verdict of this client comes from."""
        return self._image_id

    @property
    def stamp(self) -> str:
        """The engine and what fixes its verdicts (see sandbox.engines)."""
        return f"docker:{self._image_id}"

    def judge(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> list[JudgeResult]:
        """Judge all requests; results in input order."""
        out: dict[int, JudgeResult] = {}
        for index, result in self.judge_iter(requests, progress=progress, use_cache=use_cache):
            out[index] = result
        return [out[i] for i in range(len(out))]

    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]:
        """Yield (input index, result) as candidates finish. Consumes `requests` lazily."""
        if self._closed:
            raise SandboxError("this SandboxClient is closed")
        total = len(requests) if hasattr(requests, "__len__") else None  # type: ignore[arg-type]
        results: queue.Queue = queue.Queue()
        cancelled = threading.Event()  # set when the caller stops iterating: drop its queued work
        feeder = threading.Thread(
            target=self._feed,
            args=(requests, results, use_cache, cancelled),
            name="sandbox-feeder",
            daemon=True,
        )
        feeder.start()
        bar = _Progress(total) if progress else None
        received, expected = 0, None
        try:
            while expected is None or received < expected:
                item = results.get()
                if isinstance(item, _Done):
                    if item.error is not None:
                        raise item.error
                    expected = item.count
                    continue
                received += 1
                if bar:
                    bar.advance(item[1])
                yield item
        finally:
            cancelled.set()
            if bar:
                bar.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _ in self._workers:
            self._tasks.put(_STOP)
        for w in self._workers:
            w.join(timeout=60)
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _feed(
        self, requests: Iterable, results: queue.Queue, use_cache: bool, cancelled: threading.Event
    ) -> None:
        count = 0
        try:
            for index, raw in enumerate(requests):
                if cancelled.is_set():
                    return
                try:
                    req = raw if isinstance(raw, JudgeRequest) else JudgeRequest.model_validate(raw)
                except ValueError as exc:
                    raise ValueError(f"request {index} is not a valid JudgeRequest: {exc}") from exc
                key = req.cache_key(self._image_id)
                count += 1
                hit = self._cache.get(key) if (self._cache is not None and use_cache) else None
                if hit is not None:
                    results.put((index, hit))
                else:
                    self._tasks.put(
                        _Task(index, req, key, results, cancelled)
                    )  # blocks while the pool is busy
        except BaseException as exc:  # noqa: BLE001 - hand a bad row / failing iterator to the caller
            results.put(_Done(count, exc))
            return
        results.put(_Done(count))

    def _start_container(self, slot: int = -1) -> SandboxContainer:
        return SandboxContainer(
            self.spec, cgroup_parent=cgroup_parent_for(slot, self._cgroup_driver)
        )

    def _worker(self, slot: int, container: SandboxContainer | None) -> None:
        while True:
            task = self._tasks.get()
            if task is _STOP:
                break
            if task.cancelled.is_set():
                continue
            try:
                result, container = self._execute(task, container, slot)
            except Exception as exc:
                log.exception("sandbox worker failed")
                result = self._system_error(task, f"worker error: {exc}")
            self._live[slot] = container
            if self._cache is not None:
                self._cache.put(task.key, result)
            task.results.put((task.index, result))
        if container is not None:
            container.close()

    def _system_error(self, task: _Task, error: str, **kw) -> JudgeResult:
        return JudgeResult.system_error(
            len(task.request.tests), error, image=self._image_id, cache_key=task.key, **kw
        )

    @staticmethod
    def _timeout(req: JudgeRequest) -> float:
        """How long a judge request may take before its container counts as hung."""
        checker = req.compare.mode in ("checker", "testlib")
        per_test = max(3 * req.time_limit_s, req.time_limit_s + 2) + 2.0
        per_test += CHECKER_BUDGET_S if checker else 0
        return COMPILE_BUDGET_S * (2 if checker else 1) + 10 + len(req.tests) * per_test

    def _store_line(self, req: JudgeRequest) -> bytes:
        """The store request (its JSON line + the raw tests), encoded once per test set for all
        containers."""
        with self._store_lock:
            line = self._store_lines.get(req.tests_ref)
            if line is None:
                line = req.store_wire()
                self._store_lines[req.tests_ref] = line
                while len(self._store_lines) > 4:  # problem order: few sets are active at once
                    self._store_lines.pop(next(iter(self._store_lines)))
            return line

    def _store(self, container: SandboxContainer, req: JudgeRequest) -> None:
        resp = container.request(self._store_line(req), timeout_s=STORE_BUDGET_S)
        if not resp.get("ok"):
            raise RunnerDied(f"storing tests failed: {resp.get('error', resp)}")
        container.stored.add(req.tests_ref)

    def _ask(self, container: SandboxContainer, req: JudgeRequest) -> dict:
        """Judge by reference to the container's test store: a problem's tests cross into a
        container once, not once per candidate. A set the runner has dropped is sent again."""
        if req.tests_bytes <= self.inline_tests_max_bytes:
            return container.request(req.wire(), timeout_s=self._timeout(req))
        if req.tests_ref not in container.stored:
            self._store(container, req)
        resp = container.request(req.wire(by_ref=True), timeout_s=self._timeout(req))
        if resp.get("missing_tests"):
            self._store(container, req)
            resp = container.request(req.wire(by_ref=True), timeout_s=self._timeout(req))
        return resp

    def _execute(
        self, task: _Task, container: SandboxContainer | None, slot: int = -1
    ) -> tuple[JudgeResult, SandboxContainer | None]:
        req = task.request
        total = len(req.tests)
        attempts = 0
        last_error = ""
        while attempts < self.max_attempts:
            if container is None or not container.alive:
                if container is not None:
                    container.close()
                container = self._restart_container(slot)
                self._live[slot] = container
                if container is None:
                    error = f"no sandbox container could be started: {self._last_start_error}"
                    return self._system_error(task, error), None
            try:
                resp = self._ask(container, req)
                if not resp.get("ok"):
                    raise RunnerDied(resp.get("error", "runner error"))
                if resp.get("checker_error"):  # the problem's fault: no retry, no verdict
                    reason = resp["checker_error"]
                    return self._system_error(task, reason, checker_error=reason), container
                tests = [TestResult(**t) for t in resp["tests"]]
                if resp.get("compile_ok") and len(tests) < total:
                    raise RunnerDied("runner could not clean up after a test")
            except RunnerDied as exc:
                attempts += 1
                last_error = str(exc)
                log.warning(
                    "sandbox attempt %d for candidate %d failed: %s", attempts, task.index, exc
                )
                container.close()
                container = None
                continue
            if resp.get("healthy") is False:
                container.close()
                container = None
            result = JudgeResult.from_tests(
                tests,
                total,
                compile_ok=bool(resp.get("compile_ok")),
                compile_output=resp.get("compile_output") or None,
                compile_cached=bool(resp.get("compile_cached")),
                image=self._image_id,
                cache_key=task.key,
            )
            return result, container
        return self._system_error(task, f"sandbox failed {attempts} times: {last_error}"), container

    _last_start_error = ""

    def _restart_container(self, slot: int = -1) -> SandboxContainer | None:
        """Start a fresh container, waiting out a daemon restart (up to restart_timeout_s)."""
        deadline = time.monotonic() + self.restart_timeout_s
        delay = 0.5
        while True:
            try:
                return self._start_container(slot)
            except StartFailed as exc:
                self._last_start_error = str(exc)
                if time.monotonic() + delay > deadline:
                    return None
                log.warning("sandbox container start failed (retrying in %.1fs): %s", delay, exc)
                time.sleep(delay)
                delay = min(delay * 2, 5.0)


class _Progress:
    """A rich progress bar that also counts verdicts."""

    def __init__(self, total: int | None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._counts: dict[str, int] = {}
        self._p = Progress(
            TextColumn("judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[verdicts]}"),
            console=Console(stderr=True),  # stdout stays for results (the CLI prints JSON there)
            transient=False,
        )
        self._task = self._p.add_task("judge", total=total, verdicts="")
        self._p.start()

    def advance(self, result: JudgeResult) -> None:
        self._counts[result.verdict] = self._counts.get(result.verdict, 0) + 1
        text = " ".join(f"{k}:{v}" for k, v in sorted(self._counts.items()))
        self._p.update(self._task, advance=1, verdicts=text)

    def close(self) -> None:
        self._p.stop()
