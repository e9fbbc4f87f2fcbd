"""The one shard fan-out (flows/fanout.py): it exists once, and it runs any sharded stage.

The toy stage here is a real `Stage` value (Parquet in, Parquet out, its own markers) run by
the real runner inside real Prefect tasks on the ephemeral test server; only its work is a
toy (values times a factor, with a delay that makes shard 0 finish last)."""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.stage import ShardContext, Sharding, Stage, Stats
from tests.common.test_stage_runner import ROWS, ToyConfig, input_rows, read_rows, write_rows
from tests.flows.flows_helpers import REPO

# Called from one module each: the shard plan's writer (the runner's plan_shards), the
# bounded submit and the index-order merge (the fan-out; the runner's own no-Prefect path
# `run_sharded_inline`, in the module that defines merge_parts, aside).
FAN_OUT_CALLS = {
    "write_shards": "pipeline/common/runner.py",
    "bounded": "flows/fanout.py",
    "merge_parts": "flows/fanout.py",
    "plan_shards": "flows/fanout.py",
}
DEFINED_IN = {
    "write_shards": "pipeline/common/sharding.py",
    "bounded": "flows/runners.py",
    "merge_parts": "pipeline/common/runner.py",
    "plan_shards": "pipeline/common/runner.py",
}


def _callers(name: str) -> set[str]:
    found = set()
    for root in ("flows", "pipeline", "aletheia", "scripts"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call):
                    f = node.func
                    called = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                    if called == name:
                        found.add(path.relative_to(REPO).as_posix())
    return found


def test_fan_out_exists_once() -> None:
    for name, module in FAN_OUT_CALLS.items():
        assert _callers(name) - {DEFINED_IN[name]} == {module}, (name, _callers(name))


# ---------------------------------------------------------------------- a toy sharded stage
TOY = "toy-fanout"
FINISHED: list[int] = []  # shard indexes, in the order the shards finished (thread runner)
RAN: list[int] = []  # every shard run that did work (a reused marker runs nothing)


def _run(ctx: ShardContext[ToyConfig]) -> Stats:
    i, n = ctx.shard
    if (ctx.out.parent / f"fail-{i}").exists():
        raise ValueError(f"shard {i} told to fail")
    RAN.append(i)
    time.sleep(0.6 * (n - i))  # shard 0 is the slowest: the shards finish in reverse order
    rows = read_rows(Path(ctx.inputs["rows"]))
    write_rows(ctx.out, [(p, v * ctx.config.factor) for p, v in rows])
    FINISHED.append(i)
    return {"rows": len(rows)}


TOY_STAGE: Stage[ToyConfig] = Stage(
    name=TOY,
    version="1",
    config=ToyConfig,
    inputs=("rows",),
    outputs=lambda c, out: {"rows": out},
    run=_run,
    sharding=Sharding(
        inputs=("rows",),
        schema=ROWS,
        count=lambda runner: runner.judge_shards,
        placement="judge",
        merge={"rows": ROWS},
        stem="rows",
        part=lambda i, n: f"part-{i:04d}-of-{n:04d}.parquet",
    ),
)


def _settings(out: Path) -> Any:
    from flows.task import RunSettings
    from pipeline.common.config import RetrySection, RunnerSection
    from pipeline.config import ProgressSection

    return RunSettings(
        name="toyfan",
        out_dir=out,
        runner=RunnerSection(kind="thread", judge_shards=3, max_parallel_shards=3),
        retry=RetrySection(retries=0),
        progress=ProgressSection(enabled=False),
    )


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import stages

    monkeypatch.setitem(stages.OUTSIDE_GRAPH, TOY, TOY_STAGE)
    FINISHED.clear()
    RAN.clear()


def test_fan_out_runs_any_sharded_stage(
    prefect_api: str, toy_registered: None, tmp_path: Path
) -> None:
    from flows.fanout import run_sharded
    from flows.task import file_ref
    from pipeline.common.runner import run_sharded_inline

    rows = write_rows(tmp_path / "rows.parquet", input_rows(30))
    inline = run_sharded_inline(
        TOY_STAGE, ToyConfig(), {"rows": rows}, tmp_path / "inline" / "t.parquet", n=3
    )

    s = _settings(tmp_path / "flow")
    out = tmp_path / "flow" / "work" / "toy.parquet"
    parts = [out.parent / TOY / f"part-{i:04d}-of-0003.parquet" for i in range(3)]
    out.parent.joinpath(TOY).mkdir(parents=True)
    (out.parent / TOY / "fail-1").touch()  # shard 1 fails for real; 0 and 2 finish
    FINISHED.clear()
    RAN.clear()
    with pytest.raises(ValueError, match="shard 1 told to fail"):
        run_sharded(TOY_STAGE, ToyConfig(), {"rows": file_ref(rows)}, out, s, "toy")
    assert sorted(RAN) == [0, 2] and not out.exists()
    done = {i: parts[i].stat().st_mtime_ns for i in (0, 2)}

    (out.parent / TOY / "fail-1").unlink()  # the cause fixed: only shard 1 runs again
    RAN.clear()
    FINISHED.clear()
    merged = run_sharded(TOY_STAGE, ToyConfig(), {"rows": file_ref(rows)}, out, s, "toy")
    assert RAN == [1]
    assert {i: parts[i].stat().st_mtime_ns for i in (0, 2)} == done

    # Completion order differed from shard order, yet the merge is the in-process one.
    FINISHED.clear()
    fresh = tmp_path / "fresh" / "work" / "toy.parquet"
    again = run_sharded(
        TOY_STAGE,
        ToyConfig(),
        {"rows": file_ref(rows)},
        fresh,
        _settings(tmp_path / "fresh"),
        "toy",
    )
    assert FINISHED == [2, 1, 0]
    expected = Path(inline.outputs["rows"]).read_bytes()
    assert Path(merged["outputs"]["rows"]).read_bytes() == expected
    assert Path(again["outputs"]["rows"]).read_bytes() == expected
    assert merged["stats"]["shards"] == 3 and len(merged["stats"]["shards_ran_on"]) == 3
