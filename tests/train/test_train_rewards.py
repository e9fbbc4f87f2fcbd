"""Verifier rewards on hand-written responses; every expected value is computed by hand.
(Aletheia's published values are checked in tests/conformance/test_rewards_and_recipes.py.)"""

from __future__ import annotations

import pytest

from pipeline.train.rewards import (
    accuracy_reward,
    completion_text,
    format_reward,
    make_reward_funcs,
    overlong_reward,
    rank_gap_reward,
)

THINK_OK = "<think>\nA overflows; B handles n = 0.\n</think>\n\\boxed{B}"


@pytest.mark.parametrize(
    ("text", "gold", "n", "expected"),
    [
        ("\\boxed{B}", "B", 3, 1.0),
        ("\\boxed{A} then I changed my mind \\boxed{B}", "B", 3, 0.0),  # the first box counts
        ("\\boxed{D}", "D", 3, 0.0),  # D is not a candidate of a 3-candidate instance
        ("B is correct", "B", 3, 0.0),  # no box
        (THINK_OK, "B", 2, 1.0),
    ],
)
def test_accuracy(text: str, gold: str, n: int, expected: float) -> None:
    assert accuracy_reward(text, gold, n) == expected


@pytest.mark.parametrize(
    ("text", "style", "expected"),
    [
        (THINK_OK, "think", 0.0),
        ("\\boxed{A}", "think", -0.5),  # no thinking
        ("<think>a</think><think>b</think>\\boxed{A}", "think", -0.5),  # two blocks
        ("Analysis: fine.\nFinal Answer: \\boxed{A}", "instruct", 0.0),
        ("\\boxed{A} because", "instruct", -0.5),  # the box must end the response
    ],
)
def test_format_penalty_option(text: str, style: str, expected: float) -> None:
    assert format_reward(text, 2, style, penalty=0.5) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("length", "expected"),
    # budget 100, buffer 20: free up to 80, then (80 - L) / 20, -1 past 100
    [(10, 0.0), (80, 0.0), (85, -0.25), (90, -0.5), (100, -1.0), (140, -1.0)],
)
def test_overlong(length: int, expected: float) -> None:
    assert overlong_reward(length, budget=100, buffer=20) == pytest.approx(expected)


def test_overlong_rejects_bad_buffer() -> None:
    with pytest.raises(ValueError, match="buffer"):
        overlong_reward(5, budget=10, buffer=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    # ours: pass rates A=0.9 (near miss), B=1.0 (gold), C=0.0
    [("\\boxed{B}", 1.0), ("\\boxed{A}", -0.1), ("\\boxed{C}", -1.0), ("nothing", -1.0)],
)
def test_rank_gap_option(text: str, expected: float) -> None:
    assert rank_gap_reward(text, "B", [0.9, 1.0, 0.0]) == pytest.approx(expected)


def test_completion_text_puts_the_prefill_back_once() -> None:
    assert completion_text("x</think>\\boxed{A}", "<think>\n") == "<think>\nx</think>\\boxed{A}"
    assert completion_text("<think>\nx", "<think>\n") == "<think>\nx"
    assert completion_text([{"role": "assistant", "content": "\\boxed{A}"}]) == "\\boxed{A}"


def test_trl_wrappers_read_dataset_columns() -> None:
    funcs = make_reward_funcs(
        ["accuracy", "format", "overlong", "rank_aware", "rank_gap"],
        style="think",
        budget=10,
        overlong_buffer=5,
    )
    assert [f.__name__ for f in funcs] == [
        "accuracy",
        "format",
        "overlong",
        "rank_aware",
        "rank_gap",
    ]
    kwargs = {
        "prompts": ["p", "p"],
        # plain strings, as TRL hands them for a rendered (prefilled) prompt: no "<think>\n"
        "completions": ["A overflows.\n</think>\n\\boxed{B}", "\\boxed{A}"],
        "completion_ids": [[1] * 3, [1] * 8],
        "chosen_answer": ["B", "B"],
        "num_candidates": [2, 2],
        "pass_rates": [[0.5, 1.0], [0.5, 1.0]],
        "prefill": ["<think>\n", "<think>\n"],
        "trainer_state": None,
    }
    got = [f(**kwargs) for f in funcs]
    # format: the first is well formed only with the prefill put back; overlong: (5 - 8) / 5;
    # rank_aware: A is ranked 2nd of 2 -> -0.8; rank_gap: -(1.0 - 0.5)
    assert got == [[1.0, 0.0], [0.0, -1.0], [0.0, -0.6], [1.0, -0.8], [1.0, -0.5]]


def test_unknown_reward_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown verifier reward"):
        make_reward_funcs(["accuracy", "vibes"], style="think", budget=10, overlong_buffer=5)
