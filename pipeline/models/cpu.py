"""The same CPU float math on every x86-64 machine: PyTorch's kernels pinned to AVX2.

PyTorch picks its CPU kernels by the newest vector unit it finds (AVX512 on one machine,
AVX2 on another of the "same kind" but an older CPU generation), and those kernels sum in
different orders. Measured here: fitting the demo's weak policy for 40 steps gave other
weights (and another loss) with AVX512 kernels than with AVX2 ones, so two machines
fitted different policies, sampled different programs and published different rows.
Pinning the kernels to AVX2 (`ATEN_CPU_CAPABILITY`, and MKL's conditional numerical
reproducibility branch `MKL_CBWR`) makes every machine with AVX2 (every x86-64 server of
the last decade) compute the same floats; the cost on the demo's tiny models is nil.

The choice is made once per process, at the first kernel PyTorch runs, so the pin must
come first: the flows' model tasks and `fit_policy` call `pin_cpu_kernels()` before any
torch work. `ALETHEIA_CPU_KERNELS=native` leaves PyTorch's own choice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import threading
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "ALETHEIA_CPU_KERNELS"
_PIN = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def pin_cpu_kernels() -> str:
    """Pin PyTorch's CPU kernels to AVX2 (unless the user set them or opted out); returns
    the capability PyTorch uses from now on ("AVX2", or what it had already chosen)."""
    wanted = os.environ.get(ENV, "avx2").lower()
    if wanted == "avx2" and platform.machine().lower() in ("x86_64", "amd64") and _has_avx2():
        for key, value in _PIN.items():
            os.environ.setdefault(key, value)  # a user's own setting wins
    import torch

    chosen = torch.backends.cpu.get_cpu_capability()  # fixed from here on in this process
    asked = os.environ.get("ATEN_CPU_CAPABILITY")
    if asked and chosen.lower() != asked.lower():
        log.warning(
            "PyTorch already chose %s CPU kernels in this process before they could be "
            "pinned to %s: its floats (fitted policies, sampled text) may differ from a "
            "build on another CPU",
            chosen,
            asked,
        )
    return chosen


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's CPU threads set to `n` in the calling thread while inside (None: left alone).

    With the OpenMP builds torch ships for CPUs, the setting belongs to the thread that
    makes it (OpenMP's per-thread ICV; MKL's is per thread too): model tasks running side
    by side on threads of one process (two policy fits, two sampling shards) each set their
    own, and each restores its own on the way out, so one finishing never changes another's
    count midway and nothing is left behind if another holder is still inside.
    """
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_LOADING = threading.RLock()


@contextlib.contextmanager
def building_models() -> Iterator[None]:
    """One model built or loaded at a time in this process.

    transformers builds a model under process-wide patches (weight initialisation turned
    off, `torch.linspace` rewrapped, the meta device): two loads on two threads (two DPO
    or sampling shards side by side) interleave them, and one got a model whose weights
    were never loaded ("Cannot copy out of meta tensor"). Loading is brief; generating,
    which needs no lock, stays side by side.
    """
    with _LOADING:
        yield


_IMPORTS = threading.Lock()


def resolve_model_classes() -> None:
    """transformers resolves its classes lazily, and not thread-safely: two model tasks
    starting side by side (`runner.model_parallel_shards`) failed with "cannot import name
    'GraniteConfig'". Resolve the ones the model stages use once, under a lock."""
    with _IMPORTS:
        import transformers

        for name in (
            "AutoTokenizer",
            "AutoModelForCausalLM",
            "GraniteConfig",
            "GraniteForCausalLM",
            "PreTrainedTokenizerFast",
        ):
            getattr(transformers, name)
