"""Judging shards fanned out over a local Ray cluster (prefect-ray's RayTaskRunner)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.flows.flows_helpers import dpo_flow, small_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_judge_shards_on_a_local_ray_cluster(
    prefect_api: str, small_bundled: Path, tmp_path: Path
) -> None:
    from flows.fanout import run_sharded
    from flows.runners import make_task_runner
    from flows.task import RunSettings, file_ref
    from pipeline.config import load_run_config
    from pipeline.judge.stage import JUDGE, JudgeCall, judge_candidates
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
    assert type(make_task_runner(cfg.runner)).__name__ == "RayTaskRunner"
    out = run_sharded(
        JUDGE,
        JudgeCall(judge=cfg.judge, sandbox=cfg.sandbox),
        {
            "candidates": file_ref(work / "sample" / "candidates.parquet"),
            "problems": file_ref(work / "problems.parquet"),
        },
        work / "judged.parquet",
        RunSettings.of(cfg),
        "judge",
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


def _task_runs(api: str, name: str) -> list[dict]:
    import httpx

    body = {"task_runs": {"name": {"like_": name}}}
    return httpx.post(f"{api}/task_runs/filter", json=body, timeout=30).json()


def test_shards_are_placed_by_resource_on_a_two_node_cluster(
    prefect_api: str, small_bundled: Path, tmp_path: Path
) -> None:
    """A real two-node Ray cluster on loopback (ray.cluster_utils starts a head and a second
    raylet as separate processes): the head carries the `sandbox_node` label, the second node
    `gpu_node`. Sampling shards must run on the second node, judging shards on the head,
    and with max_parallel_shards 1 no two judging shards overlap."""
    from ray.cluster_utils import Cluster

    from flows.fanout import run_sharded
    from flows.task import RunSettings, file_ref
    from pipeline.config import load_run_config
    from pipeline.judge.stage import JUDGE, JudgeCall
    from pipeline.problems.stage import ingest
    from pipeline.sampling.stage import SAMPLE
    from pipeline.splits.stage import split_problems

    mem = 80 * 1024 * 1024
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "resources": {"sandbox_node": 4},
            "object_store_memory": mem,
            "include_dashboard": False,
        },
    )
    gpu = cluster.add_node(num_cpus=2, resources={"gpu_node": 1}, object_store_memory=mem)
    cluster.wait_for_nodes()
    try:
        raw = small_config(tmp_path / "out", small_bundled, tmp_path / "tiny")
        raw["sample"]["sources"] = [{"kind": "reference", "tier": "weak", "languages": ["python"]}]
        raw["runner"] = {
            "kind": "ray",
            "ray_address": cluster.address,
            "sample_shards": 2,
            "judge_shards": 3,
            "max_parallel_shards": 1,
            "sample_placement": {"resources": {"gpu_node": 1}},
            "judge_placement": {"resources": {"sandbox_node": 1}},
        }
        raw["sandbox"] = {"pool_size": 1}
        cfg = load_run_config(raw)
        work = cfg.work_dir
        ingest(cfg.sources, work / "problems.parquet", cfg.ingest, show_progress=False)
        split_problems(work / "problems.parquet", work / "splits", cfg.splits, show_progress=False)
        s = RunSettings.of(cfg)
        problem_sets = [work / "splits" / f"{n}.parquet" for n in ("train", "heldout")]
        candidates = run_sharded(
            SAMPLE, cfg.sample, {"problems": file_ref(problem_sets)},
            work / "candidates.parquet", s, "sample",
        )  # fmt: skip
        judged = run_sharded(
            JUDGE, JudgeCall(judge=cfg.judge, sandbox=cfg.sandbox),
            {"candidates": file_ref(candidates["outputs"]["candidates"]),
             "problems": file_ref(work / "problems.parquet")},
            work / "judged.parquet", s, "judge",
        )  # fmt: skip

        head_id, gpu_id = cluster.head_node.node_id, gpu.node_id
        sample_nodes = [r["ray_node"] for r in candidates["stats"]["shards_ran_on"]]
        judge_nodes = [r["ray_node"] for r in judged["stats"]["shards_ran_on"]]
        assert sample_nodes == [gpu_id, gpu_id]
        assert judge_nodes == [head_id] * 3
        assert pl.read_parquet(judged["outputs"]["judged"]).height > 0

        runs = sorted(
            (r["start_time"], r["end_time"])
            for r in _task_runs(prefect_api, "judge-shard")
            if r["state_type"] == "COMPLETED" and r["start_time"]
        )[-3:]
        assert len(runs) == 3
        assert all(prev[1] <= nxt[0] for prev, nxt in itertools.pairwise(runs)), runs

        # DPO verifier-response shards load models: they go where sampling goes.
        dpo_nodes = _dpo_shard_nodes(raw, tmp_path)
        assert dpo_nodes == [gpu_id, gpu_id]
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()


def _dpo_shard_nodes(raw: dict[str, Any], tmp_path: Path) -> list[str]:
    """Run the build's DPO step (2 response shards, the real tiny model on the transformers backend)
    on the cluster of `raw["runner"]`; return the Ray node of each shard."""
    from pipeline.common.parquet import write_parquet
    from pipeline.instances.assemble import assemble_frames
    from pipeline.instances.config import AssembleConfig, SplitSpec
    from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
    from pipeline.models.tiny import build_tiny_model
    from schemas import INSTANCE_SCHEMA

    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    acfg = AssembleConfig(splits=[SplitSpec(name="train", size_targets={2: 2})], tokenizer=None)
    instances = write_parquet(
        assemble_frames(judged, problems, assignments, acfg)[0]["train"],
        tmp_path / "dpo-instances.parquet",
        INSTANCE_SCHEMA,
    )
    model = build_tiny_model(tmp_path / "tiny-judge")
    cfg = {
        **raw,
        "dpo": {
            "judges": [{"name": "tiny", "model": str(model)}],
            "samples_per_judge": 1,
            "max_tokens": 4,
        },
        "runner": {**raw["runner"], "dpo_shards": 2},
    }
    out = dpo_flow(cfg, "dpo", str(instances))
    assert out["stats"]["pairs"] + sum(out["stats"]["instances_short_of_pairs"].values()) == 2
    return [r["ray_node"] for r in out["stats"]["shards_ran_on"]]
