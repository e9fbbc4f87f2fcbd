"""Progress of a flow's long stages, fed by the stages' own ticks (pipeline/common/progress.py):
one readable line in the terminal every few seconds and a Prefect progress artifact.

Two halves, so it works wherever a shard runs (a thread here, a Ray worker elsewhere):

- in the task, `reporting(path)` listens to the stage and writes its counts to a small
  JSON file beside the shard's output (at most once a second, atomically);
- in the flow, `StageWatch` reads the files of a stage's shards every second, and logs
  `[progress] judge 312/840 programs, 0/2 shards done, 5.2/s, ETA 1m41s` (every
  `log_every_s`, and once at the end) and updates the stage's progress artifact (every
  `artifact_every_s`).

Shards not started yet count as the mean size of those that have (shards are cut by
problem, so they are alike); a shard answered from a cache writes nothing and counts
as done. The lines carry no carriage returns or colours, so a log file reads as the
terminal did.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pipeline.common import progress as stage_progress
from pipeline.common.progress import PROGRESS_SUFFIX, Tracker, progress_file

__all__ = ["PROGRESS_SUFFIX", "progress_file"]


# --- the task half ----------------------------------------------------------------------


class ProgressFile:
    """A stage listener writing {unit: [done, total]} to `path`, at most every `every_s`."""

    def __init__(self, path: Path, every_s: float = 1.0) -> None:
        self.path, self.every_s = path, every_s
        self._trackers: dict[int, Tracker] = {}
        self._lock = threading.Lock()
        self._last = 0.0

    def __call__(self, tracker: Tracker) -> None:
        with self._lock:
            self._trackers[id(tracker)] = tracker
            now = time.monotonic()
            if now - self._last >= self.every_s:
                self._last = now
                self._write(finished=False)

    def _write(self, finished: bool) -> None:
        units: dict[str, list[int]] = {}
        for t in self._trackers.values():
            done, total = units.setdefault(t.unit, [0, 0])
            units[t.unit] = [done + t.done, total + t.total]
        body = json.dumps({"units": units, "finished": finished, "time": time.time()})
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(body)
            tmp.replace(self.path)
        except OSError:  # progress is best effort: never fail a stage for it
            pass

    def close(self) -> None:
        with self._lock:
            if self._trackers:
                self._write(finished=True)


@contextlib.contextmanager
def reporting(path: str | Path, every_s: float = 1.0) -> Iterator[None]:
    """Run a stage inside this block to have its progress written to `path` (at most
    every `every_s`, and once at the end)."""
    sink = ProgressFile(Path(path), every_s)
    Path(path).unlink(missing_ok=True)  # a killed run's leftovers are not this run's
    with stage_progress.listening(sink):
        try:
            yield
        finally:
            sink.close()


# --- the flow half ----------------------------------------------------------------------


def fmt_duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def read_progress(path: Path, since: float) -> dict[str, Any] | None:
    """A task's progress file, if written since `since` (epoch seconds)."""
    try:
        if path.stat().st_mtime < since - 1:
            return None
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


@dataclass
class Snapshot:
    """A stage's progress summed over its shards."""

    done: int
    total: int  # estimated: shards not started count as the mean of those that did
    unit: str
    shards_started: int
    shards_finished: int


def combine(reports: Sequence[dict[str, Any] | None], shards: int) -> Snapshot | None:
    seen = [r for r in reports if r]
    if not seen:
        return None
    done = total = 0
    units: list[str] = []
    for r in seen:
        for unit, (d, t) in r["units"].items():
            done, total = done + d, total + t
            if unit not in units:
                units.append(unit)
    unstarted = max(0, shards - len(seen))
    estimate = total + round(unstarted * total / len(seen))
    return Snapshot(
        done=done,
        total=max(estimate, done),
        unit=units[0] if len(units) == 1 else "items",
        shards_started=len(seen),
        shards_finished=sum(1 for r in seen if r.get("finished")),
    )


@dataclass
class Rate:
    """Items per second over the last `window_s` seconds of observations."""

    window_s: float = 30.0
    points: list[tuple[float, int]] = field(default_factory=list)

    def add(self, t: float, done: int) -> None:
        self.points.append((t, done))
        while len(self.points) > 2 and t - self.points[1][0] > self.window_s:
            self.points.pop(0)

    def per_s(self) -> float | None:
        if len(self.points) < 2:
            return None
        (t0, d0), (t1, d1) = self.points[0], self.points[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 and d1 > d0 else None


def progress_line(
    stage: str, snap: Snapshot, shards: int, rate: float | None, part: str = "shard"
) -> str:
    parts = [f"[progress] {stage} {snap.done}/{snap.total} {snap.unit}"]
    if shards > 1:
        parts.append(f"{snap.shards_finished}/{shards} {part}s done")
    if rate:
        parts.append(f"{rate:.1f}/s" if rate >= 1 else f"{60 * rate:.1f}/min")
        parts.append(f"ETA {fmt_duration(max(0, snap.total - snap.done) / rate)}")
    return ", ".join(parts)


class StageWatch:
    """Watch a stage's progress files while its tasks run (a thread of the flow process)."""

    def __init__(
        self,
        stage: str,
        files: Sequence[Path],
        *,
        logger: logging.Logger | logging.LoggerAdapter | None = None,
        artifact: Any = None,
        part: str = "shard",
        log_every_s: float = 10.0,
        artifact_every_s: float = 2.0,
        poll_s: float = 1.0,
    ) -> None:
        self.stage, self.files = stage, list(files)
        self.logger = logger or logging.getLogger("aletheia.progress")
        self.artifact = artifact  # a flows.artifacts.Progress, or None
        self.part = part  # what one of `files` is: "shard", "fit"
        self.log_every_s, self.artifact_every_s, self.poll_s = (
            log_every_s,
            artifact_every_s,
            poll_s,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._since = time.time()
        self._t0 = time.monotonic()
        self.rate = Rate()
        self.last: Snapshot | None = None
        self._logged_at = -1e9
        self._logged_done = -1
        self._artifact_at = -1e9
        self._artifact_value = -1.0

    def snapshot(self) -> Snapshot | None:
        return combine([read_progress(f, self._since) for f in self.files], len(self.files))

    def tick(self, final: bool = False) -> None:
        snap = self.snapshot()
        if snap is None:
            return
        now = time.monotonic()
        self.rate.add(now, snap.done)
        self.last = snap
        since = now - self._logged_at
        moved = snap.done != self._logged_done
        # a line when the count moved, else a heartbeat now and then: a log stays short
        if not final and since >= self.log_every_s and (moved or since >= 6 * self.log_every_s):
            self._logged_at, self._logged_done = now, snap.done
            self.logger.info(
                progress_line(self.stage, snap, len(self.files), self.rate.per_s(), self.part)
            )
        if self.artifact is not None and (
            final or now - self._artifact_at >= self.artifact_every_s
        ):
            value = 100.0 * snap.done / snap.total if snap.total else 0.0
            if value != self._artifact_value:
                self._artifact_at, self._artifact_value = now, value
                note = f"{snap.done}/{snap.total} {snap.unit}"
                rate = self.rate.per_s()
                if rate and snap.total > snap.done:
                    note += f", ETA {fmt_duration((snap.total - snap.done) / rate)}"
                with contextlib.suppress(Exception):  # the UI is best effort
                    self.artifact.set(value, note)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                self.tick()
            except Exception:  # progress must never break a build
                self.logger.debug("progress watch failed", exc_info=True)

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="stage-watch")
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            self.tick(final=True)
        if exc_type is None and self.last is not None and self.last.done:
            elapsed = time.monotonic() - self._t0
            self.logger.info(
                f"[progress] {self.stage} done: {self.last.done} {self.last.unit} in "
                f"{fmt_duration(elapsed)} ({self.last.done / max(elapsed, 1e-9):.1f}/s)"
            )


def watch(
    progress: Any,
    title: str,
    files: list[Path],
    artifact: Any = None,
    enabled: bool = True,
    part: str = "shard",
) -> contextlib.AbstractContextManager:
    """Terminal lines and the UI artifact (a flows.artifacts.Progress) for a stage whose tasks
    write `files`, in a flow run; `progress`: the run config's ProgressSection."""
    if not (enabled and progress.enabled):
        return contextlib.nullcontext()
    from prefect import get_run_logger

    return StageWatch(
        title,
        files,
        logger=get_run_logger(),
        artifact=artifact,
        part=part,
        log_every_s=progress.log_every_s,
        artifact_every_s=progress.artifact_every_s,
    )
