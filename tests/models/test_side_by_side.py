"""Model work side by side on threads of one process (the demo's `model_parallel_shards: 2`):
the same weights and text as one at a time, and each thread's torch settings restored.

Real fits, real transformers loads and generation; each case runs the same work first one
at a time, then on two or four threads started together."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import torch

from pipeline.common.cpu import pin_cpu_kernels, torch_threads
from pipeline.models.policy import fit_on_problems, read_fit
from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.transformers_backend import TransformersBackend
from tests.models.test_policy import _problems, _spec


def _together(fns: list[Any]) -> list[Any]:
    """Run the functions on threads released at the same moment; their results in order."""
    out: list[Any] = [None] * len(fns)
    errors: list[BaseException] = []
    start = threading.Barrier(len(fns))

    def run(i: int) -> None:
        start.wait()
        try:
            out[i] = fns[i]()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return out


def test_two_fits_side_by_side_give_the_weights_of_two_fits_in_turn(tmp_path: Path) -> None:
    specs = {seed: {"steps": 12, "seed": seed, "include_wrong": True} for seed in (0, 1)}
    alone = {
        s: read_fit(fit_on_problems(_problems(), _spec(tmp_path / "alone", f"p{s}", **kw)))
        for s, kw in specs.items()
    }
    before = torch.get_num_threads()
    paired = _together(
        [
            lambda s=s, kw=kw: read_fit(
                fit_on_problems(_problems(), _spec(tmp_path / "pair", f"p{s}", **kw))
            )
            for s, kw in specs.items()
        ]
    )
    assert [p["weights_sha256"] for p in paired] == [alone[s]["weights_sha256"] for s in specs]
    assert alone[0]["weights_sha256"] != alone[1]["weights_sha256"]  # the seed matters
    assert torch.get_num_threads() == before  # the last fit out restored the thread count


def test_four_loads_side_by_side_generate_what_one_does(tiny_model_dir: Path) -> None:
    """Four backends loading the same model at once (four DPO shards starting): every one
    loads real weights and writes the text a lone backend writes."""
    req = GenerationRequest(
        request_id="r", prompt="Which is right? ", n=2, max_tokens=8, temperature=1.0, seed=3
    )

    def load_and_generate() -> list[str]:
        b = TransformersBackend(tiny_model_dir, device="cpu", batch_size=2, threads=1)
        (result,) = list(b.generate([req], progress=False))
        return [g.text for g in result.generations]

    alone = load_and_generate()
    assert _together([load_and_generate] * 4) == [alone] * 4


def test_torch_threads_is_held_until_the_last_holder_leaves() -> None:
    before = torch.get_num_threads()
    first_in = threading.Event()
    first_may_leave = threading.Event()
    seen: list[int] = []

    def first() -> None:
        with torch_threads(1):
            first_in.set()
            first_may_leave.wait()

    t = threading.Thread(target=first)
    t.start()
    first_in.wait()
    with torch_threads(1):
        first_may_leave.set()
        t.join()  # the first holder has left: the second still runs on one thread
        seen.append(torch.get_num_threads())
    assert seen == [1] and torch.get_num_threads() == before


def test_cpu_kernels_pinned_to_avx2_where_the_cpu_has_it() -> None:
    """In this test process torch has long chosen its kernels; the pin says which."""
    chosen = pin_cpu_kernels()
    assert chosen == torch.backends.cpu.get_cpu_capability()


def test_a_generation_stopped_early_leaves_the_thread_count_alone(tiny_model_dir: Path) -> None:
    """A consumer that takes one result and stops (the generator suspended, not closed) must
    not keep the backend's thread setting: it is held while a batch decodes, not across a
    yield, so the count is back at once rather than whenever the generator is collected."""
    before = torch.get_num_threads()
    threads = 1 if before != 1 else 2  # a setting that differs from the process's
    backend = TransformersBackend(tiny_model_dir, device="cpu", batch_size=1, threads=threads)
    requests = [
        GenerationRequest(
            request_id=f"r{i}", prompt="Which? ", n=1, max_tokens=4, temperature=1.0, seed=i
        )
        for i in range(3)
    ]
    results = backend.generate(requests, progress=False)
    first = next(results)
    assert first.request_id == "r0" and len(first.generations) == 1
    assert torch.get_num_threads() == before
    results.close()
