"""RunnerPool: judge candidates on a pool of runner slots, whatever isolates them.

    with SomePool(pool_size=2) as pool:
        results = pool.judge(requests, progress=True)      # same order as the input
        for index, result in pool.judge_iter(requests):    # as they finish
            ...

The Docker engine (`sandbox.client.SandboxClient`, slots = containers) and the process engine
(`sandbox.process.engine.ProcessEngine`, slots = bubblewrap sandboxes) are both this pool; they
differ only in how a slot is started (`_start_slot`) and in what names their verdicts (`stamp`,
`_key_id`).

Concurrency: one worker thread per slot; a bounded task queue (2 x pool size) gives
backpressure, so a generator of a million requests is consumed as fast as the pool judges.
Small inline requests are pipelined: while a slot judges one, its worker already sends it the
next (when no other worker is idle), so a slot never waits for the host between candidates.
Failures of the sandbox itself (a slot killed, the daemon restarted) are retried on a fresh
slot; a result is SE only when that keeps failing. A language the engine cannot run here
(its toolchain is missing) is answered SE per request, with the reason, and never cached.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.cache import VerdictCache
from sandbox.engines import EngineBase
from sandbox.models import JudgeRequest, JudgeResult, TestResult
from sandbox.paths import cache_dir
from sandbox.slot import RunnerDied, RunnerPipe, StartFailed

log = logging.getLogger("sandbox")

COMPILE_BUDGET_S = 35.0  # the runner's compile wall limit (30 s) + margin
CHECKER_BUDGET_S = 21.0
STORE_BUDGET_S = 120.0  # sending a test set of a few hundred MB through the runner's stdin
# A request sent ahead (while the runner judges another) must fit in the stdin pipe whatever the
# runner has not read yet, or the write could wait on a runner that waits on us to read its answer.
AHEAD_MAX_BYTES = 32 << 10


class SandboxError(RuntimeError):
    """The pool could not be brought up (no engine, broken image, no isolation)."""


@dataclass
class _Task:
    index: int
    request: JudgeRequest
    key: str
    results: queue.Queue
    cancelled: threading.Event


@dataclass
class _Ahead:
    """A slot's next task, taken from the queue while the current one runs. When `runner` is
    set, its request line is already in that runner's stdin (sent ahead): the runner starts it
    the moment it has answered the current one, without waiting for the host to hand it over."""

    task: _Task | None = None
    runner: RunnerPipe | None = None  # the runner its request was sent to (None: not sent)
    stop: bool = False  # the queue's stop marker was taken in passing


class _Done:
    def __init__(self, count: int, error: BaseException | None = None):
        self.count, self.error = count, error


_STOP = object()


def request_timeout(req: JudgeRequest) -> float:
    """How long a judge request may take before its slot counts as hung."""
    checker = req.compare.mode in ("checker", "testlib")
    per_test = max(3 * req.time_limit_s, req.time_limit_s + 2) + 2.0
    per_test += CHECKER_BUDGET_S if checker else 0
    return COMPILE_BUDGET_S * (2 if checker else 1) + 10 + len(req.tests) * per_test


class RunnerPool(EngineBase):
    """A pool of runner slots and the verdict cache in front of it (the docker and process
    engines; `judge` comes from EngineBase, over `judge_iter`).

    Subclasses set `self._key_id` (what verdict cache keys and results' `image` field carry)
    and call `self._start_pool(selftest)` at the end of their constructor; they implement
    `_start_slot(slot)` (raise StartFailed), `stamp`, and may override `_check_selftest`.
    """

    _key_id: str = ""
    engine_name = "pool"

    def __init__(
        self,
        pool_size: int | None = None,
        *,
        cache: bool = True,
        cache_path: str | Path | None = None,
        max_attempts: int = 3,
        restart_timeout_s: float = 180.0,
        inline_tests_max_bytes: int = 64 << 10,
    ):
        # Test sets up to this size travel inline with each request (one round trip, as cheap as
        # a hash for small tests); larger ones go to the slot's store once, by hash.
        self.inline_tests_max_bytes = inline_tests_max_bytes
        self.pool_size = max(1, pool_size or os.cpu_count() or 1)
        self.max_attempts = max_attempts
        self.restart_timeout_s = restart_timeout_s
        self._cache_path = cache_path or (cache_dir() / "verdicts.sqlite")
        self._use_cache = cache
        self._cache: VerdictCache | None = None
        self._tasks: queue.Queue = queue.Queue(maxsize=2 * self.pool_size)
        self._store_lines: dict[str, bytes] = {}  # tests_ref -> encoded store request (recent)
        self._store_lock = threading.Lock()
        self._closed = False
        self._workers: list[threading.Thread] = []
        self._waiting = 0  # workers waiting for a task (none is taken ahead while one waits)
        self._waiting_lock = threading.Lock()
        self._live: dict[int, RunnerPipe | None] = {}
        # language -> why requests in it are refused here (its toolchain is missing)
        self.unavailable: dict[str, str] = {}
        self.selftest_report: dict[str, Any] | None = None

    # -- subclass hooks -----------------------------------------------------------------------

    def _start_slot(self, slot: int = -1) -> RunnerPipe:
        raise NotImplementedError

    @property
    def stamp(self) -> str:
        raise NotImplementedError

    def _check_selftest(self, report: dict[str, Any]) -> None:
        """Decide what a failed self-test means (default: the pool is unusable)."""
        if not report.get("ok"):
            raise SandboxError(f"sandbox self-test failed: {report}")

    # -- start --------------------------------------------------------------------------------

    def _start_pool(self, selftest: bool) -> None:
        with ThreadPoolExecutor(self.pool_size) as ex:
            futures = [ex.submit(self._start_slot, slot) for slot in range(self.pool_size)]
            slots: list[RunnerPipe] = []
            errors = []
            for f in futures:
                try:
                    slots.append(f.result())
                except StartFailed as exc:
                    errors.append(exc)
        if errors:
            for s in slots:
                s.close()
            raise SandboxError(f"could not start the {self.engine_name} pool: {errors[0]}")
        if selftest:
            try:
                report = slots[0].request({"op": "selftest"}, timeout_s=180)
                self.selftest_report = report
                self._check_selftest(report)
            except (SandboxError, RunnerDied) as exc:
                for s in slots:
                    s.close()
                if isinstance(exc, SandboxError):
                    raise
                raise SandboxError(f"sandbox self-test failed: {exc}") from exc
        if self._use_cache:
            self._cache = VerdictCache(self._cache_path)
        self._live = dict(enumerate(slots))
        self._workers = [
            threading.Thread(
                target=self._worker, args=(i, s), name=f"sandbox-worker-{i}", daemon=True
            )
            for i, s in enumerate(slots)
        ]
        for w in self._workers:
            w.start()

    # -- public API -------------------------------------------------------------------------

    @property
    def slots(self) -> list[str]:
        """Names of the pool's current slots (for operators and recovery tests)."""
        return [s.name for s in self._live.values() if s is not None]

    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]:
        """Yield (input index, result) as candidates finish. Consumes `requests` lazily."""
        if self._closed:
            raise SandboxError(f"this {type(self).__name__} is closed")
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
        bar = Progress(total) if progress else None
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
                key = req.cache_key(self._key_id)
                count += 1
                refused = self.unavailable.get(req.language)
                if refused is not None:
                    results.put((index, self._refused(req, key, refused)))
                    continue
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

    def _refused(self, req: JudgeRequest, key: str, reason: str) -> JudgeResult:
        return JudgeResult.system_error(len(req.tests), reason, image=self._key_id, cache_key=key)

    def _worker(self, slot: int, runner: RunnerPipe | None) -> None:
        ahead = _Ahead()
        while True:
            if ahead.task is not None:
                task, sent_to = ahead.task, ahead.runner
                ahead.task, ahead.runner = None, None
            elif ahead.stop:
                break
            else:
                with self._waiting_lock:
                    self._waiting += 1
                task, sent_to = self._tasks.get(), None
                with self._waiting_lock:
                    self._waiting -= 1
                if task is _STOP:
                    break
            if task.cancelled.is_set() and sent_to is None:
                continue
            try:
                result, runner = self._execute(
                    task, runner, slot, sent=sent_to is not None and sent_to is runner, ahead=ahead
                )
            except Exception as exc:
                log.exception("sandbox worker failed")
                result = self._system_error(task, f"worker error: {exc}")
                # The runner's stream is out of step (a request sent ahead, an answer unread):
                # replace the slot; the task taken ahead, if any, is sent to the new one.
                runner = self._live.get(slot)
                if runner is not None:
                    runner.close()
                runner = None
                ahead.runner = None
            self._live[slot] = runner
            if self._cache is not None:
                self._cache.put(task.key, result)
            task.results.put((task.index, result))
        if runner is not None:
            runner.close()

    def _send_ahead(self, runner: RunnerPipe, current: JudgeRequest, ahead: _Ahead) -> None:
        """Take the next task now, and send its request too when both are small inline ones."""
        if ahead.task is not None or ahead.stop or not self._inline(current):
            return
        with self._waiting_lock:  # idle workers first: taking work ahead must not starve them
            if self._tasks.qsize() <= self._waiting:
                return
        try:
            nxt = self._tasks.get_nowait()
        except queue.Empty:
            return
        if nxt is _STOP:
            ahead.stop = True
            return
        ahead.task = nxt
        if nxt.cancelled.is_set() or not self._inline(nxt.request):
            return
        line = json.dumps(nxt.request.wire()).encode() + b"\n"
        if len(line) <= AHEAD_MAX_BYTES:
            runner.send(line)
            ahead.runner = runner

    def _inline(self, req: JudgeRequest) -> bool:
        return req.tests_bytes <= self.inline_tests_max_bytes

    def _system_error(self, task: _Task, error: str, **kw) -> JudgeResult:
        return JudgeResult.system_error(
            len(task.request.tests), error, image=self._key_id, cache_key=task.key, **kw
        )

    @staticmethod
    def _timeout(req: JudgeRequest) -> float:
        return request_timeout(req)

    def _store_line(self, req: JudgeRequest) -> bytes:
        """The store request (its JSON line + the raw tests), encoded once per test set for all
        slots."""
        with self._store_lock:
            line = self._store_lines.get(req.tests_ref)
            if line is None:
                line = req.store_wire()
                self._store_lines[req.tests_ref] = line
                while len(self._store_lines) > 4:  # problem order: few sets are active at once
                    self._store_lines.pop(next(iter(self._store_lines)))
            return line

    def _store(self, runner: RunnerPipe, req: JudgeRequest) -> None:
        resp = runner.request(self._store_line(req), timeout_s=STORE_BUDGET_S)
        if not resp.get("ok"):
            raise RunnerDied(f"storing tests failed: {resp.get('error', resp)}")
        runner.stored.add(req.tests_ref)

    def _ask(
        self, runner: RunnerPipe, req: JudgeRequest, sent: bool = False, ahead: _Ahead | None = None
    ) -> dict:
        """Judge by reference to the slot's test store: a problem's tests cross into a slot
        once, not once per candidate. A set the runner has dropped is sent again. Small inline
        requests are pipelined: the next one is sent before this one's answer is read."""
        if self._inline(req):
            if not sent:
                runner.send(req.wire())
            if ahead is not None:
                self._send_ahead(runner, req, ahead)
            return runner.receive(self._timeout(req))
        if req.tests_ref not in runner.stored:
            self._store(runner, req)
        resp = runner.request(req.wire(by_ref=True), timeout_s=self._timeout(req))
        if resp.get("missing_tests"):
            self._store(runner, req)
            resp = runner.request(req.wire(by_ref=True), timeout_s=self._timeout(req))
        return resp

    def _execute(
        self,
        task: _Task,
        runner: RunnerPipe | None,
        slot: int = -1,
        sent: bool = False,
        ahead: _Ahead | None = None,
    ) -> tuple[JudgeResult, RunnerPipe | None]:
        """Judge one task, retrying on a fresh slot. `sent`: its request is already in this
        runner's stdin (sent ahead). A runner closed here takes any request sent ahead to it
        with it: `ahead.runner` is cleared, so the worker sends that task again."""
        req = task.request
        total = len(req.tests)
        attempts = 0
        last_error = ""
        while attempts < self.max_attempts:
            if runner is None or not runner.alive:
                if runner is not None:
                    runner.close()
                runner = self._restart_slot(slot)
                self._live[slot] = runner
                if runner is None:
                    error = f"no sandbox slot could be started: {self._last_start_error}"
                    return self._system_error(task, error), None
            try:
                resp = self._ask(runner, req, sent=sent, ahead=ahead)
                sent = False  # a retry sends it again
                if not resp.get("ok"):
                    raise RunnerDied(resp.get("error", "runner error"))
                if resp.get("checker_error"):  # the problem's fault: no retry, no verdict
                    reason = resp["checker_error"]
                    return self._system_error(task, reason, checker_error=reason), runner
                tests = [TestResult(**t) for t in resp["tests"]]
                stopped = req.stop_at_timeout and bool(tests) and tests[-1].verdict == "TLE"
                if resp.get("compile_ok") and len(tests) < total and not stopped:
                    raise RunnerDied("runner could not clean up after a test")
            except RunnerDied as exc:
                attempts += 1
                sent = False
                last_error = str(exc)
                log.warning(
                    "sandbox attempt %d for candidate %d failed: %s", attempts, task.index, exc
                )
                runner.close()
                runner = None
                if ahead is not None:
                    ahead.runner = None
                continue
            if resp.get("healthy") is False:  # the runner exits after this answer
                runner.close()
                runner = None
                if ahead is not None:
                    ahead.runner = None
            result = JudgeResult.from_tests(
                tests,
                total,
                compile_ok=bool(resp.get("compile_ok")),
                compile_output=resp.get("compile_output") or None,
                compile_cached=bool(resp.get("compile_cached")),
                image=self._key_id,
                cache_key=task.key,
            )
            return result, runner
        return self._system_error(task, f"sandbox failed {attempts} times: {last_error}"), runner

    _last_start_error = ""

    def _restart_slot(self, slot: int = -1) -> RunnerPipe | None:
        """Start a fresh slot, waiting out a daemon restart (up to restart_timeout_s)."""
        deadline = time.monotonic() + self.restart_timeout_s
        delay = 0.5
        while True:
            try:
                return self._start_slot(slot)
            except StartFailed as exc:
                self._last_start_error = str(exc)
                if time.monotonic() + delay > deadline:
                    return None
                log.warning("sandbox slot start failed (retrying in %.1fs): %s", delay, exc)
                time.sleep(delay)
                delay = min(delay * 2, 5.0)


class Progress:
    """A rich progress bar that also counts verdicts."""

    def __init__(self, total: int | None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress

        self._counts: dict[str, int] = {}
        self._p = RichProgress(
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
