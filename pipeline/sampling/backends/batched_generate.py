"""Unconstrained sampling through transformers' own `generate`, many prompts x samples per forward.

The transformers backend's loop (transformers_backend.py) owns every decoding step: it is
needed for `answer_choices` and gives a sample the same text whatever shares its batch, but
it pays Python work per token per row. Requests without `answer_choices` can go here instead
(`decoder="generate"`):

- one row per sample; rows are grouped by their sampling settings (temperature, top-p,
  token budget: one `generate` call takes one of each), sorted by prompt length, longest
  first (an out-of-memory shows in the first batch, not after an hour), and packed into
  batches of at most `batch_size` rows and `max_batch_tokens` tokens (rows x (longest
  prompt + budget): the KV cache a batch can reach);
- prompts are padded on the left, and each batch runs `model.generate` once;
- the model's own `generation_config` (a checkpoint's top-k, repetition penalty...) is set
  aside for the call: only temperature and top-p apply, as in the loop and in Aletheia's
  evaluation sampling;
- each batch samples under a seed derived from its rows' seeds, on torch's global generator
  forked for the call (the caller's random state is left as it was): a run repeats for the
  same requests, settings and batch limits on the same hardware. Unlike the loop, a sample's
  text depends on the batch it landed in;
- a batch that runs out of GPU memory is split in two and retried, and later batches are
  cut to the size that fitted (warned once).
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.sampling.seeds import derive_seed

log = logging.getLogger(__name__)

CPU_BATCH_TOKENS = 1 << 16  # the default token budget of a batch on a CPU
GPU_MEMORY_SHARE = 0.4  # share of the free GPU memory the default budget's KV cache may take


class SampleRow(Protocol):
    """What the planner and the decoder read of a row (the backend's `_Row` has these)."""

    prompt_ids: list[int]
    temperature: float
    top_p: float
    max_tokens: int
    seed: int


def settings_key(row: SampleRow) -> Hashable:
    return (row.temperature, row.top_p, row.max_tokens)


def plan_batches(
    rows: Sequence[SampleRow], *, batch_size: int, max_batch_tokens: int | None
) -> list[list[int]]:
    """Row indices per batch: same settings, longest prompt first, each batch within both limits.

    A batch's cost is rows x (its longest prompt + budget), since every row is padded to the
    longest; a single row over `max_batch_tokens` still gets a batch of its own."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    groups: dict[Hashable, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(settings_key(r), []).append(i)
    batches: list[list[int]] = []
    for members in groups.values():
        # Longest first; stable, so equal lengths keep request order (a request's samples together).
        members = sorted(members, key=lambda i: -len(rows[i].prompt_ids))
        batch: list[int] = []
        width = 0
        for i in members:
            if not batch:
                width = len(rows[i].prompt_ids) + rows[i].max_tokens
            fits = max_batch_tokens is None or (len(batch) + 1) * width <= max_batch_tokens
            if batch and (len(batch) >= batch_size or not fits):
                batches.append(batch)
                batch, width = [], len(rows[i].prompt_ids) + rows[i].max_tokens
            batch.append(i)
        if batch:
            batches.append(batch)
    return batches


def split_completion(new_ids: Sequence[int], eos_ids: set[int]) -> tuple[list[int], str]:
    """A row of `generate`'s new tokens -> the completion (up to its first EOS, which is left
    out, as the loop leaves it out) and its finish reason (`stop` at an EOS, else `length`)."""
    for k, tok in enumerate(new_ids):
        if tok in eos_ids:
            return list(new_ids[:k]), "stop"
    return list(new_ids), "length"


def kv_bytes_per_token(config: Any, dtype_bytes: int) -> int:
    """KV-cache bytes one token takes in a decoder-only model (keys and values, every layer)."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = text.num_attention_heads
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // heads
    return 2 * text.num_hidden_layers * kv_heads * head_dim * dtype_bytes


def default_batch_tokens(model: Any, device: Any) -> int:
    """On a GPU: the tokens whose KV cache fills GPU_MEMORY_SHARE of the free memory now (the
    rest is left to weights already there, prefill activations and logits); on a CPU: a fixed
    CPU_BATCH_TOKENS."""
    import torch

    if device.type != "cuda":
        return CPU_BATCH_TOKENS
    free, _ = torch.cuda.mem_get_info(device)
    per_token = kv_bytes_per_token(model.config, model.dtype.itemsize)
    return max(4096, int(free * GPU_MEMORY_SHARE) // per_token)


@dataclass
class Decoded:
    tokens: list[int]
    finish_reason: str


class GenerateDecoder:
    """Runs planned batches through `model.generate` (see the module doc)."""

    def __init__(self, model: Any, *, pad_id: int, eos_ids: set[int], device: Any) -> None:
        self.model, self.pad_id, self.eos_ids, self.device = model, pad_id, eos_ids, device
        self.rows_that_fit: int | None = None  # set after an out-of-memory split

    def decode(self, rows: Sequence[SampleRow]) -> list[Decoded]:
        """One planned batch (same settings), cut to the size that fitted after an OOM."""
        step = self.rows_that_fit or len(rows)
        out: list[Decoded] = []
        for start in range(0, len(rows), step):
            out += self._decode_fitting(rows[start : start + step])
        return out

    def _decode_fitting(self, rows: Sequence[SampleRow]) -> list[Decoded]:
        import torch

        try:
            return self._generate(rows)
        except torch.OutOfMemoryError:
            if len(rows) == 1:
                raise
        # Retried here, past the `except`: while the error is being handled its traceback
        # keeps the failed attempt's frames, and their GPU tensors, alive, so a retry from
        # inside the handler runs out of memory too (seen on the H200 at 2,496 rows).
        half = len(rows) // 2
        if self.rows_that_fit is None:
            log.warning(
                "generate: a batch of %d rows ran out of GPU memory; splitting it and "
                "later batches (set max_batch_tokens / batch_size lower to avoid this)",
                len(rows),
            )
        self.rows_that_fit = min(self.rows_that_fit or half, half)
        torch.cuda.empty_cache()
        return self._decode_fitting(rows[:half]) + self._decode_fitting(rows[half:])

    def _generate(self, rows: Sequence[SampleRow]) -> list[Decoded]:
        import torch
        from transformers import GenerationConfig

        first = rows[0]
        width = max(len(r.prompt_ids) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):  # left padding: every row's last prompt token at the edge
            ids[i, width - len(r.prompt_ids) :] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids) :] = 1
        # temperature 0: greedy, as the loop; else no top-k (the library's default is 50)
        sampling = (
            {"do_sample": True, "temperature": first.temperature, "top_p": first.top_p, "top_k": 0}
            if first.temperature > 0
            else {"do_sample": False}
        )
        config = GenerationConfig(
            max_new_tokens=first.max_tokens,
            pad_token_id=self.pad_id,
            eos_token_id=sorted(self.eos_ids),
            **sampling,
        )
        seed = derive_seed("generate-batch", *(r.seed for r in rows))
        cuda = self.device.type == "cuda"
        own = self.model.generation_config
        # Values the call leaves unset would be filled from the model's generation_config.
        self.model.generation_config = GenerationConfig(
            pad_token_id=self.pad_id, eos_token_id=sorted(self.eos_ids)
        )
        try:
            with (
                torch.random.fork_rng(
                    devices=[self.device.index or 0] if cuda else [],
                    device_type=self.device.type if cuda else "cuda",
                ),
                torch.inference_mode(),
            ):
                torch.manual_seed(seed)
                out = self.model.generate(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    generation_config=config,
                )
        finally:
            self.model.generation_config = own
        new = out[:, width:].tolist()
        return [Decoded(*split_completion(row, self.eos_ids)) for row in new]
