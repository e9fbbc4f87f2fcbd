"""Verifier training sequences rendered by the project: the prompt as the model sees it when it
generates, then the assistant turn character for character, closed with EOS.

TRL's conversational DPO and SFT tokenization renders prompt + assistant turn through the
model's chat template, and a template may rewrite the turn: DeepSeek-R1-Distill-Qwen's keeps
only the text after the last `</think>` (Qwen3's moves and re-spaces the reasoning), so the
loss would see `\\boxed{X}` without the reasoning, and TRL only warns once. Aletheia trains
those models with a chat template of its own that keeps the turn. Here the trainers get text
(TRL's non-conversational prompt / completion), rendered once, the same way for every model:

- the prompt: a Think turn's `<think>\\n` pre-fill continued exactly as GRPO and the sampling
  backends render it (`render_prefilled`); otherwise the template's generation prompt. The
  BOS a template writes is left out where the tokenizer adds its own, so there is one;
- the completion: the rest of the assistant turn unchanged, then the template's end of turn
  up to and including EOS (EOS alone where the template closes the turn without it).

So every token of the response is trained, whatever the template does to an assistant turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from datasets import Dataset

from pipeline.common.verifier_prompt import THINK_PREFILL
from pipeline.train.data import render_prefilled, without_template_bos

Turns = list[dict[str, str]]

# Probe texts: no whitespace at their ends, nothing a template would strip or escape.
_ANSWER_PROBE = "PROBE-ANSWER-7f3a"
_REASONING_PROBE = "PROBE-REASONING-7f3a"


def generation_prompt(prompt: Turns, tokenizer: Any) -> str:
    """The prompt turns and the template's generation prompt, as a text prompt the tokenizer
    encodes (one BOS)."""
    text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    return without_template_bos(text, tokenizer)


def _probe(tokenizer: Any, answer: str) -> str:
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": answer}],
        tokenize=False,
    )


def turn_end(tokenizer: Any) -> str:
    """What the template writes after an assistant turn's content, cut after EOS (EOS where the
    template writes none): `<｜end▁of▁sentence｜>` for R1-Distill, `<|im_end|>` for ChatML."""
    text = _probe(tokenizer, _ANSWER_PROBE)
    at = text.rfind(_ANSWER_PROBE)
    if at < 0:
        raise ValueError(
            "the chat template does not write an assistant turn's content; it cannot render "
            "verifier training sequences"
        )
    tail = text[at + len(_ANSWER_PROBE) :]
    eos = tokenizer.eos_token or ""
    if eos and eos in tail:
        return tail[: tail.index(eos) + len(eos)]
    return tail + eos


def template_behaviour(tokenizer: Any) -> str:
    """What the model's chat template does to an assistant turn `<think>R</think>A`: `keeps`
    it, `drops` the reasoning (R1-Distill's), or `rewrites` it (e.g. re-spaces it)."""
    turn = f"<think>\n{_REASONING_PROBE}\n</think>\n{_ANSWER_PROBE}"
    text = _probe(tokenizer, turn)
    if turn in text:
        return "keeps"
    return "rewrites" if _REASONING_PROBE in text else "drops"


@dataclass(frozen=True)
class Renderer:
    """Renders (prompt turns, assistant turn) pairs for one tokenizer (its end of turn probed once)."""

    tokenizer: Any
    end: str

    @classmethod
    def of(cls, tokenizer: Any) -> Renderer:
        return cls(tokenizer, turn_end(tokenizer))

    def prompt(self, prompt: Turns, prefill: str = "") -> str:
        """The prompt text generation sees (the pre-fill continued when there is one)."""
        if not prefill:
            return generation_prompt(prompt, self.tokenizer)
        return render_prefilled(
            [*prompt, {"role": "assistant", "content": prefill}], self.tokenizer
        )

    def pair(self, prompt: Turns, turn: Turns, rendered: dict[str, str] | None = None):
        """(prompt text, completion text) of one assistant turn after `prompt`; `rendered`
        caches the prompt's text by pre-fill (a DPO row's chosen and rejected share it)."""
        if len(turn) != 1 or turn[0].get("role") != "assistant":
            raise ValueError(
                f"expected one assistant turn, got roles {[m.get('role') for m in turn]}"
            )
        content = turn[0]["content"]
        prefill = THINK_PREFILL if content.startswith(THINK_PREFILL) else ""
        rendered = {} if rendered is None else rendered
        if prefill not in rendered:
            rendered[prefill] = self.prompt(prompt, prefill)
        text = rendered[prefill]
        # The prompt ends with the pre-fill (a template may strip its newline): the completion
        # is the turn after what the prompt already holds.
        held = next((p for p in (prefill, prefill.rstrip()) if text.endswith(p)), None)
        if held is None:
            raise ValueError(
                f"the chat template does not end the prompt with the pre-fill {prefill!r}"
            )
        body = content[len(held) :]
        eos = self.tokenizer.eos_token
        return text, body if eos and body.endswith(eos) else body + self.end


def _is_turns(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value)


def as_text(dataset: Dataset, tokenizer: Any) -> Dataset:
    """Conversational prompt / completion (SFT) or prompt / chosen / rejected (DPO) rows as TRL's
    text rows, rendered by `Renderer`; rows already in text are returned as they are."""
    if len(dataset) == 0 or not _is_turns(dataset[0]["prompt"]):
        return dataset
    render = Renderer.of(tokenizer)
    fields = [f for f in ("completion", "chosen", "rejected") if f in dataset.column_names]
    rows = []
    for i, row in enumerate(dataset):
        out: dict[str, str] = {}
        rendered: dict[str, str] = {}
        for field in fields:
            try:
                text, out[field] = render.pair(row["prompt"], row[field], rendered)
            except ValueError as e:
                raise ValueError(f"row {i}: field {field}: {e}") from e
            if out.setdefault("prompt", text) != text:  # one prompt for chosen and rejected
                raise ValueError(
                    f"row {i}: field {field}: {fields[0]} and {field} must both open with "
                    f"the pre-fill {THINK_PREFILL!r} or both not (one prompt for the pair)"
                )
        rows.append(out)
    return Dataset.from_list(rows)


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def split_tokens(tokenizer: Any, prompt: str, completions: Sequence[str]) -> tuple[list, list]:
    """(prompt ids, [completion ids]) as TRL 1.16 tokenizes text rows (DPOTrainer and
    SFTTrainer `_prepare_dataset`): the prompt alone and prompt + completion, each with the
    tokenizer's special tokens; the completion starts where the two first differ (a token
    that merges across the boundary moves into the completion)."""
    prompt_ids = tokenizer(text=prompt)["input_ids"]
    fulls = [tokenizer(text=prompt + c)["input_ids"] for c in completions]
    cut = min(common_prefix_length(prompt_ids, f) for f in fulls)
    return prompt_ids[:cut], [f[cut:] for f in fulls]
