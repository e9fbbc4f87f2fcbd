"""`transformers` backend: small models on CPU or one GPU, with our own decoding loop.

Two decoders for requests without `answer_choices` (`decoder=`): `loop` (the default, below)
and `generate` (transformers' own `generate` over large length-sorted batches, much faster on
a GPU: batched_generate.py). Requests with `answer_choices` always take the loop.

Why our own loop instead of `model.generate`:
- every sample row gets its own `torch.Generator`, so a (request, seed, sample index)
  gives the same text whatever else shares its batch's sampling calls;
- `answer_choices` needs constrained decoding with per-row state (free text, forced
  `\\boxed{`, a choice restricted to the listed answers, forced `}`), which is easiest
  to get right in a loop that owns every step.

Tokens a row decides to drop (text written past a `\\boxed{` the model wrote itself)
stay in the KV cache but are masked out, and later positions are counted over the
unmasked tokens only, so the model sees exactly the kept text.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.markup import escape

from pipeline.common.cpu import building_models, torch_threads
from pipeline.sampling.backends.base import (
    Backend,
    Generation,
    GenerationRequest,
    GenerationResult,
    continues_final_message,
)
from pipeline.sampling.backends.batched_generate import (
    GenerateDecoder,
    default_batch_tokens,
    plan_batches,
)
from pipeline.sampling.seeds import derive_seed

BOXED_OPEN = "\\boxed{"
BOXED_CLOSE = "}"


def local_model_revision(model: str | Path) -> str | None:
    """For a local folder: a short hash of its small files (config, tokenizer) and file sizes."""
    path = Path(model)
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f.relative_to(path).as_posix().encode())
        size = f.stat().st_size
        h.update(str(size).encode())
        if size <= 1 << 20:  # weights are identified by size + the config that made them
            h.update(f.read_bytes())
    return "local:" + h.hexdigest()[:16]


def default_dtype(device: Any) -> Any:
    """The weights' dtype when none is asked for: bf16 on a GPU (half the memory traffic of
    fp32 per decoding step), fp32 on a CPU (where bf16 matrix work is slow or emulated)."""
    import torch

    return torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32


@dataclass
class _Row:
    """One sample being decoded: its phase, its tokens, its private random stream."""

    request_index: int
    sample_index: int
    prompt_ids: list[int]
    temperature: float
    top_p: float
    max_tokens: int
    generator: Any  # torch.Generator
    seed: int  # the sample's own seed (the generator's; the generate decoder's batch seeds)
    choices: list[list[int]] | None = None  # token ids of each answer choice
    choice_texts: list[str] | None = None
    free_budget: int = 0
    tokens: list[int] = field(default_factory=list)  # kept completion tokens
    text_parts: list[str] = field(default_factory=list)  # exact text, built piecewise
    forced: list[int] = field(default_factory=list)
    phase: str = "free"  # free | open | choice | close | done
    choice_prefix: list[int] = field(default_factory=list)
    chosen: str | None = None
    finish_reason: str = "length"
    masked_positions: list[int] = field(default_factory=list)  # cache columns to mask out
    masked_total: int = 0  # how many generated tokens were cut (for tests and debugging)


class TransformersBackend(Backend):
    """Generation with a Hugging Face causal LM loaded in this process."""

    name = "transformers"

    def __init__(
        self,
        model: str | Path,
        *,
        device: str | None = None,
        dtype: Any = None,
        batch_size: int = 8,
        revision: str | None = None,
        chat_template: str | None = None,
        model_name: str | None = None,
        decoder: Literal["loop", "generate"] = "loop",
        max_batch_tokens: int | None = None,
        threads: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if decoder not in ("loop", "generate"):
            raise ValueError(f"decoder must be loop or generate, got {decoder!r}")
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens must be >= 1, got {max_batch_tokens}")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if dtype is None:
            dtype = default_dtype(self.device)
        elif isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        self.model_name = model_name or str(model)
        self.revision = revision or local_model_revision(model)
        self.batch_size = batch_size  # rows decoded together (either decoder)
        self.decoder = decoder
        self.threads = threads  # torch CPU threads while generating (None: torch's default)
        with building_models():  # not thread-safe in transformers: one load at a time
            self.tokenizer = AutoTokenizer.from_pretrained(str(model), revision=revision)
            if chat_template is not None:
                self.tokenizer.chat_template = chat_template
            self.model = AutoModelForCausalLM.from_pretrained(
                str(model), revision=revision, dtype=dtype
            )
            self.model.to(self.device).eval()
        self.max_positions = int(getattr(self.model.config, "max_position_embeddings", 1 << 30))
        # transformers 5.x renamed `past_key_values` to `cache`; accept either version.
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self.eos_ids = self._eos_ids()
        self.pad_id = (
            self.tokenizer.pad_token_id
            if self.tokenizer.pad_token_id is not None
            else next(iter(self.eos_ids))
        )
        # generate decoder: tokens a batch may reach (rows x (longest prompt + budget))
        self.max_batch_tokens = (
            max_batch_tokens
            if max_batch_tokens is not None or decoder == "loop"
            else default_batch_tokens(self.model, self.device)
        )
        self._generate_decoder = GenerateDecoder(
            self.model, pad_id=self.pad_id, eos_ids=self.eos_ids, device=self.device
        )
        # Wall seconds spent per phase, over every generate() call (bench/bench_evaluate.py
        # reports them): rendering and tokenizing prompts, decoding, detokenizing.
        self.timings = {"prompts_s": 0.0, "decode_s": 0.0, "detokenize_s": 0.0}

    # ----------------------------------------------------------------- helpers
    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for src in (self.model.generation_config.eos_token_id, self.tokenizer.eos_token_id):
            if src is None:
                continue
            ids.update(src if isinstance(src, list) else [src])
        if not ids:
            raise ValueError(f"{self.model_name}: no EOS token in tokenizer or generation config")
        return ids

    def render_prompt(self, request: GenerationRequest) -> str:
        """The exact prompt text the model sees (chat template applied for messages)."""
        if request.prompt is not None:
            return request.prompt
        if not self.tokenizer.chat_template:
            raise ValueError(
                f"request {request.request_id}: chat messages given but {self.model_name} "
                "has no chat template (set chat_template=...)"
            )
        cont = continues_final_message(request.messages)
        return self.tokenizer.apply_chat_template(
            request.messages,
            tokenize=False,
            add_generation_prompt=not cont,
            continue_final_message=cont,
            **(request.chat_template_kwargs or {}),
        )

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def _rows_for(self, index: int, request: GenerationRequest) -> list[_Row] | Generation:
        import torch

        prompt_ids = self.encode(self.render_prompt(request))
        if not prompt_ids:
            prompt_ids = [next(iter(self.eos_ids))]
        if len(prompt_ids) + request.max_tokens > self.max_positions:
            return Generation(
                text="",
                finish_reason=f"error:prompt_too_long ({len(prompt_ids)} + {request.max_tokens} "
                f"tokens > {self.max_positions})",
                prompt_tokens=len(prompt_ids),
                completion_tokens=0,
            )
        choices = choice_texts = None
        free_budget = request.max_tokens
        if request.answer_choices:
            choice_texts = list(request.answer_choices)
            choices = [self.encode(c) for c in choice_texts]
            if any(not c for c in choices) or len(set(map(tuple, choices))) != len(choices):
                raise ValueError(
                    f"request {request.request_id}: answer_choices must be distinct, non-empty"
                )
            reserve = (
                len(self.encode(BOXED_OPEN))
                + max(map(len, choices))
                + len(self.encode(BOXED_CLOSE))
            )
            free_budget = max(0, request.max_tokens - reserve)
        base_seed = request.seed if request.seed is not None else derive_seed(request.request_id)
        rows = []
        for s in range(request.n):
            seed = derive_seed(base_seed, s)
            g = torch.Generator(device="cpu")
            g.manual_seed(seed)
            rows.append(
                _Row(
                    request_index=index,
                    sample_index=s,
                    prompt_ids=prompt_ids,
                    temperature=request.temperature,
                    top_p=request.top_p,
                    max_tokens=request.max_tokens,
                    generator=g,
                    seed=seed,
                    choices=choices,
                    choice_texts=choice_texts,
                    free_budget=free_budget,
                )
            )
        return rows

    # ----------------------------------------------------------------- sampling
    @staticmethod
    def _sample(logits: Any, row: _Row, allowed: list[int] | None = None) -> int:
        """One token from the model's own distribution (restricted to `allowed` if given)."""
        import torch

        logits = logits.float()
        if allowed is not None:
            idx = torch.tensor(allowed, dtype=torch.long)
            sub = logits.index_select(0, idx)
            if row.temperature <= 0:
                return allowed[int(sub.argmax())]
            probs = torch.softmax(sub / row.temperature, dim=-1)
            return allowed[int(torch.multinomial(probs, 1, generator=row.generator))]
        if row.temperature <= 0:
            return int(logits.argmax())
        probs = torch.softmax(logits / row.temperature, dim=-1)
        if row.top_p < 1.0:
            sorted_p, order = probs.sort(descending=True)
            cum = sorted_p.cumsum(0)
            keep = cum - sorted_p < row.top_p  # always keeps the most likely token
            sorted_p = sorted_p * keep
            pick = torch.multinomial(sorted_p / sorted_p.sum(), 1, generator=row.generator)
            return int(order[pick])
        return int(torch.multinomial(probs, 1, generator=row.generator))

    def _next_token(self, row: _Row, logits: Any) -> int | None:
        """Decide the row's next token and advance its phase; None when the row is done."""
        if row.phase == "done":
            return None
        if row.forced:
            tok = row.forced.pop(0)
            if not row.forced and row.phase == "open":
                row.phase = "choice"
            elif not row.forced and row.phase == "close":
                row.phase = "done"
            return tok
        if row.phase == "choice":
            assert row.choices is not None and row.choice_texts is not None
            depth = len(row.choice_prefix)
            live = [c for c in row.choices if c[:depth] == row.choice_prefix]
            complete = [c for c in live if len(c) == depth]
            if complete:  # a whole choice spelled; unique since choices are distinct
                row.chosen = row.choice_texts[row.choices.index(complete[0])]
                row.phase = "close"
                row.forced = self.encode(BOXED_CLOSE)
                row.text_parts += [row.chosen, BOXED_CLOSE]
                return self._next_token(row, logits)
            allowed = sorted({c[depth] for c in live})
            tok = self._sample(logits, row, allowed)
            row.choice_prefix.append(tok)
            return tok
        # free text
        if len(row.tokens) >= row.free_budget:
            row.finish_reason = "length"
            if row.choices is None:
                row.phase = "done"
                return None
            return self._start_answer(row, logits)
        tok = self._sample(logits, row)
        if tok in self.eos_ids:
            row.finish_reason = "stop"
            if row.choices is None:
                row.phase = "done"
                return None
            return self._start_answer(row, logits)
        return tok

    def _start_answer(self, row: _Row, logits: Any) -> int:
        row.phase = "open"
        row.forced = self.encode(BOXED_OPEN)
        row.text_parts = [self._decode(row.tokens), BOXED_OPEN]
        return self._next_token(row, logits)  # type: ignore[return-value]

    def _check_model_opened_box(self, row: _Row, base_col: int) -> None:
        """If the free text now contains `\\boxed{`, keep the text before it and force the rest.

        Tokens written past the cut stay in the cache but are masked out (see module doc).
        """
        text = self._decode(row.tokens)
        cut = text.find(BOXED_OPEN)
        if cut < 0:
            return
        keep = len(row.tokens)
        while keep > 0 and len(self._decode(row.tokens[:keep])) > cut:
            keep -= 1
        kept_text = self._decode(row.tokens[:keep])
        if not text.startswith(kept_text):  # a split multi-byte char: fall back to the text itself
            kept_text = text[:cut]
        row.masked_positions.extend(base_col + i for i in range(keep, len(row.tokens)))
        row.masked_total += len(row.tokens) - keep
        row.tokens = row.tokens[:keep]
        row.finish_reason = "stop"
        row.phase = "open"
        row.text_parts = [text[:cut], BOXED_OPEN]
        row.forced = self.encode(text[len(kept_text) : cut] + BOXED_OPEN)

    # ----------------------------------------------------------------- decoding
    def _decode_batch(self, rows: list[_Row]) -> None:
        import torch

        dev = self.device
        # A request's samples share one prompt (the same list): it is read once, and each
        # sample then decodes from its own copy of that prompt's cache.
        prompts = list({id(r.prompt_ids): r.prompt_ids for r in rows}.values())
        shared = len(prompts) < len(rows)
        place = {id(p): i for i, p in enumerate(prompts)}
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):  # left padding
            ids[i, width - len(p) :] = torch.tensor(p)
            mask[i, width - len(p) :] = 1
        ids, mask = ids.to(dev), mask.to(dev)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = None
        step_input, step_pos = ids, positions
        with torch.inference_mode():
            while True:
                out = self.model(
                    input_ids=step_input,
                    attention_mask=mask,
                    position_ids=step_pos,
                    use_cache=True,
                    logits_to_keep=1,
                    **({self._cache_kw: cache} if cache is not None else {}),
                )
                cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
                logits = out.logits[:, -1, :].float().cpu()
                if shared:  # after the prompts' pass: one row per sample from here on
                    of_row = torch.tensor([place[id(r.prompt_ids)] for r in rows])
                    cache.batch_select_indices(of_row.to(dev))
                    mask, logits, shared = mask[of_row.to(dev)], logits[of_row], False
                nxt, alive = [], []
                for i, r in enumerate(rows):
                    tok = self._next_token(r, logits[i])
                    if tok is None:
                        nxt.append(self.pad_id)
                        alive.append(0)
                        continue
                    nxt.append(tok)
                    alive.append(1)
                    r.tokens.append(tok)
                    if r.phase == "free" and r.choices is not None:
                        # completion token k sits in cache column width + k until a cut
                        self._check_model_opened_box(r, width)
                if not any(alive):
                    break
                if not all(alive):  # finished rows leave the batch: no compute spent on them
                    keep = [i for i, a in enumerate(alive) if a]
                    cache.batch_select_indices(torch.tensor(keep, device=dev))
                    mask = mask[keep]
                    rows = [rows[i] for i in keep]
                    nxt = [nxt[i] for i in keep]
                col = torch.ones((len(rows), 1), dtype=torch.long, device=dev)
                mask = torch.cat([mask, col], dim=1)
                for i, r in enumerate(rows):
                    if r.masked_positions:
                        mask[i, r.masked_positions] = 0
                        r.masked_positions = []
                step_pos = (mask[:, :-1].sum(-1, keepdim=True)).to(dev)
                step_input = torch.tensor(nxt, dtype=torch.long, device=dev).unsqueeze(1)

    def _finish_all(self, rows: list[_Row]) -> list[Generation]:
        """The batch's generations; free-text rows detokenized in one call (the fast
        tokenizer's batch decode, the same text as one row at a time)."""
        free = [r for r in rows if r.choices is None]
        if not free:
            return [self._finish(r) for r in rows]
        texts = dict(
            zip(
                map(id, free),
                self.tokenizer.batch_decode([r.tokens for r in free], skip_special_tokens=False),
                strict=True,
            )
        )
        return [self._finish(r, texts.get(id(r))) for r in rows]

    def _finish(self, row: _Row, text: str | None = None) -> Generation:
        if row.choices is not None:
            text = "".join(row.text_parts)
            if row.chosen is None:
                raise RuntimeError(
                    "constrained decoding ended without a choice"
                )  # a bug, not input
        elif text is None:
            text = self._decode(row.tokens)
        return Generation(
            text=text,
            finish_reason=row.finish_reason,
            prompt_tokens=len(row.prompt_ids),
            completion_tokens=len(row.tokens),
        )

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        from rich.progress import Progress

        requests = list(requests)
        done: dict[int, list[Generation | None]] = {}
        rows: list[_Row] = []
        started = time.perf_counter()
        for i, req in enumerate(requests):
            made = self._rows_for(i, req)
            if isinstance(made, Generation):  # cannot run at all: every sample says why
                yield self._result(req, [made] * req.n)
                continue
            done[i] = [None] * req.n
            rows.extend(made)
        self.timings["prompts_s"] += time.perf_counter() - started
        fast = [r for r in rows if self.decoder == "generate" and r.choices is None]
        looped = [r for r in rows if not (self.decoder == "generate" and r.choices is None)]
        # Similar lengths together: less padding. Stable, so batches are deterministic.
        looped.sort(key=lambda r: len(r.prompt_ids))
        batches = self._batches(fast, looped)
        with Progress(disable=not progress, transient=True) as bar:
            task = bar.add_task(f"generate {escape(self.model_name)}", total=len(rows))
            while True:
                # The thread setting is held while a batch decodes, never across a yield: a
                # consumer that stops early (or resumes us on another thread) would otherwise
                # keep this backend's count in its thread until the generator is collected.
                started = time.perf_counter()
                with torch_threads(self.threads):
                    batch = next(batches, None)
                self.timings["decode_s"] += time.perf_counter() - started
                if batch is None:
                    break
                started = time.perf_counter()
                for r, g in zip(batch, self._finish_all(batch), strict=True):
                    done[r.request_index][r.sample_index] = g
                self.timings["detokenize_s"] += time.perf_counter() - started
                for index in dict.fromkeys(r.request_index for r in batch):
                    slots = done[index]
                    if all(g is not None for g in slots):
                        yield self._result(requests[index], slots)  # type: ignore[arg-type]
                        del done[index]
                bar.advance(task, len(batch))

    def _batches(self, fast: list[_Row], looped: list[_Row]) -> Iterator[list[_Row]]:
        """Decode the rows batch by batch, yielding each batch once its rows are finished."""
        plan = plan_batches(
            fast, batch_size=self.batch_size, max_batch_tokens=self.max_batch_tokens
        )
        for indices in plan:
            batch = [fast[i] for i in indices]
            for r, got in zip(batch, self._generate_decoder.decode(batch), strict=True):
                r.tokens, r.finish_reason, r.phase = got.tokens, got.finish_reason, "done"
            yield batch
        # Similar lengths together: less padding. Stable, so batches are deterministic.
        looped.sort(key=lambda r: len(r.prompt_ids))
        for start in range(0, len(looped), self.batch_size):
            batch = looped[start : start + self.batch_size]
            self._decode_batch(batch)
            yield batch

    def _result(self, request: GenerationRequest, gens: list[Generation]) -> GenerationResult:
        return GenerationResult(
            request_id=request.request_id,
            model=self.model_name,
            model_revision=self.revision,
            backend=self.name,
            generations=list(gens),
        )

    def close(self) -> None:
        import gc

        import torch

        self.model = None  # type: ignore[assignment]
        self._generate_decoder = None  # type: ignore[assignment]  # it holds the model too
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "revision": self.revision,
            "device": str(self.device),
            "dtype": str(self.model.dtype).removeprefix("torch.") if self.model else None,
            "decoder": self.decoder,
            "batch_size": self.batch_size,
            "max_batch_tokens": self.max_batch_tokens,
        }


__all__ = ["TransformersBackend", "default_dtype", "derive_seed", "local_model_revision"]
