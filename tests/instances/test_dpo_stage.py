"""DPO_RESPONSES and DPO_PAIRS as stage values on the runner: each writes exactly its
`outputs()`, the pairs read the responses in shard-index order whatever order the shards
finished in, and a crash between rounds reruns only the unfinished round (real tiny-model
generation throughout; `CallCounter` only counts and, when told, fails a call)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import merge_parts, plan_shards, run_sharded_inline, run_stage
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.stage import (
    DPO_PAIRS,
    DPO_RESPONSES,
    RESPONSES_FILE,
    dpo_pairs,
    responses_files,
    shard_responses,
    with_backend,
)
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_RESPONSE_SCHEMA


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six instances whose problems fall 4 / 0 / 2 into three shards (an empty one too)."""
    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    cfg = AssembleConfig(
        splits=[SplitSpec(name="train", size_targets={2: 2, 3: 2, 4: 2})],
        tokenizer=None,  # no token caps: nothing to download (synthetic rows are short)
    )
    table = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    path = tmp_path_factory.mktemp("dpo-stage") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def _written(folder: Path) -> set[Path]:
    """Every file a run left under `folder`, markers and shard inputs aside."""
    return {
        p
        for p in folder.rglob("*")
        if p.is_file() and p.name != "_stage.json" and "shards" not in p.relative_to(folder).parts
    }


def test_stage_values_write_exactly_their_outputs_in_shard_order(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Three rounds (judges, regenerate, fallback) in three shards, then the pairs."""
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="weak", model=str(tiny_model_dir))],
        samples_per_judge=1,
        max_tokens=4,
        variants=["instruct"],
        construction="on_policy",
        regenerate=True,
        fallback="strong_judge",
        fallback_judge=JudgeModelSpec(name="strong", model=str(tiny_model_dir)),
        fallback_samples=2,
    )
    base = tmp_path / "dpo"
    gathered = run_sharded_inline(
        DPO_RESPONSES, cfg, {"instances": instances}, base / "responses", 3
    )
    # the flow's layout: shard inputs in <dpo>/shards, parts in <dpo>/responses/shard-i-of-n
    assert [p.shard for p in gathered.parts] == [(0, 3), (1, 3), (2, 3)]
    for i, part in enumerate(gathered.parts):
        folder = base / "responses" / f"shard-{i:04d}-of-0003"
        assert (base / "shards" / f"instances-{i:04d}-of-0003.parquet").exists()
        assert list(part.outputs) == ["judges", "regenerate", "fallback"]  # the rounds' order
        assert _written(folder) == {Path(p) for p in part.outputs.values()}
        assert set(part.stats) == {"judges", "regenerate", "fallback"}
    # the pairs read shard 0's rounds, then shard 1's, ... whatever order they finished in
    files = responses_files(gathered.parts)
    expected = [
        base / "responses" / f"shard-{i:04d}-of-0003" / r / RESPONSES_FILE
        for i in range(3)
        for r in ("judges", "regenerate", "fallback")
    ]
    assert files == expected
    assert responses_files(list(reversed(gathered.parts))) == expected
    again = merge_parts(DPO_RESPONSES, cfg, base / "responses", list(reversed(gathered.parts)))
    assert responses_files(again.parts) == expected

    result = run_stage(DPO_PAIRS, cfg, {"instances": instances, "responses": files}, base)
    assert set(result.outputs) == {"dpo", "stats"}
    assert {p for p in base.iterdir() if p.is_file() and p.name != "_stage.json"} == {
        Path(p) for p in result.outputs.values()
    }
    rows = read_parquet(result.path("dpo")).num_rows
    assert rows == result.stats["pairs"] and result.stats["instances"] == 6
    # the wrapper reuses what the stage wrote: same key, nothing runs
    assert dpo_pairs(instances, files, base, cfg) == result.stats
    assert run_stage(DPO_PAIRS, cfg, {"instances": instances, "responses": files}, base).cached


class CallCounter(Backend):
    """Test double around the real transformers backend: counts each `generate` call and
    its requests, and raises on call number `fail_on` (a worker killed between rounds)."""

    def __init__(self, inner: Backend, fail_on: int | None = None) -> None:
        self.inner, self.fail_on, self.name = inner, fail_on, inner.name
        self.model_name = getattr(inner, "model_name", inner.name)
        self.calls: list[int] = []  # requests per call

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        self.calls.append(len(requests))
        if self.fail_on is not None and len(self.calls) == self.fail_on:
            raise RuntimeError("worker killed")
        return self.inner.generate(requests, progress=progress)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()  # type: ignore[attr-defined]


def test_a_crash_between_rounds_reruns_only_the_unfinished_round(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    real = TransformersBackend(tiny_model_dir, model_name="tiny")
    # Aletheia's construction: the judges round, then the regeneration round. One variant
    # and one batch: one generate call per round. Random text never picks the gold letter,
    # so every instance is sampled again.
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="tiny")],
        samples_per_judge=2,
        max_tokens=4,
        variants=["instruct"],
    )
    out = tmp_path / "shard"
    crashing = CallCounter(real, fail_on=2)  # the judges round passes, the regeneration dies
    with pytest.raises(RuntimeError, match="worker killed"):
        shard_responses(instances, out, cfg, crashing)
    assert crashing.calls == [6, 6]
    assert (out / "judges" / "_stage.json").exists()
    assert not (out / "regenerate" / "_stage.json").exists()
    assert not (out / "regenerate" / RESPONSES_FILE).exists()  # nothing half-written
    assert not (out / "_stage.json").exists()  # the shard is not done
    judges_bytes = (out / "judges" / RESPONSES_FILE).read_bytes()
    judges_mtime = (out / "judges" / RESPONSES_FILE).stat().st_mtime_ns

    rerun = CallCounter(real)
    files, stats = shard_responses(instances, out, cfg, rerun)
    assert rerun.calls == [6]  # the regeneration round alone
    assert (out / "judges" / RESPONSES_FILE).read_bytes() == judges_bytes
    assert (out / "judges" / RESPONSES_FILE).stat().st_mtime_ns == judges_mtime
    assert files == [out / "judges" / RESPONSES_FILE, out / "regenerate" / RESPONSES_FILE]
    assert stats["regenerate"]["sampled_again_because"] == {"no_correct_response": 6}
    assert (out / "_stage.json").exists()

    # the same rounds without a crash give the same bytes
    clean = tmp_path / "clean"
    shard_responses(instances, clean, cfg, CallCounter(real))
    for r in ("judges", "regenerate"):
        a = read_parquet(out / r / RESPONSES_FILE, DPO_RESPONSE_SCHEMA)
        b = read_parquet(clean / r / RESPONSES_FILE, DPO_RESPONSE_SCHEMA)
        assert a.num_rows == 12 and a.equals(b)

    # the shard's marker holds: nothing runs; pairing settings do not re-sample either
    idle = CallCounter(real)
    assert shard_responses(instances, out, cfg, idle)[1] == stats
    paired = cfg.model_copy(update={"name": "mixed_dpo", "pairs_per_instance": 3})
    assert run_stage(with_backend(idle), paired, {"instances": instances}, out).cached
    assert idle.calls == []
    # a sampling setting does: the judges round again (then what it regenerates)
    hotter = cfg.model_copy(update={"temperature": 0.9})
    shard_responses(instances, out, hotter, idle)
    assert idle.calls[:1] == [6]


def test_the_sharding_names_todays_shard_count(instances: Path, tmp_path: Path) -> None:
    """dpo_shards, else sample_shards (flows/build.py's dpo-shards subflow)."""
    from pipeline.common.config import RunnerSection

    sharding = DPO_RESPONSES.sharding
    assert sharding is not None and sharding.merge is None and sharding.placement == "sample"
    assert sharding.count(RunnerSection(dpo_shards=3, sample_shards=2)) == 3
    assert sharding.count(RunnerSection(sample_shards=2)) == 2
    cfg = DPOConfig(judges=[JudgeModelSpec(name="tiny")])
    calls = plan_shards(DPO_RESPONSES, cfg, {"instances": instances}, tmp_path / "responses", 2)
    assert [c.out for c in calls] == [
        tmp_path / "responses" / "shard-0000-of-0002",
        tmp_path / "responses" / "shard-0001-of-0002",
    ]
