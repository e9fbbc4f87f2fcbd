"""The vllm backend's process management and shard protocol, run with the worker's transformers
engine (vLLM itself cannot be installed here: its engine code path is untested, see the module)."""

from __future__ import annotations

import json

import pytest

from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.transformers_backend import TransformersBackend
from pipeline.sampling.backends.vllm_backend import VLLMBackend, WorkerFailed
from pipeline.sampling.backends.vllm_worker import answer_regex

pytestmark = pytest.mark.slow


def _reqs(k=5):
    return [
        GenerationRequest(
            request_id=f"r{i}",
            messages=[{"role": "user", "content": f"task {i}"}],
            n=2,
            max_tokens=6,
            seed=i,
        )
        for i in range(k)
    ]


def test_two_data_parallel_workers_match_the_in_process_backend(tiny_model_dir, tmp_path):
    backend = VLLMBackend(
        tiny_model_dir,
        engine="transformers",
        gpus=[0, 1],
        tensor_parallel_size=1,
        chunk_size=2,
        work_dir=tmp_path,
        keep_files=True,
    )
    got = {r.request_id: r for r in backend.generate(_reqs(), progress=False)}
    assert set(got) == {f"r{i}" for i in range(5)}
    with TransformersBackend(tiny_model_dir, device="cpu") as ref:
        want = {r.request_id: r for r in ref.generate(_reqs(), progress=False)}
    for rid, res in got.items():
        assert [g.text for g in res.generations] == [g.text for g in want[rid].generations]
        assert res.backend == "vllm-worker:transformers"
    root = backend.last_work_dir
    done = [json.loads((root / f"worker-{k}" / "out" / "DONE").read_text()) for k in (0, 1)]
    assert [d["cuda_visible_devices"] for d in done] == ["0", "1"]  # one GPU per worker
    assert [d["requests"] for d in done] == [3, 2]  # round-robin shards
    assert len(list((root / "worker-0" / "out").glob("results-*.jsonl"))) == 2  # chunks of 2


def test_tensor_parallel_groups():
    b = VLLMBackend("m", gpus=[0, 1, 2, 3], tensor_parallel_size=2)
    assert b.gpu_groups() == [[0, 1], [2, 3]] and b.name == "vllm"
    with pytest.raises(ValueError, match="groups of 2"):
        VLLMBackend("m", gpus=[0, 1, 2], tensor_parallel_size=2)


def test_a_failing_worker_is_reported_with_its_log(tmp_path):
    backend = VLLMBackend(tmp_path / "no-such-model", engine="transformers", work_dir=tmp_path)
    with pytest.raises(WorkerFailed, match="exit code"):
        list(backend.generate(_reqs(1), progress=False))


def test_worker_guided_regex_matches_only_listed_answers():
    import re

    assert re.fullmatch(answer_regex(["A", "B"]), "x\n\\boxed{A}")
    assert not re.fullmatch(answer_regex(["A", "B"]), "x\\boxed{AB}")


def test_sample_stage_with_a_vllm_source(tiny_model_dir, tmp_path):
    """The stage drives the vllm backend's worker processes (transformers engine)."""
    from pipeline.common.parquet import read_parquet, write_parquet
    from pipeline.sampling.config import SampleConfig
    from pipeline.sampling.stage import sample
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table
    from tests.sampling.problems_fixture import abs_problem, sum_problem

    problems = tmp_path / "problems.parquet"
    write_parquet(
        models_to_table([sum_problem(), abs_problem()], PROBLEM_SCHEMA), problems, PROBLEM_SCHEMA
    )
    cfg = SampleConfig.model_validate(
        {
            "progress": False,
            "sources": [
                {
                    "kind": "model",
                    "name": "tiny-vllm",
                    "model": str(tiny_model_dir),
                    "tier": "weak",
                    "backend": {
                        "type": "vllm",
                        "engine": "transformers",
                        "gpus": [0, 1],
                        "chunk_size": 1,
                    },
                    "languages": ["cpp"],
                    "samples_per_problem": 2,
                    "max_tokens": 6,
                }
            ],
        }
    )
    stats = sample(cfg, problems, tmp_path / "out")
    rows = read_parquet(tmp_path / "out" / "candidates.parquet").to_pylist()
    assert stats["sources"]["tiny-vllm"]["generated"] == 4
    assert {r["backend"] for r in rows} == {"vllm-worker:transformers"}
