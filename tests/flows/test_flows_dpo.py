"""The build's DPO step (responses through the one fan-out, then the pairs) on a real Prefect server with the real transformers backend on
the tiny model: the same DPO table with 1 and 3 shards, where each shard ran, and a shard
that failed for real (its output folder blocked by a file) redone alone on the next run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.common.parquet import write_parquet
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import INSTANCE_SCHEMA
from tests.flows.flows_helpers import dpo_flow as dpo_shards
from tests.flows.flows_helpers import fingerprint


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six instances whose problems fall 4 / 0 / 2 into three shards."""
    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    cfg = AssembleConfig(
        splits=[SplitSpec(name="train", size_targets={2: 2, 3: 2, 4: 2})], tokenizer=None
    )
    table = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    path = tmp_path_factory.mktemp("flow-dpo") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def _config(out: Path, model: Path, shards: int) -> dict[str, Any]:
    return {
        "name": "dpoflow",
        "out_dir": str(out),
        "dpo": {
            "judges": [{"name": "tiny", "model": str(model), "backend": {"type": "transformers"}}],
            "samples_per_judge": 3,
            "max_tokens": 8,
            "constrain_answer": True,
        },
        "runner": {"kind": "thread", "dpo_shards": shards, "max_parallel_shards": 2},
        "retry": {"retries": 0},
    }


def test_dpo_shards_flow_matches_one_shard_and_redoes_only_a_failed_shard(
    prefect_api: str, instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    one = dpo_shards(_config(tmp_path / "one", tiny_model_dir, 1), "dpo", str(instances))
    assert one["stats"]["shards"] == 1 and one["stats"]["pairs"] > 0

    three_cfg = _config(tmp_path / "three", tiny_model_dir, 3)
    shard_dirs = [
        tmp_path / "three" / "work" / "dpo" / "responses" / f"shard-{i:04d}-of-0003"
        for i in range(3)
    ]
    shard_dirs[2].parent.mkdir(parents=True)
    shard_dirs[2].write_text("in the way")  # shard 2 cannot make its folder: it fails
    with pytest.raises((FileExistsError, NotADirectoryError)):
        dpo_shards(three_cfg, "dpo", str(instances))
    done = [d / "judges" / "responses.parquet" for d in shard_dirs[:2]]
    before = [fingerprint(p) for p in done]
    assert not (tmp_path / "three" / "work" / "dpo" / "dpo.parquet").exists()

    shard_dirs[2].unlink()  # the cause fixed: run again
    three = dpo_shards(three_cfg, "dpo", str(instances))
    assert [fingerprint(p) for p in done] == before  # shards 0 and 1 were not redone
    assert (shard_dirs[2] / "judges" / "responses.parquet").exists()
    assert three["stats"]["shards"] == 3 and len(three["stats"]["shards_ran_on"]) == 3
    assert all(r["host"] and r["pid"] for r in three["stats"]["shards_ran_on"])

    a = Path(one["outputs"]["dpo"]).read_bytes()
    b = Path(three["outputs"]["dpo"]).read_bytes()
    assert a == b
    strip = {"shards", "shards_ran_on"}
    assert {k: v for k, v in one["stats"].items() if k not in strip} == {
        k: v for k, v in three["stats"].items() if k not in strip
    }
