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
