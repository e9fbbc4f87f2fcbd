"""The DPO stage as responses shards + one pairs step: the same rows whatever the shard
count, a crashed shard redone alone, judges built from their specs through `make_backend`
(transformers here, an OpenAI-compatible server in the slow test), vLLM specs validated."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.sharding import write_shards
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.stage import RESPONSES_FILE, dpo_pairs, shard_responses
from pipeline.instances.stage import build_dpo
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_RESPONSE_SCHEMA, DPO_SCHEMA


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
    path = tmp_path_factory.mktemp("dpo-shards") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def _sharded(instances: Path, root: Path, cfg: DPOConfig, n: int, backend: Any = None) -> dict:
    """What the dpo-shards flow does, without Prefect: shard by problem, responses per shard,
    one pairs step over every file."""
    shards = write_shards([instances], n, root / "shards", "instances", INSTANCE_SCHEMA)
    files: list[Path] = []
    for i, shard in enumerate(shards):
        got, _ = shard_responses(shard, root / "responses" / f"shard-{i}", cfg, backend)
        files += got
    return dpo_pairs(instances, files, root, cfg)


CONFIGS = {
    # The demo's settings: Aletheia's construction, answers constrained so they parse.
    "aletheia-constrained": DPOConfig(
        judges=[JudgeModelSpec(name="tiny", model_path="TINY", backend="transformers")],
        samples_per_judge=4,
        max_tokens=8,
        constrain_answer=True,
    ),
    # on_policy with the strong-judge fallback: a second responses round per shard.
    "on-policy-fallback": DPOConfig(
        judges=[JudgeModelSpec(name="weak", model="TINY")],
        samples_per_judge=1,
        max_tokens=6,
        variants=["instruct"],
        construction="on_policy",
        constrain_answer=True,
        fallback="strong_judge",
        fallback_judge=JudgeModelSpec(name="strong", model="TINY"),
        fallback_samples=3,
    ),
    # on_policy with Aletheia's regeneration round switched on: judges, then regeneration,
    # then the fallback round over what neither got right.
    "on-policy-regenerate-fallback": DPOConfig(
        judges=[JudgeModelSpec(name="weak", model="TINY")],
        samples_per_judge=2,
        max_tokens=6,
        variants=["instruct"],
        construction="on_policy",
        constrain_answer=True,
        regenerate=True,
        fallback="strong_judge",
        fallback_judge=JudgeModelSpec(name="strong", model="TINY"),
        fallback_samples=3,
    ),
}


def _with_model(cfg: DPOConfig, model: Path) -> DPOConfig:
    data = cfg.model_dump(mode="json")
    for j in [*data["judges"], data["fallback_judge"]]:
        if j is not None:
            j["model"] = str(model)
    return DPOConfig.model_validate(data)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_one_shard_and_three_shards_give_identical_dpo_tables(
    name: str, instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Judges built from their specs (make_backend -> transformers on the tiny model)."""
    cfg = _with_model(CONFIGS[name], tiny_model_dir)
    one = build_dpo(instances, tmp_path / "one", cfg)
    three = _sharded(instances, tmp_path / "three", cfg, 3)
    assert one == three
    a = read_parquet(tmp_path / "one" / "dpo.parquet", DPO_SCHEMA)
    b = read_parquet(tmp_path / "three" / "dpo.parquet", DPO_SCHEMA)
    assert a.num_rows == one["pairs"] > 0 and a.equals(b)
    assert (tmp_path / "one" / "dpo.parquet").read_bytes() == (
        tmp_path / "three" / "dpo.parquet"
    ).read_bytes()
    # three shard folders, the empty one included, each with its own responses file
    judges_files = sorted((tmp_path / "three" / "responses").glob(f"*/judges/{RESPONSES_FILE}"))
    counts = [read_parquet(f, DPO_RESPONSE_SCHEMA).num_rows for f in judges_files]
    per_instance = cfg.samples_per_judge * len(cfg.judges) * len(cfg.variants)
    assert counts == [4 * per_instance, 0, 2 * per_instance]
    regen = _round_rows(tmp_path / "three", "regenerate")
    judges_rows = _round_rows(tmp_path / "three", "judges")
    if cfg.regenerates:
        # the instances sampled again are exactly those whose first-round responses were all
        # wrong or all right, each asked of every judge again
        gold = {r["instance_id"]: r["chosen_answer"] for r in read_parquet(instances).to_pylist()}
        first: dict[str, list[bool]] = {}
        for r in judges_rows:
            first.setdefault(r["instance_id"], []).append(r["answer"] == gold[r["instance_id"]])
        expected = {i for i, right in first.items() if all(right) or not any(right)}
        assert {r["instance_id"] for r in regen} == expected
        assert len(regen) == len(expected) * cfg.samples_per_judge * len(cfg.judges)
        assert {r["round"] for r in regen} <= {"regenerate"}
        assert sum(one["regeneration"]["sampled_again"].values()) == len(expected)
        assert (
            one["regeneration"]["rows_with_regenerated_chosen"]
            == (one["chosen_source"]["regenerated"])
        )
    else:
        assert regen == [] and one["regeneration"]["sampled_again"] == {}
    if name == "aletheia-constrained":
        # constrained answers parse, so some responses pick the gold letter: sampled chosen
        assert one["chosen_source"]["sampled"] > 0
        assert one["pairs"] + sum(one["instances_short_of_pairs"].values()) == 6
        assert one["responses_by_judge"]["tiny"]["invalid"] == 0
    else:
        rows = _round_rows(tmp_path / "three", "fallback")
        assert {r["round"] for r in rows} <= {"fallback"} and {r["judge_model"] for r in rows} <= {
            "strong"
        }
        assert len({r["instance_id"] for r in rows}) == one["fallback_samples_for_instances"]
        assert len(rows) == 3 * one["fallback_samples_for_instances"]
        # the fallback round asks only where no earlier round (judges, regeneration) was right
        gold = {r["instance_id"]: r["chosen_answer"] for r in read_parquet(instances).to_pylist()}
        right = {
            r["instance_id"] for r in judges_rows + regen if r["answer"] == gold[r["instance_id"]]
        }
        assert {r["instance_id"] for r in rows} == set(gold) - right


def _round_rows(root: Path, round_: str) -> list[dict[str, Any]]:
    """Every responses row one round wrote, over the shard folders."""
    files = sorted((root / "responses").glob(f"*/{round_}/{RESPONSES_FILE}"))
    return [r for f in files for r in read_parquet(f, DPO_RESPONSE_SCHEMA).to_pylist()]


class CrashOrCount(Backend):
    """Test double standing in for a worker killed mid-shard: wraps the real transformers
    backend, counts the requests it is sent, and raises before generating when `crash` is set.
    The generation it forwards to is real."""

    def __init__(self, inner: Backend, crash: bool = False) -> None:
        self.inner, self.crash, self.name = inner, crash, inner.name
        self.model_name = getattr(inner, "model_name", inner.name)
        self.seen: list[str] = []

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        self.seen += [r.request_id for r in requests]
        if self.crash:
            raise RuntimeError("worker killed")
        return self.inner.generate(requests, progress=progress)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()  # type: ignore[attr-defined]


def test_a_crashed_shard_is_redone_alone(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    real = TransformersBackend(tiny_model_dir, model_name="tiny")
    cfg = DPOConfig(judges=[JudgeModelSpec(name="tiny")], samples_per_judge=2, max_tokens=6)
    shards = write_shards([instances], 3, tmp_path / "shards", "instances", INSTANCE_SCHEMA)
    out = [tmp_path / "responses" / f"shard-{i}" for i in range(3)]
    first = [CrashOrCount(real, crash=i == 2) for i in range(3)]
    for i in range(2):
        shard_responses(shards[i], out[i], cfg, first[i])
    with pytest.raises(RuntimeError, match="worker killed"):
        shard_responses(shards[2], out[2], cfg, first[2])
    assert [(o / "judges" / "_stage.json").exists() for o in out] == [True, True, False]
    assert not (out[2] / "judges" / RESPONSES_FILE).exists()  # nothing half-written
    done = [(o / "judges" / RESPONSES_FILE).read_bytes() for o in out[:2]]

    again = [CrashOrCount(real) for _ in range(3)]
    files = [f for i in range(3) for f in shard_responses(shards[i], out[i], cfg, again[i])[0]]
    # only shard 2's two instances, asked twice: the judges round, then the regeneration
    # round (on by default for Aletheia's construction; unconstrained random text is never
    # right, so every instance is sampled again)
    assert [len(b.seen) for b in again] == [0, 0, 4]
    assert [(o / "judges" / RESPONSES_FILE).read_bytes() for o in out[:2]] == done
    stats = dpo_pairs(instances, files, tmp_path, cfg)
    assert stats["pairs"] == 6 and stats["responses_by_judge"]["tiny"]["responses"] == 2 * 12
    assert stats["regeneration"]["sampled_again"] == {"no_correct_response": 6}


def test_a_missing_shard_is_an_error_not_a_silent_drop(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="tiny", model=str(tiny_model_dir))],
        samples_per_judge=1,
        max_tokens=4,
    )
    shards = write_shards([instances], 3, tmp_path / "shards", "instances", INSTANCE_SCHEMA)
    files, _ = shard_responses(shards[0], tmp_path / "r0", cfg)
    with pytest.raises(ValueError, match="no responses from .*tiny.*a responses shard is missing"):
        dpo_pairs(instances, files, tmp_path / "pairs", cfg)


def test_a_judge_model_that_cannot_load_is_named(instances: Path, tmp_path: Path) -> None:
    cfg = DPOConfig(judges=[JudgeModelSpec(name="gone", model=str(tmp_path / "no-model"))])
    with pytest.raises(ValueError, match="dpo judge gone: model .*no-model.* cannot be loaded"):
        build_dpo(instances, tmp_path / "out", cfg)
    assert not (tmp_path / "out" / "responses" / "judges" / "_stage.json").exists()


def test_judge_specs_take_every_backend_and_the_old_shorthand() -> None:
    old = JudgeModelSpec.model_validate({"name": "j", "backend": "transformers", "model_path": "m"})
    assert old.model == "m" and old.backend.type == "transformers"
    assert old.source().model == "m" and old.source().name == "j"
    served = JudgeModelSpec.model_validate(
        {"name": "j", "backend": {"type": "openai", "base_url": "http://127.0.0.1:9/v1"}}
    )
    assert served.model_ref == "j" and served.backend.type == "openai"
    # UNTESTED HERE beyond validation and preflight: vLLM cannot be installed on our machines.
    vllm = JudgeModelSpec.model_validate(
        {"name": "j", "model": "/m", "backend": {"type": "vllm", "python": "/opt/vllm/bin/python"}}
    )
    assert vllm.backend.type == "vllm" and vllm.source().backend.python == "/opt/vllm/bin/python"
    with pytest.raises(ValueError, match="model or model_path"):
        JudgeModelSpec.model_validate({"name": "j", "model": "a", "model_path": "b"})
    with pytest.raises(ValueError, match="unique"):
        DPOConfig(judges=[JudgeModelSpec(name="j"), JudgeModelSpec(name="j")])


@pytest.mark.slow
def test_openai_judge_against_a_real_server(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """A judge with `backend: {type: openai, base_url}` against a real `transformers serve`
    process on the tiny model (tests/sampling/serving.py): responses and the pairs step come
    out. The instruct variant: `transformers serve` rejects the fields that continue the
    Think pre-fill (`continue_final_message`, HTTP 422), which vLLM and SGLang accept; and
    free-running random text never picks the gold letter, so instruct yields no pair (no
    gold splice there), which the stats must say."""
    from tests.sampling.serving import start_transformers_serve

    server = start_transformers_serve(tiny_model_dir)
    try:
        cfg = DPOConfig.model_validate(
            {
                "judges": [
                    {
                        "name": "served",
                        "model": str(tiny_model_dir),
                        "backend": {
                            "type": "openai",
                            "base_url": server.base_url,
                            "concurrency": 2,
                        },
                    }
                ],
                "variants": ["instruct"],
                "samples_per_judge": 2,
                "max_tokens": 6,
            }
        )
        stats = build_dpo(instances, tmp_path / "out", cfg)
    finally:
        server.stop()
    responses = read_parquet(
        tmp_path / "out" / "responses" / "judges" / RESPONSES_FILE, DPO_RESPONSE_SCHEMA
    ).to_pylist()
    assert len(responses) == 6 * 2 and {r["judge_model"] for r in responses} == {"served"}
    assert all(not r["finish_reason"].startswith("error") for r in responses), [
        r["finish_reason"] for r in responses
    ]
    # generated for real (the random tiny model's tokens may decode to no visible text)
    assert all(
        r["completion_tokens"] and r["finish_reason"] in ("length", "stop") for r in responses
    )
    # + the regeneration round (Aletheia's construction, on by default) over the instances
    # whose two responses were all wrong or all right, two more responses each
    again = sum(stats["regeneration"]["sampled_again"].values())
    assert stats["responses_by_judge"]["served"]["responses"] == 12 + 2 * again
    rows = read_parquet(tmp_path / "out" / "dpo.parquet", DPO_SCHEMA).to_pylist()
    right = stats["responses_by_judge"]["served"]["correct"]
    assert len(rows) == stats["pairs"] and (
        right > 0 or stats["instances_short_of_pairs"] == {"no_correct_response_instruct": 6}
    )
