"""SAMPLE as a stage value run by the one runner (issue 24, B3): its declared outputs are what
it writes, a run with generation errors raises `Incomplete` and leaves no marker, and its
sharding reproduces the sample flow's layout and merged bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.common.parquet import write_parquet
from pipeline.common.runner import run_sharded_inline, run_stage
from pipeline.common.sharding import merge_shards, write_shards
from pipeline.common.stage import MARKER
from pipeline.sampling.config import SampleConfig
from pipeline.sampling.stage import SAMPLE, Incomplete, sample
from schemas.candidate import CANDIDATE_SCHEMA
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table
from tests.sampling.problems_fixture import abs_problem, function_problem, sum_problem


def _problems(path: Path, problems: list) -> Path:
    write_parquet(models_to_table(problems, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    return path


@pytest.fixture()
def problems_path(tmp_path: Path) -> Path:
    return _problems(tmp_path / "problems.parquet", [sum_problem(), abs_problem()])


def _config(model_dir: Path | None, max_tokens: int = 8) -> SampleConfig:
    sources: list[dict] = [
        {"kind": "reference", "tier": "weak"},
        {"kind": "mutant", "tier": "weak", "per_candidate": 2, "seed": 1},
    ]
    if model_dir is not None:
        sources.insert(
            0,
            {
                "kind": "model",
                "name": "tiny-qwen",
                "model": str(model_dir),
                "tier": "weak",
                "backend": {"type": "transformers", "device": "cpu", "batch_size": 4},
                "languages": ["python"],
                "samples_per_problem": 2,
                "max_tokens": max_tokens,
                "seed": 5,
            },
        )
    return SampleConfig.model_validate({"progress": False, "sources": sources})


def test_sample_outputs_match_what_run_wrote(tiny_model_dir, problems_path, tmp_path):
    config = _config(tiny_model_dir)
    out = tmp_path / "out"
    result = run_stage(SAMPLE, config, {"problems": problems_path}, out)

    declared = SAMPLE.outputs(config, out)
    assert set(declared) == {"candidates", "stats"}
    files = {p for p in out.iterdir() if p.is_file()}
    assert files == {*declared.values(), out / MARKER}  # nothing undeclared, nothing missing
    # the sampler's own per-source unit shards (its resume state), kept as they were
    assert [p.name for p in out.iterdir() if p.is_dir()] == ["shards"]
    assert len(list((out / "shards").iterdir())) == 1
    assert result.outputs == {k: str(v) for k, v in declared.items()}
    assert not result.cached and result.stats["complete"] is True
    marker = json.loads((out / MARKER).read_text())
    assert marker["stage"] == "sample" and marker["stats"] == result.stats
    assert json.loads(declared["stats"].read_text()) == result.stats
    assert pq.read_table(declared["candidates"]).num_rows == result.stats["candidates"] > 0
    # the old entry point reuses the same run: its marker, no new generation
    again = run_stage(SAMPLE, config, {"problems": problems_path}, out)
    assert again.cached and sample(config, problems_path, out) == result.stats


def test_generation_errors_raise_incomplete_and_leave_no_marker(
    tiny_model_dir, problems_path, tmp_path
):
    """A real generation error: the tiny model holds 4096 positions, so a prompt plus 4096
    new tokens never fits and the backend answers `error:prompt_too_long` for every unit."""
    config = _config(tiny_model_dir, max_tokens=4096)
    out = tmp_path / "out"
    with pytest.raises(Incomplete, match="4 unit\\(s\\) failed to generate") as e:
        run_stage(SAMPLE, config, {"problems": problems_path}, out)
    stats = e.value.stats
    assert stats["complete"] is False and stats["sources"]["tiny-qwen"]["generation_errors"] == 4
    assert not (out / MARKER).exists()
    # the outputs are written all the same (the reference and mutant rows, no failed unit)
    rows = pq.read_table(out / "candidates.parquet").to_pylist()
    assert rows and {r["origin"] for r in rows} == {"reference", "mutant"}
    assert json.loads((out / "sample_stats.json").read_text()) == stats

    # the old entry point returns the stats as before, still unmarked; the failed units are
    # not in the unit shards, so this run asks for every one of them again
    old = sample(config, problems_path, out)
    assert old["complete"] is False and not (out / MARKER).exists()
    assert old["sources"]["tiny-qwen"]["requests"] == 2  # 2 problems x 1 language
    assert old["sources"]["tiny-qwen"]["units_resumed"] == 0


def test_sharding_reproduces_the_sample_flow(tmp_path):
    """run_sharded_inline lays out the shards where the sample flow puts them and merges to
    the bytes the flow's own write_shards -> sample per shard -> merge_shards gives."""
    train = _problems(tmp_path / "train.parquet", [sum_problem(), abs_problem()])
    heldout = _problems(tmp_path / "heldout.parquet", [function_problem()])
    config = _config(None)
    n = 2

    work = tmp_path / "runner"
    merged = run_sharded_inline(
        SAMPLE, config, {"problems": [train, heldout]}, work / "candidates.parquet", n
    )
    assert merged.outputs == {"candidates": str(work / "candidates.parquet")}
    assert merged.stats["shards"] == n and len(merged.stats["parts"]) == n
    for i in range(n):
        assert (work / "sample" / "shards" / f"problems-{i:04d}-of-0002.parquet").exists()
        assert (work / "sample" / f"shard-{i:04d}" / "candidates.parquet").exists()
        assert (work / "sample" / f"shard-{i:04d}" / MARKER).exists()

    flow = tmp_path / "flow"  # flows/build.py's sample_shards, without Prefect
    shards = write_shards(
        [train, heldout], n, flow / "sample" / "shards", "problems", PROBLEM_SCHEMA
    )
    parts = []
    for i, shard in enumerate(shards):
        sample(config, shard, flow / "sample" / f"shard-{i:04d}")
        parts.append(flow / "sample" / f"shard-{i:04d}" / "candidates.parquet")
    merge_shards(sorted(parts), flow / "candidates.parquet", CANDIDATE_SCHEMA)

    a = (work / "candidates.parquet").read_bytes()
    assert a == (flow / "candidates.parquet").read_bytes()
    assert (
        pq.read_table(work / "candidates.parquet").num_rows
        == sum(p["candidates"] for p in merged.stats["parts"])
        > 0
    )
    assert all(p["candidates"] > 0 for p in merged.stats["parts"])  # both shards hold rows
