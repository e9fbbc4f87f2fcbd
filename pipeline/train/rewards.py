"""Verifier rewards for GRPO (Aletheia's `src/rewards.py`, in our code): plain functions on one
response, plus TRL-shaped wrappers.

A response is the whole assistant turn: for the Think style the `<think>\\n` prefill plus what
the model generated (as Aletheia's TRL handed it over; TRL 1.16 no longer prepends the prefill,
so the wrappers do, from the dataset's `prefill` column). Answers are read by the one reader,
`pipeline.common.answers` (the first box after the last `</think>`, an exact letter as `A` or
`[[A]]`); the gold column may hold either form too.

- accuracy: 1 when the answer is the gold letter, else 0 (a box inside the thinking earns
  nothing; an invalid answer earns 0).
- format: 0 when the response is well formed for its style (`answers.well_formed`, Aletheia's
  check), its box in the form the prompt asked for (`\\boxed{A}`, or `\\boxed{[[A]]}` for a
  bracketed release, as `cerebrm_rewards.py`), else -1 (`-format_penalty`, our option;
  Aletheia's value is 1).
- overlong: DAPO's soft overlong punishment on the completion's token count L, budget L_max,
  buffer L_buf: 0 while L <= L_max - L_buf, then (L_max - L_buf - L) / L_buf down to -1 at
  L_max, -1 beyond. Aletheia's buffer: 1024 tokens for budgets up to 4096, else 2048.
- rank_aware (Aletheia's `list_reward_with_distance`): candidates are ranked by pass rate
  (highest first; equal pass rates keep list order) and the pick earns a fixed value by its
  rank: +1 for the top, then for n candidates the values -0.8, -0.6, -0.4, -0.2 (the first
  n-1 of them) from the bottom rank up; an invalid answer earns -1. Table in RANK_VALUES.
- rank_gap (ours, named option): +1 for the gold letter, else -(pass_rate[gold] -
  pass_rate[pick]) (a near miss costs little), invalid -1.

TRL (1.16) calls a reward function as `f(prompts=, completions=, completion_ids=,
**dataset_columns, ...)` and sums the outputs with `GRPOConfig.reward_weights`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pipeline.common.answers import (
    AnswerFormat,
    ResponseStyle,
    gold_letter,
    is_correct,
    parse_answer,
    well_formed,
)
from schemas.instance import ANSWER_LETTERS

RewardFunc = Callable[..., list[float | None]]

# Aletheia's per-rank values: list i (n = i + 2 candidates) gives the reward of the pick ranked
# 1st, 2nd, ... by pass rate. From [1, -0.8, -0.6, -0.4, -0.2][:n] sorted high to low.
RANK_VALUES: dict[int, tuple[float, ...]] = {
    n: tuple(sorted((1.0, -0.8, -0.6, -0.4, -0.2)[:n], reverse=True)) for n in range(2, 6)
}
INVALID_REWARD = -1.0


def completion_text(completion: str | list[dict[str, str]], prefill: str = "") -> str:
    """The whole assistant turn: `prefill` + generated text (plain string or message list)."""
    if isinstance(completion, str):
        text = completion
    else:
        text = "".join(
            m.get("content") or "" for m in completion if m.get("role", "assistant") == "assistant"
        )
    return text if not prefill or text.startswith(prefill) else prefill + text


def accuracy_reward(text: str, gold: str, num_candidates: int) -> float:
    return 1.0 if is_correct(text, gold, num_candidates) else 0.0


def format_reward(
    text: str,
    num_candidates: int,
    style: ResponseStyle,
    penalty: float = 1.0,
    answer_format: AnswerFormat | None = None,
) -> float:
    """0 when well formed, with the box in `answer_format` (the form the prompt asked for;
    None: either form), else -penalty."""
    return 0.0 if well_formed(text, num_candidates, style, answer_format) else -penalty


def aletheia_overlong_buffer(budget: int) -> int:
    """Aletheia's buffer: 1024 tokens for budgets up to 4096, else 2048."""
    return 1024 if budget <= 4096 else 2048


def overlong_reward(num_tokens: int, budget: int, buffer: int) -> float:
    if buffer <= 0 or buffer > budget:
        raise ValueError(f"overlong buffer must be in 1..budget ({budget}), got {buffer}")
    soft_start = budget - buffer
    if num_tokens <= soft_start:
        return 0.0
    if num_tokens <= budget:
        return (soft_start - num_tokens) / buffer
    return -1.0


def rank_aware_reward(text: str, pass_rates: Sequence[float]) -> float:
    """Aletheia's fixed per-rank value of the pick (see RANK_VALUES); invalid -1."""
    n = len(pass_rates)
    pick = parse_answer(text, n)
    if pick is None:
        return INVALID_REWARD
    by_rate = sorted(range(n), key=lambda c: -pass_rates[c])  # stable: ties keep list order
    return RANK_VALUES[n][by_rate.index(ANSWER_LETTERS.index(pick))]


def rank_gap_reward(text: str, gold: str, pass_rates: Sequence[float]) -> float:
    pick, gold = parse_answer(text, len(pass_rates)), gold_letter(gold)
    if pick is None:
        return INVALID_REWARD
    if pick == gold:
        return 1.0
    return -(pass_rates[ANSWER_LETTERS.index(gold)] - pass_rates[ANSWER_LETTERS.index(pick)])


# -- TRL-shaped wrappers -------------------------------------------------------------------
# Dataset columns the wrappers read: chosen_answer (gold letter), num_candidates, pass_rates,
# prefill (the assistant prefill the generation continued; "" for Instruct).


def _named(fn: RewardFunc, name: str) -> RewardFunc:
    fn.__name__ = name  # TRL logs rewards/<__name__>/mean
    return fn


def _texts(completions: list[Any], prefill: list[str] | None) -> list[str]:
    pre = prefill or [""] * len(completions)
    return [completion_text(c, p) for c, p in zip(completions, pre, strict=True)]


def make_reward_funcs(
    names: Sequence[str],
    *,
    style: ResponseStyle,
    budget: int,
    overlong_buffer: int,
    format_penalty: float = 1.0,
    answer_format: AnswerFormat | None = None,
) -> list[RewardFunc]:
    """The TRL reward callables for `names` (see VERIFIER_REWARDS); the format reward takes
    only the box form `answer_format` (the one the prompt asked for)."""

    def accuracy(completions, chosen_answer, num_candidates, prefill=None, **_: Any):
        texts = _texts(completions, prefill)
        return [
            accuracy_reward(t, g, n)
            for t, g, n in zip(texts, chosen_answer, num_candidates, strict=True)
        ]

    def format_(completions, num_candidates, prefill=None, **_: Any):
        texts = _texts(completions, prefill)
        return [
            format_reward(t, n, style, format_penalty, answer_format)
            for t, n in zip(texts, num_candidates, strict=True)
        ]

    def overlong(completion_ids, **_: Any):
        return [overlong_reward(len(ids), budget, overlong_buffer) for ids in completion_ids]

    def rank_aware(completions, pass_rates, prefill=None, **_: Any):
        texts = _texts(completions, prefill)
        return [rank_aware_reward(t, p) for t, p in zip(texts, pass_rates, strict=True)]

    def rank_gap(completions, chosen_answer, pass_rates, prefill=None, **_: Any):
        texts = _texts(completions, prefill)
        return [
            rank_gap_reward(t, g, p)
            for t, g, p in zip(texts, chosen_answer, pass_rates, strict=True)
        ]

    table: dict[str, RewardFunc] = {
        "accuracy": _named(accuracy, "accuracy"),
        "format": _named(format_, "format"),
        "overlong": _named(overlong, "overlong"),
        "rank_aware": _named(rank_aware, "rank_aware"),
        "rank_gap": _named(rank_gap, "rank_gap"),
    }
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown verifier reward(s) {unknown}; known: {sorted(table)}")
    return [table[n] for n in names]


VERIFIER_REWARDS: tuple[str, ...] = ("accuracy", "format", "overlong", "rank_aware", "rank_gap")
