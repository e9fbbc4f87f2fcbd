"""Unconstrained sampling of many prompts x samples per forward (the `generate` decoder).

The transformers backend's loop (transformers_backend.py) owns every decoding step: it is
needed for `answer_choices` and gives a sample the same text whatever shares its batch, but
it pays Python work per token per row. Requests without `answer_choices` can go here instead
(`decoder="generate"`):

- one row per sample; rows are grouped by their sampling settings (temperature, top-p,
  token budget: one batch takes one of each), sorted by prompt length, longest first (an
  out-of-memory shows in the first batch, not after an hour), and packed into batches of at
  most `batch_size` rows and `max_batch_tokens` tokens (rows x (longest prompt + budget):
  the KV cache a batch can reach);
- prompts are padded on the left. A batch samples as transformers' `generate` does with
  only temperature and top-p (no top-k; the checkpoint's own `generation_config`, e.g. a
  repetition penalty, does not apply, as in the loop and in Aletheia's evaluation sampling):
  the same tokens as `model.generate` for the same batch and seed, as long as no row has
  been dropped (tests/sampling/test_batched_generate.py checks it). It is our own loop over
  the model's forward, not `generate`, for three reasons measured on an H200 (docs/scale.md,
  "Evaluation speed"): the prompt is run through the model in slices, so a batch is sized by
  its KV cache alone, not by the prefill's activations and attention mask (thousands of rows
  instead of 512); no step waits for the GPU (`generate` checks its stopping criteria with a
  host-device sync every token; here the mask is built ahead and EOS looked at every
  CHECK_EVERY steps), so the Python of the next step overlaps the GPU's work; rows that
  wrote their EOS leave the KV cache once they are COMPACT_SHARE of the batch, where
  `generate` keeps computing them to the batch's end; and the KV cache is allocated once for
  the batch's whole length and written in place, where transformers' dynamic cache copies
  itself into a new, one position longer allocation at every token;
- each batch samples under a seed derived from its rows' seeds, on torch's global generator
  forked for the call (the caller's random state is left as it was): a run repeats for the
  same requests, settings and batch limits on the same hardware. Unlike the loop, a sample's
  text depends on the batch it landed in;
- a batch that runs out of GPU memory is split in two and retried, and later batches are
  cut to the size that fitted (warned once).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.sampling.seeds import derive_seed

log = logging.getLogger(__name__)

CPU_BATCH_TOKENS = 1 << 16  # the default token budget of a batch on a CPU
GPU_MEMORY_SHARE = 0.4  # share of the free GPU memory the default budget's KV cache may take
PREFILL_TOKENS = 1 << 17  # tokens (rows x prompt slice) per prefill forward
CHECK_EVERY = 32  # decoding steps between two looks at which rows have finished (a sync)
COMPACT_SHARE = 0.25  # finished rows are dropped from the cache once they are this share


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
    """Decodes planned batches, many rows per forward (see the module doc)."""

    def __init__(
        self,
        model: Any,
        *,
        pad_id: int,
        eos_ids: set[int],
        device: Any,
        prefill_tokens: int = PREFILL_TOKENS,
        check_every: int = CHECK_EVERY,
        compact_share: float = COMPACT_SHARE,
    ) -> None:
        import inspect

        self.model, self.pad_id, self.eos_ids, self.device = model, pad_id, eos_ids, device
        self.prefill_tokens, self.check_every = prefill_tokens, check_every
        self.compact_share = compact_share
        self.rows_that_fit: int | None = None  # set after an out-of-memory split
        # transformers 5.x renamed `past_key_values` to `cache` in later versions; either works.
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        # Where the decoding time goes, summed over batches (bench/bench_evaluate.py reports it):
        # prompt tokens with and without the batches' left padding, prefill and step seconds
        # (the device waited for at both ends), steps, rows x steps actually computed, and how
        # often finished rows were dropped.
        self.stats: dict[str, float] = dict.fromkeys(
            ("batches", "rows", "prompt_tokens", "padded_prompt_tokens", "prefill_s",
             "steps_s", "steps", "row_steps", "compactions"), 0)  # fmt: skip

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

        first = rows[0]
        width = max(len(r.prompt_ids) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):  # left padding: every row's last prompt token at the edge
            ids[i, width - len(r.prompt_ids) :] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids) :] = 1
        seed = derive_seed("generate-batch", *(r.seed for r in rows))
        cuda = self.device.type == "cuda"
        with (
            torch.random.fork_rng(
                devices=[self.device.index or 0] if cuda else [],
                device_type=self.device.type if cuda else "cuda",
            ),
            torch.inference_mode(),
        ):
            torch.manual_seed(seed)
            new = self._decode_padded(
                ids.to(self.device), mask.to(self.device), first.temperature, first.top_p,
                first.max_tokens,
            )  # fmt: skip
        return [Decoded(*split_completion(row, self.eos_ids)) for row in new.tolist()]

    def _decode_padded(
        self, ids: Any, mask: Any, temperature: float, top_p: float, max_new: int
    ) -> Any:
        """The new tokens of a left-padded batch, (rows, max_new), pad after a row's EOS.

        The KV cache holds the batch's whole length from the start (reserved_cache). The
        prompt goes through the model in slices of at most `prefill_tokens` tokens (rows x
        slice), so a batch's size is bounded by its KV cache, not by the prefill's activations
        and attention mask. Then one token per step for every row still running, with no
        host-device sync per step (the mask is built ahead, EOS is checked every `check_every`
        steps), and the rows that finished are dropped from the cache once they are a
        `compact_share` of the batch: the steps after them cost only the rows still writing."""
        import torch

        rows, width = ids.shape
        dev = ids.device
        stats = self.stats
        stats["batches"] += 1
        stats["rows"] += rows
        stats["padded_prompt_tokens"] += rows * width
        stats["prompt_tokens"] += int(mask.sum())
        started = time.perf_counter()
        cache, own_mask = reserved_cache(self.model.config, width + max_new)
        # Positions as transformers' generate numbers them: pads 1, real tokens from 0.
        pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        step = max(1, min(width, self.prefill_tokens // rows))
        for start in range(0, width, step):
            end = min(width, start + step)
            out = self.model(
                input_ids=ids[:, start:end], attention_mask=mask[:, :end],
                position_ids=pos[:, start:end], use_cache=True, logits_to_keep=1,
                **{self._cache_kw: cache},
            )  # fmt: skip
        logits = out.logits[:, -1].float()
        del out
        _sync(dev)
        stats["prefill_s"] += time.perf_counter() - started
        started = time.perf_counter()
        # The whole mask ahead: prompt columns as given, every generated column attended.
        full = torch.cat(
            [mask.bool(), torch.ones((rows, max_new), dtype=torch.bool, device=dev)], 1
        )
        nxt_pos = mask.sum(-1)
        eos = torch.tensor(sorted(self.eos_ids), device=dev)
        tokens = torch.full((rows, max_new), self.pad_id, dtype=torch.long, device=dev)
        alive = torch.arange(rows, device=dev)  # batch row -> the row it writes
        done = torch.zeros(rows, dtype=torch.bool, device=dev)
        for t in range(max_new):
            nxt = sample_tokens(logits, temperature, top_p)
            nxt = nxt.masked_fill(done, self.pad_id)
            tokens[alive, t] = nxt
            done |= torch.isin(nxt, eos)
            if t + 1 == max_new:
                break
            if (t + 1) % self.check_every == 0:
                finished = int(done.sum())  # the one sync, every check_every steps
                if finished == len(alive):
                    break
                if finished >= self.compact_share * len(alive):
                    keep = (~done).nonzero().squeeze(1)
                    cache.batch_select_indices(keep)
                    full, nxt_pos, alive, nxt = full[keep], nxt_pos[keep], alive[keep], nxt[keep]
                    done = done[keep]
                    stats["compactions"] += 1
            stats["steps"] += 1
            stats["row_steps"] += len(alive)
            seen = full[:, : width + t + 1]
            # Our own 4-D mask (every layer attends to every kept column) spares transformers
            # building one per step; a model with sliding-window layers gets its own masks.
            attend = seen[:, None, None, :].contiguous() if own_mask else seen.long()
            out = self.model(
                input_ids=nxt[:, None], attention_mask=attend, position_ids=nxt_pos[:, None],
                use_cache=True, **{self._cache_kw: cache},
            )  # fmt: skip
            logits = out.logits[:, -1].float()
            nxt_pos = nxt_pos + 1
        _sync(dev)
        stats["steps_s"] += time.perf_counter() - started
        return tokens


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reserved_cache(config: Any, capacity: int) -> tuple[Any, bool]:
    """transformers' DynamicCache for `config`, its full-attention layers replaced by ones
    that hold `capacity` positions from the start (ReservedLayer); and whether every layer
    is such a layer (then one 4-D mask serves them all)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    cache = DynamicCache(config=config)
    full = [type(layer) is DynamicLayer for layer in cache.layers]
    cache.layers = [
        reserved_layer_class()(capacity) if plain else layer
        for layer, plain in zip(cache.layers, full, strict=True)
    ]
    return cache, all(full)


@functools.cache
def reserved_layer_class() -> type:
    """A DynamicLayer whose keys and values live in buffers of a fixed number of positions,
    allocated at its first update: each later update writes its positions in place and the
    layer's keys are a view of the filled part. transformers' own layer concatenates the whole
    cache with each new token (a copy of every layer's cache per step, and a new allocation of
    a slightly larger size each time: on the H200, 38% of a decoding step's GPU time and
    allocator frees that stall it; docs/scale.md)."""
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):
        def __init__(self, capacity: int) -> None:
            super().__init__()
            self.capacity, self.length = capacity, 0

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any):
            if not self.is_initialized:
                self.dtype, self.device = key_states.dtype, key_states.device
                rows, heads, _, dim = key_states.shape
                self._keys = key_states.new_empty((rows, heads, self.capacity, dim))
                rows, heads, _, dim = value_states.shape
                self._values = value_states.new_empty((rows, heads, self.capacity, dim))
                self.is_initialized = True
            start, end = self.length, self.length + key_states.shape[-2]
            if end > self.capacity:
                raise ValueError(f"cache of {self.capacity} positions asked to hold {end}")
            self._keys[:, :, start:end] = key_states
            self._values[:, :, start:end] = value_states
            self.length = end
            self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            if self.length:
                self._keys, self._values = self._keys[indices], self._values[indices]
                self.keys = self._keys[:, :, : self.length]
                self.values = self._values[:, :, : self.length]

    return ReservedLayer


def sample_tokens(logits: Any, temperature: float, top_p: float) -> Any:
    """One token per row, as transformers' `generate` samples with these settings and no
    top-k: greedy at temperature 0, else temperature, then the top-p nucleus (the smallest
    set of most likely tokens whose mass exceeds top_p), then one draw from torch's global
    generator (the same draws, so the same tokens for the same logits and seed)."""
    import torch

    if temperature <= 0:
        return logits.argmax(-1)
    scores = logits / temperature
    if top_p < 1.0:
        ordered, order = torch.sort(scores, descending=False)
        drop = ordered.softmax(-1).cumsum(-1) <= (1 - top_p)
        drop[..., -1:] = False  # the most likely token always stays
        scores = scores.masked_fill(drop.scatter(1, order, drop), -float("inf"))
    return torch.multinomial(scores.softmax(-1), num_samples=1).squeeze(1)
