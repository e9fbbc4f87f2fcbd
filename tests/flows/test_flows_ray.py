"""Judging shards fanned out over a local Ray cluster (prefect-ray's RayTaskRunner)."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from tests.flows.flows_helpers import small_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_judge_shards_on_a_local_ray_cluster(
    prefect_api: str, small_bundled: Path, tmp_path: Path
) -> None:
    from flows import tasks as T
    from flows.build import judge_shards
    from flows.runners import make_task_runner
    from pipeline.config import load_run_config
    from pipeline.judge.stage import judge_candidates
    from pipeline.problems.stage import ingest
    from pipeline.sampling.stage import sample
    from sandbox import SandboxClient

    raw = small_config(tmp_path / "out", small_bundled, tmp_path / "tiny")
    raw["sample"]["sources"] = [{"kind": "reference", "tier": "weak", "languages": ["python"]}]
    raw["runner"] = {"kind": "ray", "judge_shards": 2, "max_parallel_shards": 2}
    raw["sandbox"] = {"pool_size": 1}
    cfg = load_run_config(raw)
    work = cfg.work_dir
    ingest(cfg.sources, work / "problems.parquet", cfg.ingest, show_progress=False)
    sample(cfg.sample, work / "problems.parquet", work / "sample")
    problems = T.result("ingest", {"problems": work / "problems.parquet"}, {})
    candidates = T.result("sample", {"candidates": work / "sample" / "candidates.parquet"}, {})

    runner = make_task_runner(cfg.runner)
    assert type(runner).__name__ == "RayTaskRunner"
    out = judge_shards.with_options(task_runner=runner)(
        cfg.model_dump(mode="json"), candidates, problems
    )

    judged = pl.read_parquet(out["outputs"]["judged"]).sort("candidate_id")
    cands = pl.read_parquet(work / "sample" / "candidates.parquet")
    assert judged.height == cands.height > 0
    assert set(judged["verdict"]) >= {"AC"} and "SE" not in set(judged["verdict"])
    shard_files = sorted((work / "judge").glob("judged-*.parquet"))
    assert len(shard_files) == 2

    with SandboxClient(pool_size=1) as client:
        judge_candidates(
            work / "sample" / "candidates.parquet",
            work / "problems.parquet",
            tmp_path / "direct.parquet",
            client=client,
        )
    # Same verdicts as judging in this process; the shards ran in Ray worker processes.
    direct = pl.read_parquet(tmp_path / "direct.parquet").sort("candidate_id")
    assert judged.select("candidate_id", "verdict", "pass_rate").equals(
        direct.select("candidate_id", "verdict", "pass_rate")
    )
    pids = {r["pid"] for r in out["stats"]["shards_ran_on"]}
    assert len(out["stats"]["shards_ran_on"]) == 2 and os.getpid() not in pids
