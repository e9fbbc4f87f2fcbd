"""The sample stage end to end on the tiny model: sources, provenance, resume, filters, caching."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.sampling.backends.factory import make_backend
from pipeline.sampling.config import SampleConfig
from pipeline.sampling.stage import CANDIDATES_FILE, STATS_FILE, sample
from schemas.candidate import CANDIDATE_SCHEMA
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table
from tests.sampling.problems_fixture import abs_problem, function_problem, sum_problem

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def problems_path(tmp_path):
    path = tmp_path / "problems.parquet"
    probs = [sum_problem(), abs_problem(), function_problem()]
    write_parquet(models_to_table(probs, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    return path


def _config(model_dir, **model_kw):
    model = {
        "kind": "model",
        "name": "tiny-qwen",
        "model": str(model_dir),
        "tier": "weak",
        "backend": {"type": "transformers", "device": "cpu", "batch_size": 4},
        "languages": ["python", "cpp"],
        "samples_per_problem": 2,
        "max_tokens": 12,
        "seed": 11,
        "shard_requests": 1,
        **model_kw,
    }
    return SampleConfig.model_validate(
        {
            "progress": False,
            "sources": [
                model,
                {"kind": "reference", "tier": "weak"},
                {"kind": "mutant", "tier": "weak", "per_candidate": 2, "seed": 1},
            ],
        }
    )


class CountingFactory:
    """The real backend, counting requests; optionally stopping (a crash) after `crash_after`."""

    def __init__(self, crash_after=None):
        self.requests, self.crash_after = 0, crash_after

    def __call__(self, source):
        backend = make_backend(source)
        outer = self
        real = backend.generate

        def generate(requests, progress=True):
            outer.requests += len(requests)
            for i, res in enumerate(real(requests, progress=progress)):
                if outer.crash_after is not None and i == outer.crash_after:
                    raise KeyboardInterrupt("simulated crash")
                yield res

        backend.generate = generate
        return backend


def test_stage_writes_candidates_with_provenance(tiny_model_dir, problems_path, tmp_path):
    stats = sample(_config(tiny_model_dir), problems_path, tmp_path / "out")
    rows = read_parquet(tmp_path / "out" / CANDIDATES_FILE, CANDIDATE_SCHEMA).to_pylist()
    policy = [r for r in rows if r["origin"] == "policy"]
    # 2 stdio problems x 2 languages + 1 function problem x python, 2 samples each, minus folded copies
    assert len(policy) + stats["duplicates_folded"] == (2 * 2 + 1) * 2
    src = stats["sources"]["tiny-qwen"]
    assert src["skipped_function_mode_language"] == 1 and src["generated"] == 10
    for r in policy:
        assert r["generator"] == "tiny-qwen" and r["backend"] == "transformers"
        assert r["generator_revision"].startswith("local:") and r["seed"] is not None
        assert r["prompt_sha"] and r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
        assert r["finish_reason"] in {"stop", "length"} and r["completion"] is not None
        assert (r["code"] == "") == (r["extraction"] in {"no_code", "wrong_language"})
    assert {r["origin"] for r in rows} == {"policy", "reference", "mutant"}
    assert all(r["parent_candidate_id"] for r in rows if r["origin"] == "mutant")
    keys = [(r["problem_id"], r["candidate_id"], r["generator"], r["tier"]) for r in rows]
    assert len(keys) == len(set(keys))
    group = stats["by_generator_language"]["tiny-qwen | cpp"]
    assert group["count"] == sum(1 for r in policy if r["language"] == "cpp")
    assert (tmp_path / "out" / STATS_FILE).exists()


def test_finished_stage_is_not_rerun(tiny_model_dir, problems_path, tmp_path):
    sample(_config(tiny_model_dir), problems_path, tmp_path / "out")
    factory = CountingFactory()
    sample(_config(tiny_model_dir), problems_path, tmp_path / "out", backend_factory=factory)
    assert factory.requests == 0


def test_crash_resumes_without_regenerating_and_matches_a_clean_run(
    tiny_model_dir, problems_path, tmp_path
):
    crashing = CountingFactory(crash_after=3)
    with pytest.raises(KeyboardInterrupt):
        sample(_config(tiny_model_dir), problems_path, tmp_path / "out", backend_factory=crashing)
    assert crashing.requests == 5 and not (tmp_path / "out" / CANDIDATES_FILE).exists()
    resumed = CountingFactory()
    stats = sample(
        _config(tiny_model_dir), problems_path, tmp_path / "out", backend_factory=resumed
    )
    assert resumed.requests == 2  # only the units that had not finished
    assert stats["sources"]["tiny-qwen"]["units_resumed"] == 6
    sample(_config(tiny_model_dir), problems_path, tmp_path / "clean")
    a = pq.read_table(tmp_path / "out" / CANDIDATES_FILE)
    b = pq.read_table(tmp_path / "clean" / CANDIDATES_FILE)
    assert a.equals(b)  # same config and seed: the same candidates, crash or not
    assert (tmp_path / "out" / CANDIDATES_FILE).read_bytes() == (
        tmp_path / "clean" / CANDIDATES_FILE
    ).read_bytes()


def test_token_filters_drop_and_count(tiny_model_dir, problems_path, tmp_path):
    cfg = _config(
        tiny_model_dir,
        filters={
            "tokenizer": str(tiny_model_dir),
            "max_prompt_tokens": 100000,
            "max_completion_tokens": 3,
        },
    )
    stats = sample(cfg, problems_path, tmp_path / "a")
    src = stats["sources"]["tiny-qwen"]
    assert src["filtered_completion"] > 0 and src["filtered_prompt"] == 0
    policy = [
        r
        for r in read_parquet(tmp_path / "a" / CANDIDATES_FILE).to_pylist()
        if r["origin"] == "policy"
    ]
    assert all(r["completion_tokens"] <= 3 for r in policy)
    cfg = _config(
        tiny_model_dir, filters={"tokenizer": str(tiny_model_dir), "max_prompt_tokens": 5}
    )
    factory = CountingFactory()
    stats = sample(cfg, problems_path, tmp_path / "b", backend_factory=factory)
    assert stats["sources"]["tiny-qwen"]["filtered_prompt"] == 10 and factory.requests == 0


@pytest.mark.parametrize(
    "path", sorted((REPO / "configs" / "pools").glob("*.yaml")), ids=lambda p: p.name
)
def test_pool_configs_load(path):
    cfg = SampleConfig.from_yaml(path)
    assert cfg.sources
