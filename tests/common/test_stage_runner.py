"""The stage runner (pipeline/common/runner.py) on toy stages with real Parquet files:
markers last, reuse, force, the atomic swap, chunk resume across a killed process, and
shard plan + merge byte-equal to the flows' write_shards / merge_shards whatever the
completion order.

Two cases kill a real child process with SIGKILL (the child imports this module by path
and runs `_child_*`), so nothing after the kill point can run, not even `finally`.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from pipeline.common import sharding as today
from pipeline.common.parquet import write_parquet
from pipeline.common.runner import (
    ChunkStore,
    StageResult,
    chunk_dir,
    marker_dir,
    merge_parts,
    plan_shards,
    run_cached,
    run_sharded_inline,
    run_stage,
)
from pipeline.common.stage import MARKER, Chunks, ShardContext, Sharding, Stage, Stats
from schemas.common import QUARANTINE_SCHEMA

REPO = Path(__file__).resolve().parents[2]
ROWS = pa.schema(
    [
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("value", pa.int64(), nullable=False),
    ]
)
CHUNK_ROWS = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("value", pa.int64(), nullable=False),
    ]
)


class ToyConfig(BaseModel):
    factor: int = 2
    progress: bool = False  # the default `key` leaves it out


def write_rows(path: Path, rows: list[tuple[str, int]]) -> Path:
    table = pa.Table.from_pylist([{"problem_id": p, "value": v} for p, v in rows], schema=ROWS)
    return write_parquet(table, path, ROWS)


def read_rows(path: Path) -> list[tuple[str, int]]:
    return [(r["problem_id"], r["value"]) for r in pq.read_table(path).to_pylist()]


def input_rows(problems: int = 12, per: int = 3) -> list[tuple[str, int]]:
    """`per` rows for each problem, interleaved, so a stable sort has ties to keep in order."""
    return [(f"p{i:03d}", 100 * i + j) for j in range(per) for i in range(problems)]


# ---------------------------------------------------------------------- toy stages
def doubling_stage(
    calls: list[Any],
    *,
    crash: bool = False,
    atomic: bool = False,
    marker: str = MARKER,
    name: str = "double",
) -> Stage[ToyConfig]:
    """A folder-output stage: `doubled.parquet` (value * factor) and, only when some value is
    odd, `odd.parquet` (an optional output, like a quarantine). `crash` writes half the
    rows and raises; `calls` records each run's ctx."""

    def run(ctx: ShardContext[ToyConfig]) -> Stats:
        calls.append(ctx)
        # Marker last: no marker may be visible under the output while it is being rebuilt.
        assert not (marker_dir(ctx.out) / marker).exists()
        rows = read_rows(Path(ctx.inputs["rows"]))
        ctx.out.mkdir(parents=True, exist_ok=True)
        doubled = [(p, v * ctx.config.factor) for p, v in rows]
        if crash:
            write_rows(ctx.out / "doubled.parquet", doubled[: len(doubled) // 2])
            raise RuntimeError("killed mid-stage")
        write_rows(ctx.out / "doubled.parquet", doubled)
        odd = [(p, v) for p, v in rows if v % 2]
        if odd:
            write_rows(ctx.out / "odd.parquet", odd)
        return {"rows": len(doubled), "odd": len(odd)}

    return Stage(
        name=name,
        version="1",
        config=ToyConfig,
        inputs=("rows",),
        outputs=lambda c, out: {"doubled": out / "doubled.parquet", "odd": out / "odd.parquet"},
        run=run,
        optional_outputs=frozenset({"odd"}),
        marker=marker,
        atomic=atomic,
    )


@pytest.fixture
def rows_file(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "in" / "rows.parquet", [("a", 2), ("b", 4), ("c", 6)])


# ---------------------------------------------------------------------- marker and reuse
def test_marker_is_written_last_and_a_failed_run_leaves_none(tmp_path: Path, rows_file: Path):
    out = tmp_path / "out"
    calls: list[Any] = []
    with pytest.raises(RuntimeError, match="killed mid-stage"):
        run_stage(doubling_stage(calls, crash=True), ToyConfig(), {"rows": rows_file}, out)
    assert (out / "doubled.parquet").exists()  # half written ...
    assert not (out / MARKER).exists()  # ... and not vouched for

    first = run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out)
    assert len(calls) == 2 and not first.cached
    assert read_rows(out / "doubled.parquet") == [("a", 4), ("b", 8), ("c", 12)]
    marker = json.loads((out / MARKER).read_text())
    assert marker["stage"] == "double" and marker["stats"] == {"rows": 3, "odd": 0}

    again = run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out)
    assert len(calls) == 2 and again.cached
    assert again.stats == first.stats and again.digest == first.digest
    assert again.outputs == {
        "doubled": str(out / "doubled.parquet"),
        "odd": str(out / "odd.parquet"),
    }


def test_a_failed_rerun_removes_the_old_marker_before_rewriting(tmp_path: Path, rows_file: Path):
    """An old marker must not vouch for outputs a later (forced) run half rewrote."""
    out = tmp_path / "out"
    run_stage(doubling_stage([]), ToyConfig(), {"rows": rows_file}, out)
    assert (out / MARKER).exists()
    with pytest.raises(RuntimeError):
        run_stage(doubling_stage([], crash=True), ToyConfig(), {"rows": rows_file}, out, force=True)
    assert not (out / MARKER).exists()
    calls: list[Any] = []
    run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out)
    assert len(calls) == 1 and len(read_rows(out / "doubled.parquet")) == 3


def test_reuse_needs_a_matching_key_and_existing_outputs(tmp_path: Path, rows_file: Path):
    out = tmp_path / "out"
    calls: list[Any] = []

    def run(config: ToyConfig | None = None) -> StageResult:
        config = config or ToyConfig()
        return run_stage(doubling_stage(calls), config, {"rows": rows_file}, out)

    assert not run().cached and len(calls) == 1
    # `progress` is excluded from the key; the optional output was never written.
    assert not (out / "odd.parquet").exists()
    assert run(ToyConfig(progress=True)).cached and len(calls) == 1
    # Another config value: another key.
    assert not run(ToyConfig(factor=3)).cached and len(calls) == 2
    assert read_rows(out / "doubled.parquet")[0] == ("a", 6)
    assert run(ToyConfig(factor=3)).cached and len(calls) == 2
    # The key matches but a required output is gone: run again.
    (out / "doubled.parquet").unlink()
    assert not run(ToyConfig(factor=3)).cached and len(calls) == 3
    # Other input content, same path: another key.
    write_rows(rows_file, [("a", 1), ("b", 4)])
    result = run(ToyConfig(factor=3))
    assert not result.cached and len(calls) == 4
    assert result.stats == {"rows": 2, "odd": 1} and read_rows(out / "odd.parquet") == [("a", 1)]


def test_force_runs_even_when_the_marker_matches(tmp_path: Path, rows_file: Path):
    out = tmp_path / "out"
    calls: list[Any] = []
    run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out)
    assert run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out).cached
    forced = run_stage(doubling_stage(calls), ToyConfig(), {"rows": rows_file}, out, force=True)
    assert not forced.cached and len(calls) == 2
    assert (out / MARKER).exists()


def test_a_custom_marker_name(tmp_path: Path, rows_file: Path):
    out = tmp_path / "fit"
    calls: list[Any] = []
    stage = doubling_stage(calls, marker="fit.json")
    run_stage(stage, ToyConfig(), {"rows": rows_file}, out)
    assert (out / "fit.json").exists() and not (out / MARKER).exists()
    assert json.loads((out / "fit.json").read_text())["stats"]["rows"] == 3
    assert run_stage(stage, ToyConfig(), {"rows": rows_file}, out).cached and len(calls) == 1


def test_wrong_config_or_missing_input_is_named(tmp_path: Path, rows_file: Path):
    class Other(BaseModel):
        factor: int = 2

    with pytest.raises(TypeError, match="stage double: config is a Other, not the ToyConfig"):
        run_stage(doubling_stage([]), Other(), {"rows": rows_file}, tmp_path / "o")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"input\(s\) \['rows'\] not given"):
        run_stage(doubling_stage([]), ToyConfig(), {}, tmp_path / "o")


# ---------------------------------------------------------------------- file-form output
def file_stage(calls: list[Any], *, atomic: bool = False, crash: bool = False) -> Stage[ToyConfig]:
    def run(ctx: ShardContext[ToyConfig]) -> Stats:
        calls.append(ctx.out)
        rows = [(p, v * ctx.config.factor) for p, v in read_rows(Path(ctx.inputs["rows"]))]
        write_rows(ctx.out, rows)
        if crash:
            raise RuntimeError("killed after writing")
        return {"rows": len(rows)}

    return Stage(
        name="judge-toy",
        version="1",
        config=ToyConfig,
        inputs=("rows",),
        outputs=lambda c, out: {"judged": out},
        run=run,
        atomic=atomic,
    )


def test_a_file_output_keeps_its_marker_in_a_stage_folder_beside_it(
    tmp_path: Path, rows_file: Path
):
    out = tmp_path / "work" / "judged.parquet"
    calls: list[Any] = []
    result = run_stage(file_stage(calls), ToyConfig(), {"rows": rows_file}, out)
    assert calls == [out] and result.outputs == {"judged": str(out)}
    assert sorted(p.name for p in out.parent.iterdir()) == [".judged.stage", "judged.parquet"]
    assert json.loads((out.parent / ".judged.stage" / MARKER).read_text())["stats"] == {"rows": 3}
    assert run_stage(file_stage(calls), ToyConfig(), {"rows": rows_file}, out).cached
    out.unlink()  # the marker alone does not make the stage done
    assert not run_stage(file_stage(calls), ToyConfig(), {"rows": rows_file}, out).cached
    assert len(calls) == 2


def test_an_atomic_file_output_is_swapped_by_one_rename(tmp_path: Path, rows_file: Path):
    out = tmp_path / "work" / "judged.parquet"
    calls: list[Any] = []
    run_stage(file_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out)
    assert calls == [out.with_name(".judged.building.parquet")]
    before = out.read_bytes()
    with pytest.raises(RuntimeError, match="killed after writing"):
        run_stage(
            file_stage(calls, atomic=True, crash=True),
            ToyConfig(factor=7),
            {"rows": rows_file},
            out,
        )
    assert out.read_bytes() == before  # the new rows were written, but never swapped in
    assert sorted(p.name for p in out.parent.iterdir()) == [".judged.stage", "judged.parquet"]
    assert run_stage(file_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out).cached


def test_an_atomic_file_stage_may_not_write_beside_its_file(tmp_path: Path, rows_file: Path):
    stage = sharded_stage([])  # its parts write a quarantine beside the file
    atomic = Stage(**{**stage.__dict__, "atomic": True, "sharding": None})
    with pytest.raises(ValueError, match=r"also writes \['quarantine'\]; make its primary"):
        run_stage(
            atomic, ToyConfig(), {"rows": rows_file, "lookup": rows_file}, tmp_path / "j.parquet"
        )


# ---------------------------------------------------------------------- sub-steps, resources
def test_a_sub_step_keeps_its_own_marker_and_is_reused_after_a_crash(tmp_path: Path):
    done: list[str] = []
    out = tmp_path / "rounds"

    def stage(crash_in: str | None) -> Stage[ToyConfig]:
        def run(ctx: ShardContext[ToyConfig]) -> Stats:
            stats = {}
            for r in ("round-1", "round-2"):

                def one(r: str = r) -> Stats:
                    if r == crash_in:
                        raise RuntimeError(f"crash in {r}")
                    done.append(r)
                    (ctx.out / r).mkdir(parents=True, exist_ok=True)
                    (ctx.out / r / "rows.txt").write_text(r)
                    return {"round": r}

                stats[r] = ctx.step(r, "1", {"factor": ctx.config.factor}, [], ctx.out / r, one)
            return stats

        return Stage(
            name="rounds",
            version="1",
            config=ToyConfig,
            inputs=(),
            outputs=lambda c, out: {"r2": out / "round-2" / "rows.txt"},
            run=run,
        )

    with pytest.raises(RuntimeError, match="crash in round-2"):
        run_stage(stage("round-2"), ToyConfig(), {}, out)
    assert done == ["round-1"] and (out / "round-1" / MARKER).exists()
    assert not (out / MARKER).exists()
    result = run_stage(stage(None), ToyConfig(), {}, out)
    assert done == ["round-1", "round-2"]  # round 1 reused, not redone
    assert result.stats == {"round-1": {"round": "round-1"}, "round-2": {"round": "round-2"}}


def test_run_cached_reuses_only_with_its_outputs(tmp_path: Path):
    ran: list[int] = []
    out, extra = tmp_path / "o", tmp_path / "o" / "x.txt"

    def fn() -> Stats:
        ran.append(1)
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text("x")
        return {"n": len(ran)}

    assert run_cached("s", "1", {"k": 1}, [], out, fn, outputs=[extra]) == {"n": 1}
    assert run_cached("s", "1", {"k": 1}, [], out, fn, outputs=[extra]) == {"n": 1}
    extra.unlink()
    assert run_cached("s", "1", {"k": 1}, [], out, fn, outputs=[extra]) == {"n": 2}
    assert run_cached("s", "1", {"k": 2}, [], out, fn, outputs=[extra]) == {"n": 3}
    assert run_cached("s", "1", {"k": 2}, [], out, fn, seed=7, outputs=[extra]) == {"n": 4}


def test_resources_close_with_the_run_whether_it_returns_or_raises(tmp_path: Path):
    closed: list[str] = []

    def stage(fail: bool) -> Stage[ToyConfig]:
        def run(ctx: ShardContext[ToyConfig]) -> Stats:
            before = len(closed)
            ctx.resources.callback(closed.append, "engine")
            assert len(closed) == before  # open while run() runs
            if fail:
                raise RuntimeError("boom")
            ctx.out.mkdir(parents=True)
            return {}

        return Stage("res", "1", ToyConfig, (), lambda c, o: {}, run)

    with pytest.raises(RuntimeError):
        run_stage(stage(True), ToyConfig(), {}, tmp_path / "a")
    assert closed == ["engine"]
    run_stage(stage(False), ToyConfig(), {}, tmp_path / "b")
    assert closed == ["engine", "engine"]


# ---------------------------------------------------------------------- atomic swap
def test_an_atomic_stage_never_shows_a_half_written_output(tmp_path: Path, rows_file: Path):
    out = tmp_path / "model"
    calls: list[Any] = []
    run_stage(doubling_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out)
    assert calls[0].out != out  # built in a sibling
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "model"]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"doubled.parquet", MARKER}

    with pytest.raises(RuntimeError, match="killed mid-stage"):
        run_stage(
            doubling_stage(calls, crash=True, atomic=True),
            ToyConfig(factor=5),
            {"rows": rows_file},
            out,
        )
    # The old output and its marker, whole; no half-built sibling left behind.
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "model"]
    assert run_stage(
        doubling_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out
    ).cached

    new = run_stage(
        doubling_stage(calls, atomic=True), ToyConfig(factor=5), {"rows": rows_file}, out
    )
    assert not new.cached and read_rows(out / "doubled.parquet")[0] == ("a", 10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "model"]


def test_an_interrupted_swap_gets_the_finished_output_back(tmp_path: Path, rows_file: Path):
    """A crash between the swap's two renames leaves the old folder aside: the next run puts
    it back and reuses it."""
    out = tmp_path / "model"
    calls: list[Any] = []
    run_stage(doubling_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out)
    out.rename(tmp_path / ".model.previous")  # what the crash leaves
    (tmp_path / ".model.building").mkdir()  # and a half-built sibling
    again = run_stage(doubling_stage(calls, atomic=True), ToyConfig(), {"rows": rows_file}, out)
    assert again.cached and len(calls) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "model"]


# ---------------------------------------------------------------------- killed processes
def _spawn(child: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `child` (a function of this module) in a fresh interpreter."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_stage_runner as t; "
        f"t.{child}(*sys.argv[2:])"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent), *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def sharded_stage(
    ran: list[int], kill_at: int | None = None, merge: bool = True
) -> Stage[ToyConfig]:
    """A sharded stage with a file-form part (`part-IIII-of-NNNN.parquet`, its marker beside
    it) and a quarantine written only when a shard has odd values."""

    def run(ctx: ShardContext[ToyConfig]) -> Stats:
        i, _ = ctx.shard
        if i == kill_at:
            _kill_self()
        ran.append(i)
        rows = read_rows(Path(ctx.inputs["rows"]))
        write_rows(ctx.out, [(p, v * ctx.config.factor) for p, v in rows])
        odd = [
            {
                "stage": "toyjudge",
                "source": "toy",
                "source_row_id": f"{p}:{v}",
                "field": "value",
                "reason": "odd value",
                "raw": None,
            }
            for p, v in rows
            if v % 2
        ]
        if odd:
            write_parquet(
                pa.Table.from_pylist(odd, schema=QUARANTINE_SCHEMA),
                quarantine(ctx.out),
                QUARANTINE_SCHEMA,
            )
        return {"rows": len(rows)}

    return Stage(
        name="toyjudge",
        version="1",
        config=ToyConfig,
        inputs=("rows", "lookup"),
        outputs=lambda c, out: {"judged": out, "quarantine": quarantine(out)},
        run=run,
        optional_outputs=frozenset({"quarantine"}),
        sharding=Sharding(
            inputs=("rows",),
            schema=ROWS,
            count=lambda runner: runner.judge_shards,
            placement="judge",
            merge={"judged": ROWS} if merge else None,
            quarantines=("quarantine",) if merge else (),
            stem="candidates",
            part=lambda i, n: f"judged-{i:04d}-of-{n:04d}.parquet",
        ),
    )


def quarantine(out: Path) -> Path:
    return out.with_name(f"{out.stem}.quarantine.parquet")


def _child_sharded(work: str) -> None:
    w = Path(work)
    run_sharded_inline(
        sharded_stage([], kill_at=1),
        ToyConfig(),
        {"rows": w / "rows.parquet", "lookup": w / "lookup.parquet"},
        w / "judged.parquet",
        n=3,
    )


def test_a_killed_sharded_run_is_redone_only_where_unfinished(tmp_path: Path):
    write_rows(tmp_path / "rows.parquet", input_rows(30))
    write_rows(tmp_path / "lookup.parquet", [("x", 1)])
    child = _spawn("_child_sharded", str(tmp_path))
    assert child.returncode == -signal.SIGKILL, child.stderr
    folder = tmp_path / "toyjudge"
    assert (folder / ".judged-0000-of-0003.stage" / MARKER).exists()  # shard 0 finished
    assert not (folder / ".judged-0001-of-0003.stage").exists()  # killed in shard 1
    assert not (folder / "judged-0002-of-0003.parquet").exists()
    assert not (tmp_path / "judged.parquet").exists()

    ran: list[int] = []
    inputs = {"rows": tmp_path / "rows.parquet", "lookup": tmp_path / "lookup.parquet"}
    result = run_sharded_inline(
        sharded_stage(ran), ToyConfig(), inputs, tmp_path / "judged.parquet", n=3
    )
    assert ran == [1, 2]  # shard 0 reused
    assert [p["rows"] for p in result.stats["parts"]] == [
        len(read_rows(folder / "shards" / f"candidates-{i:04d}-of-0003.parquet")) for i in range(3)
    ]
    merged = read_rows(tmp_path / "judged.parquet")
    expected = sorted(((p, 2 * v) for p, v in input_rows(30)), key=lambda r: r[0])
    assert sorted(merged) == sorted(expected) and [p for p, _ in merged] == [p for p, _ in expected]


CHUNK = 2  # keys per chunk in the chunked toy stage


def chunked_stage(computed: list[str], kill_after: int | None = None) -> Stage[ToyConfig]:
    """Computes a value per row key, CHUNK keys at a time, saving each chunk through
    ctx.chunks; `kill_after` chunks saved in this run, the process kills itself."""

    def run(ctx: ShardContext[ToyConfig]) -> Stats:
        assert ctx.chunks is not None
        done = {r["key"]: r for r in ctx.chunks.load()}
        rows = read_rows(Path(ctx.inputs["rows"]))
        keyed = {f"{p}:{v}": (p, v) for p, v in rows}
        todo = [k for k in sorted(keyed) if k not in done]
        for n, start in enumerate(range(0, len(todo), CHUNK)):
            if n == kill_after:
                _kill_self()
            fresh = []
            for k in todo[start : start + CHUNK]:
                computed.append(k)
                p, v = keyed[k]
                fresh.append({"key": k, "problem_id": p, "value": v * ctx.config.factor})
            ctx.chunks.save(fresh)
            done.update({r["key"]: r for r in fresh})
        write_rows(ctx.out, [(done[k]["problem_id"], done[k]["value"]) for k in keyed])
        return {"rows": len(keyed), "resumed": len(keyed) - len(todo)}

    return Stage(
        name="chunky",
        version="1",
        config=ToyConfig,
        inputs=("rows",),
        outputs=lambda c, out: {"out": out},
        run=run,
        chunks=Chunks(schema=CHUNK_ROWS, key="key"),
    )


def _child_chunks(work: str, kill_after: str) -> None:
    w = Path(work)
    stage = chunked_stage([], kill_after=int(kill_after))
    run_stage(stage, ToyConfig(), {"rows": w / "rows.parquet"}, w / "out.parquet")


def test_chunk_store_resumes_across_a_killed_process(tmp_path: Path):
    rows = input_rows(5, 2)  # 10 keys: 5 chunks
    write_rows(tmp_path / "rows.parquet", rows)
    out = tmp_path / "out.parquet"
    child = _spawn("_child_chunks", str(tmp_path), "2")
    assert child.returncode == -signal.SIGKILL, child.stderr
    parts = sorted(chunk_dir(out).glob("chunk-*.parquet"))
    assert len(parts) == 2 and not out.exists() and not marker_dir(out).exists()

    computed: list[str] = []
    result = run_stage(
        chunked_stage(computed), ToyConfig(), {"rows": tmp_path / "rows.parquet"}, out
    )
    keys = sorted(f"{p}:{v}" for p, v in rows)
    assert computed == keys[2 * CHUNK :]  # only what the killed run had not saved
    assert result.stats == {"rows": 10, "resumed": 2 * CHUNK}
    assert read_rows(out) == [(p, 2 * v) for p, v in rows]
    assert not chunk_dir(out).exists()  # cleared once the marker is written
    assert (marker_dir(out) / MARKER).exists()


def test_a_chunk_of_an_older_schema_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    store = ChunkStore(tmp_path / ".out.parquet.parts", CHUNK_ROWS, "key")
    store.save([{"key": "a:1", "problem_id": "a", "value": 2}])
    old = pa.schema([pa.field("key", pa.string()), pa.field("value", pa.int64())])
    write_parquet(
        pa.Table.from_pylist([{"key": "b:1", "value": 9}], schema=old),
        store.folder / "chunk-old.parquet",
    )
    with caplog.at_level(logging.WARNING, logger="pipeline.common.runner"):
        loaded = store.load()
    assert loaded == [{"key": "a:1", "problem_id": "a", "value": 2}]
    assert "chunk-old.parquet: computed again" in caplog.text and "problem_id" in caplog.text
    # Saving the same keys again names the same chunk; clear leaves nothing behind.
    store.save([{"key": "a:1", "problem_id": "a", "value": 2}])
    assert len(store.files()) == 2
    store.clear()
    assert store.files() == [] and (store.folder / "chunk-old.parquet").exists() is False


# ---------------------------------------------------------------------- plan + merge
def test_plan_and_merge_equal_todays_sharding_bytes_whatever_the_completion_order(
    tmp_path: Path,
):
    rows = input_rows(40, 3)
    src = write_rows(tmp_path / "rows.parquet", rows)
    lookup = write_rows(tmp_path / "lookup.parquet", [("x", 1)])
    stage = sharded_stage([])
    out = tmp_path / "work" / "judged.parquet"
    calls = plan_shards(stage, ToyConfig(), {"rows": src, "lookup": lookup}, out, 4)
    assert [c.shard for c in calls] == [(i, 4) for i in range(4)]
    assert [c.out.name for c in calls] == [f"judged-{i:04d}-of-0004.parquet" for i in range(4)]
    assert all(c.inputs["lookup"] == lookup for c in calls)

    # Today's shard files, byte for byte.
    ref = tmp_path / "ref"
    ref_shards = today.write_shards([src], 4, ref / "shards", "candidates", ROWS)
    assert [Path(c.inputs["rows"]).read_bytes() for c in calls] == [
        p.read_bytes() for p in ref_shards
    ]

    results = [c.run() for c in reversed(calls)]  # finished last to first
    merged = merge_parts(stage, ToyConfig(), out, results)
    assert merged.outputs == {"judged": str(out), "quarantine": str(quarantine(out))}
    assert [p["rows"] for p in merged.stats["parts"]] == [
        len(read_rows(Path(c.inputs["rows"]))) for c in calls
    ]

    # Today's merge (flows/build.py: merge_shards(sorted(parts)), merge_quarantines) of the
    # same parts: the same bytes.
    parts = sorted(c.out for c in calls)
    today.merge_shards(parts, ref / "judged.parquet", ROWS)
    today.merge_quarantines([quarantine(p) for p in parts], ref / "judged.quarantine.parquet")
    assert out.read_bytes() == (ref / "judged.parquet").read_bytes()
    assert quarantine(out).read_bytes() == (ref / "judged.quarantine.parquet").read_bytes()
    assert merged.stats["quarantine_rows"] == sum(1 for _, v in rows if v % 2)

    # Worked out without either merge: rows by problem_id, ties in input order.
    assert read_rows(out) == sorted(((p, 2 * v) for p, v in rows), key=lambda r: r[0])

    # Any order of the same parts merges to the same bytes.
    first = out.read_bytes()
    for order in ([2, 0, 3, 1], [3, 2, 1, 0]):
        out.unlink()
        merge_parts(stage, ToyConfig(), out, [results[3 - i] for i in order])
        assert out.read_bytes() == first


def test_merge_needs_every_shard_exactly_once(tmp_path: Path):
    src = write_rows(tmp_path / "rows.parquet", input_rows(10))
    lookup = write_rows(tmp_path / "lookup.parquet", [("x", 1)])
    stage = sharded_stage([])
    out = tmp_path / "judged.parquet"
    results = [
        c.run() for c in plan_shards(stage, ToyConfig(), {"rows": src, "lookup": lookup}, out, 3)
    ]
    with pytest.raises(ValueError, match=r"cannot merge parts \[\(0, 3\), \(2, 3\)\]"):
        merge_parts(stage, ToyConfig(), out, [results[0], results[2]])
    with pytest.raises(ValueError, match="each shard 0..n-1 of n exactly once"):
        merge_parts(stage, ToyConfig(), out, [*results, results[1]])


def test_a_gathered_stage_hands_its_parts_on_in_shard_order(tmp_path: Path):
    src = write_rows(tmp_path / "rows.parquet", input_rows(20))
    lookup = write_rows(tmp_path / "lookup.parquet", [("x", 1)])
    ran: list[int] = []
    stage = sharded_stage(ran, merge=False)
    out = tmp_path / "judged.parquet"
    calls = plan_shards(stage, ToyConfig(), {"rows": src, "lookup": lookup}, out, 3)
    gathered = merge_parts(stage, ToyConfig(), out, [c.run() for c in reversed(calls)])
    assert ran == [2, 1, 0]
    assert [r.shard for r in gathered.parts] == [(0, 3), (1, 3), (2, 3)]
    assert gathered.gathered("judged") == [c.out for c in calls]
    assert not out.exists() and gathered.outputs == {}
    again = run_sharded_inline(stage, ToyConfig(), {"rows": src, "lookup": lookup}, out, n=3)
    assert again.cached and again.digest == gathered.digest and ran == [2, 1, 0]


def test_plan_shards_refuses_an_unsharded_stage(tmp_path: Path, rows_file: Path):
    with pytest.raises(ValueError, match="stage double is not sharded"):
        plan_shards(doubling_stage([]), ToyConfig(), {"rows": rows_file}, tmp_path / "o", 2)


def test_a_sharded_input_must_be_a_stage_input():
    with pytest.raises(ValueError, match=r"sharded input\(s\) \['nope'\]"):
        Stage(
            "bad",
            "1",
            ToyConfig,
            ("rows",),
            lambda c, o: {},
            lambda ctx: {},
            sharding=Sharding(("nope",), ROWS, lambda r: 1, "judge", None),
        )
