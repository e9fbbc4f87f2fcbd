"""Stage progress: ticks from a stage, through a task's progress file, to the flow's terminal
lines (stage, done/total, rate, ETA) and its UI artifact. Real threads and files; the
artifact is a recording object here (the flow tests check the real Prefect artifacts)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from flows.progress import (
    StageWatch,
    combine,
    fmt_duration,
    progress_file,
    read_progress,
    reporting,
)
from pipeline.common import progress


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class RecordedArtifact:
    """Stands in for flows.artifacts.Progress (which needs a Prefect server)."""

    def __init__(self) -> None:
        self.values: list[tuple[float, str]] = []

    def set(self, percent: float, note: str = "") -> None:
        self.values.append((percent, note))


def _logger() -> tuple[logging.Logger, Lines]:
    log = logging.getLogger(f"test-progress-{time.monotonic_ns()}")
    log.setLevel(logging.INFO)
    handler = Lines()
    log.addHandler(handler)
    return log, handler


def test_a_stage_without_a_listener_reports_nothing() -> None:
    t = progress.track("programs", 10)
    t.advance(3)
    assert not progress.active() and t.done == 0  # nothing counted, nothing sent


def test_the_listener_follows_the_context_not_other_threads() -> None:
    seen: list[tuple[str, int, int]] = []
    other: list[bool] = []
    with progress.listening(lambda t: seen.append((t.unit, t.done, t.total))):
        t = progress.track("steps", 4)
        t.advance()
        t.advance(2)
        worker = threading.Thread(target=lambda: other.append(progress.active()))
        worker.start()
        worker.join()
    assert seen == [("steps", 0, 4), ("steps", 1, 4), ("steps", 3, 4)]
    assert other == [False]  # a plain thread of another task does not inherit it


def test_progress_file_names() -> None:
    assert progress_file("w/judge/judged-0001-of-0002.parquet") == Path(
        "w/judge/judged-0001-of-0002.progress.json"
    )
    assert progress_file("w/sample/shard-0000") == Path("w/sample/shard-0000/progress.json")


def test_reporting_writes_the_counts_and_marks_the_end(tmp_path: Path) -> None:
    path = tmp_path / "shard.progress.json"
    path.write_text('{"units": {"programs": [99, 99]}, "finished": true}')  # a stale one
    with reporting(path):
        assert not path.exists()  # the stale file is gone before the stage starts
        t = progress.track("programs", 5)
        t.advance(2)
        first = read_progress(path, since=0)
        t.advance(3)
    last = read_progress(path, since=0)
    assert first == {"units": {"programs": [0, 5]}, "finished": False, "time": first["time"]}
    assert last is not None and last["units"] == {"programs": [5, 5]} and last["finished"]


def test_combine_estimates_the_shards_not_started() -> None:
    one = {"units": {"programs": [30, 100]}, "finished": False}
    snap = combine([one, None, None], shards=3)
    assert snap is not None
    assert (snap.done, snap.total, snap.unit) == (30, 300, "programs")  # 100 each, as shard 1
    two = {"units": {"programs": [100, 100]}, "finished": True}
    snap = combine([two, {"units": {"programs": [10, 80]}, "finished": False}, None], shards=3)
    assert snap is not None and (snap.done, snap.total, snap.shards_finished) == (110, 270, 1)
    assert combine([None, None], shards=2) is None


def test_fmt_duration() -> None:
    assert [fmt_duration(s) for s in (5, 65, 3700)] == ["5s", "1m05s", "1h01m"]


def test_stage_watch_prints_done_total_rate_and_eta(tmp_path: Path) -> None:
    """Two shards run one after the other, each ticking 20 programs over ~1 s: the watch's
    lines name the stage, the counts (shard 2's total estimated from shard 1's at first),
    a rate and an ETA, then one closing line; the artifact only moves forward to 100%."""
    files = [tmp_path / "s0.progress.json", tmp_path / "s1.progress.json"]
    log, lines = _logger()
    art = RecordedArtifact()

    def shard(path: Path) -> None:
        with reporting(path, every_s=0.05):
            t = progress.track("programs", 20)
            for _ in range(20):
                time.sleep(0.05)
                t.advance()

    with StageWatch(
        "judge", files, logger=log, artifact=art, log_every_s=0.3, artifact_every_s=0.2, poll_s=0.1
    ):
        for f in files:
            shard(f)
        time.sleep(0.3)
    progress_lines = [x for x in lines.lines if x.startswith("[progress] judge ")]
    assert len(progress_lines) >= 3, lines.lines
    mid = [x for x in progress_lines if "/40 programs" in x and "ETA" in x]
    assert mid, progress_lines  # "[progress] judge 12/40 programs, 0/2 shards done, 19.8/s, ETA 1s"
    assert any("0/2 shards done" in x for x in mid) and any("/s" in x for x in mid)
    assert progress_lines[-1].startswith("[progress] judge done: 40 programs in ")
    values = [v for v, _ in art.values]
    assert values == sorted(values) and values[-1] == 100.0 and len(values) >= 3
    assert "/40 programs" in art.values[0][1]


def test_stage_watch_is_silent_for_cached_shards(tmp_path: Path) -> None:
    """No task wrote a progress file (every shard answered from a cache): no lines."""
    log, lines = _logger()
    with StageWatch("sample", [tmp_path / "never.json"], logger=log, poll_s=0.05):
        time.sleep(0.2)
    assert lines.lines == []
