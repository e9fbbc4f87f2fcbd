"""The transformers backend on a CUDA GPU (run on the H200 test machine; skipped without CUDA)."""

from __future__ import annotations

import re

import pytest
import torch

from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.transformers_backend import TransformersBackend

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(scope="module")
def gpu_backend(tmp_path_factory):
    from pipeline.models.tiny import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp("tiny-gpu"), hidden_size=256, num_layers=4)
    with TransformersBackend(path, device="cuda", batch_size=16) as b:
        yield b


def test_gpu_generation_seeded_and_bf16(gpu_backend):
    assert (
        gpu_backend.device.type == "cuda"
        and next(gpu_backend.model.parameters()).dtype == torch.bfloat16
    )
    reqs = [
        GenerationRequest(
            request_id=f"r{i}",
            messages=[{"role": "user", "content": f"task {i}"}],
            n=4,
            max_tokens=48,
            seed=i,
        )
        for i in range(8)
    ]
    a = {
        r.request_id: [g.text for g in r.generations]
        for r in gpu_backend.generate(reqs, progress=False)
    }
    b = {
        r.request_id: [g.text for g in r.generations]
        for r in gpu_backend.generate(reqs, progress=False)
    }
    assert a == b and len(a) == 8 and all(len(v) == 4 for v in a.values())


def test_gpu_answer_choices(gpu_backend):
    reqs = [
        GenerationRequest(
            request_id=f"v{i}",
            messages=[{"role": "user", "content": "Which one?"}],
            n=4,
            max_tokens=32,
            seed=i,
            answer_choices=["A", "B", "C", "D"],
        )
        for i in range(8)
    ]
    for res in gpu_backend.generate(reqs, progress=False):
        for g in res.generations:
            assert re.search(r"\\boxed\{[ABCD]\}$", g.text), g.text
            assert g.completion_tokens <= 32


def test_gpu_generate_decoder_repeats_for_a_seed(gpu_backend):
    """The generate decoder on the GPU: its default batch budget comes from the free memory,
    and a seeded run repeats (same requests, same batches)."""
    from pipeline.sampling.backends.batched_generate import kv_bytes_per_token

    path = gpu_backend.model.name_or_path
    with TransformersBackend(path, device="cuda", decoder="generate", batch_size=64) as fast:
        free, _ = torch.cuda.mem_get_info()
        per_token = kv_bytes_per_token(fast.model.config, 2)
        assert 0 < fast.max_batch_tokens * per_token <= free
        reqs = [
            GenerationRequest(
                request_id=f"r{i}",
                messages=[{"role": "user", "content": f"task {i} " * (1 + i)}],
                n=8,
                max_tokens=48,
                seed=i,
            )
            for i in range(16)
        ]
        a = {
            r.request_id: [g.text for g in r.generations]
            for r in fast.generate(reqs, progress=False)
        }
        b = {
            r.request_id: [g.text for g in r.generations]
            for r in fast.generate(reqs, progress=False)
        }
    assert a == b and len(a) == 16 and all(len(v) == 8 for v in a.values())
    assert len({t for v in a.values() for t in v}) > 16  # samples, not one text
