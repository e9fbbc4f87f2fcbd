"""Verifier rewards for GRPO: plain functions on one completion, plus TRL-shaped wrappers.

A verifier completion answers with the letter of the correct candidate in its last
`\\boxed{X}` (parsed by `pipeline.instances.dpo.parse.parse_boxed_answer`, the same
parser the evaluation and the DPO stage use). The rewards:

- accuracy: 1.0 when the parsed letter is the gold letter, else 0.0 (invalid = 0.0).
- format: 0.0 when the response has the shape its prompt variant asks for, else
  `-penalty`. think: `<think>` (optional: chat templates may pre-fill it) ... `</think>`
  exactly once, then a valid box after it. no_think: no think tags, a valid box.
- overlong: DAPO's soft overlong punishment on the completion's token count `L`, with
  budget `L_max` and buffer `L_buf`: 0 while `L <= L_max - L_buf`, then a linear ramp
  `(L_max - L_buf - L) / L_buf` down to -1 at `L_max`, and -1 beyond it.
- rank_aware: 1.0 for the gold letter; for a wrong pick `-(pass_rate[gold] -
  pass_rate[pick])`, so a near miss (passes 90% of tests) costs -0.1 and a candidate
  that fails everything costs -1.0; an invalid answer costs -1.0.

TRL (1.16) calls a reward function as `f(prompts=, completions=, completion_ids=,
**dataset_columns, trainer_state=, log_extra=, log_metric=)` and sums the functions'
outputs with `GRPOConfig.reward_weights`; `make_reward_funcs` builds those callables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pipeline.instances.dpo.parse import parse_boxed_answer
from schemas.instance import ANSWER_LETTERS

Variant = Literal["think", "no_think"]
RewardFunc = Callable[..., list[float | None]]

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


def completion_text(completion: str | list[dict[str, str]]) -> str:
    """TRL passes plain strings (standard format) or message lists (conversational)."""
    if isinstance(completion, str):
        return completion
    return "".join(
        m.get("content") or "" for m in completion if m.get("role", "assistant") == "assistant"
    )


def accuracy_reward(text: str, gold: str, num_candidates: int) -> float:
    return 1.0 if parse_boxed_answer(text, num_candidates) == gold else 0.0


def format_ok(text: str, num_candidates: int, variant: Variant) -> bool:
    if variant == "no_think":
        if _THINK_OPEN in text or _THINK_CLOSE in text:
            return False
        return parse_boxed_answer(text, num_candidates) is not None
    if text.count(_THINK_CLOSE) != 1 or text.count(_THINK_OPEN) > 1:
        return False
    thinking, answer = text.split(_THINK_CLOSE)
    if (
        _THINK_OPEN in thinking
        and thinking.strip()
        and not thinking.lstrip().startswith(_THINK_OPEN)
    ):
        return False  # text before the opening tag: not thinking-first
    if _THINK_OPEN in answer:
        return False
    reasoning = thinking.replace(_THINK_OPEN, "").strip()
    return bool(reasoning) and parse_boxed_answer(answer, num_candidates) is not None


def format_reward(text: str, num_candidates: int, variant: Variant, penalty: float = 1.0) -> float:
    return 0.0 if format_ok(text, num_candidates, variant) else -penalty


def overlong_reward(num_tokens: int, budget: int, buffer: int) -> float:
    if buffer <= 0 or buffer > budget:
        raise ValueError(f"overlong buffer must be in 1..budget ({budget}), got {buffer}")
    soft_start = budget - buffer
    if num_tokens <= soft_start:
        return 0.0
    if num_tokens <= budget:
        return (soft_start - num_tokens) / buffer
    return -1.0


def rank_aware_reward(text: str, gold: str, pass_rates: Sequence[float]) -> float:
    pick = parse_boxed_answer(text, len(pass_rates))
    if pick is None:
        return -1.0
    if pick == gold:
        return 1.0
    gold_rate = pass_rates[ANSWER_LETTERS.index(gold)]
    return -(gold_rate - pass_rates[ANSWER_LETTERS.index(pick)])


# -- TRL-shaped wrappers -------------------------------------------------------------------
# Dataset columns the wrappers read: chosen_answer (gold letter), num_candidates, pass_rates.


def _named(fn: RewardFunc, name: str) -> RewardFunc:
    fn.__name__ = name  # TRL logs rewards/<__name__>/mean
    return fn


def make_reward_funcs(
    names: Sequence[str],
    *,
    variant: Variant,
    budget: int,
    overlong_buffer: int,
    format_penalty: float = 1.0,
) -> list[RewardFunc]:
    """The TRL reward callables for `names` (accuracy, format, overlong, rank_aware)."""

    def accuracy(
        completions: list[Any], chosen_answer: list[str], num_candidates: list[int], **_: Any
    ):
        return [
            accuracy_reward(completion_text(c), g, n)
            for c, g, n in zip(completions, chosen_answer, num_candidates, strict=True)
        ]

    def format_(completions: list[Any], num_candidates: list[int], **_: Any):
        return [
            format_reward(completion_text(c), n, variant, format_penalty)
            for c, n in zip(completions, num_candidates, strict=True)
        ]

    def overlong(completion_ids: list[list[int]], **_: Any):
        return [overlong_reward(len(ids), budget, overlong_buffer) for ids in completion_ids]

    def rank_aware(
        completions: list[Any], chosen_answer: list[str], pass_rates: list[list[float]], **_: Any
    ):
        return [
            rank_aware_reward(completion_text(c), g, p)
            for c, g, p in zip(completions, chosen_answer, pass_rates, strict=True)
        ]

    table: dict[str, RewardFunc] = {
        "accuracy": _named(accuracy, "accuracy"),
        "format": _named(format_, "format"),
        "overlong": _named(overlong, "overlong"),
        "rank_aware": _named(rank_aware, "rank_aware"),
    }
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown verifier reward(s) {unknown}; known: {sorted(table)}")
    return [table[n] for n in names]


VERIFIER_REWARDS: tuple[str, ...] = ("accuracy", "format", "overlong", "rank_aware")
