"""Verifier rewards on hand-written completions; every expected value is computed by hand."""

from __future__ import annotations

import pytest

from pipeline.train.rewards import (
    accuracy_reward,
    format_reward,
    make_reward_funcs,
    overlong_reward,
    rank_aware_reward,
)

THINK_OK = "<think>\nA overflows; B handles n = 0.\n</think>\nThe answer is \\boxed{B}"


@pytest.mark.parametrize(
    ("text", "gold", "n", "expected"),
    [
        ("\\boxed{B}", "B", 3, 1.0),
        ("\\boxed{A} then I changed my mind \\boxed{B}", "B", 3, 1.0),  # last box wins
        ("\\boxed{B} no wait \\boxed{C}", "B", 3, 0.0),
        ("\\boxed{D}", "D", 3, 0.0),  # D is not a candidate of a 3-candidate instance
        ("B is correct", "B", 3, 0.0),  # no box
        (THINK_OK, "B", 2, 1.0),
    ],
)
def test_accuracy(text: str, gold: str, n: int, expected: float) -> None:
    assert accuracy_reward(text, gold, n) == expected


@pytest.mark.parametrize(
    ("text", "variant", "expected"),
    [
        (THINK_OK, "think", 0.0),
        ("A overflows.\n</think>\n\\boxed{A}", "think", 0.0),  # template pre-filled <think>
        ("\\boxed{A}", "think", -0.5),  # no thinking
        ("<think>\n</think>\n\\boxed{A}", "think", -0.5),  # empty thinking
        ("<think>\nhmm \\boxed{A}\n</think>\nso", "think", -0.5),  # box only inside thinking
        ("<think>a</think><think>b</think>\\boxed{A}", "think", -0.5),  # two blocks
        ("Sure. <think>x</think>\\boxed{A}", "think", -0.5),  # text before thinking
        ("\\boxed{A}", "no_think", 0.0),
        (THINK_OK, "no_think", -0.5),  # instruct mode must not think
        ("A", "no_think", -0.5),
    ],
)
def test_format(text: str, variant: str, expected: float) -> None:
    assert format_reward(text, 2, variant, penalty=0.5) == expected


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
    # pass rates A=0.9 (near miss), B=1.0 (gold), C=0.0
    [("\\boxed{B}", 1.0), ("\\boxed{A}", -0.1), ("\\boxed{C}", -1.0), ("nothing", -1.0)],
)
def test_rank_aware(text: str, expected: float) -> None:
    assert rank_aware_reward(text, "B", [0.9, 1.0, 0.0]) == pytest.approx(expected)


def test_trl_wrappers_read_dataset_columns() -> None:
    funcs = make_reward_funcs(
        ["accuracy", "format", "overlong", "rank_aware"],
        variant="think",
        budget=10,
        overlong_buffer=5,
    )
    assert [f.__name__ for f in funcs] == ["accuracy", "format", "overlong", "rank_aware"]
    completions = [
        [{"role": "assistant", "content": THINK_OK}],
        [{"role": "assistant", "content": "\\boxed{A}"}],
    ]
    kwargs = {
        "prompts": [None, None],
        "completions": completions,
        "completion_ids": [[1] * 3, [1] * 8],
        "chosen_answer": ["B", "B"],
        "num_candidates": [2, 2],
        "pass_rates": [[0.5, 1.0], [0.5, 1.0]],
        "trainer_state": None,
    }
    got = [f(**kwargs) for f in funcs]
    assert got == [[1.0, 0.0], [0.0, -1.0], [0.0, -0.6], [1.0, -0.5]]


def test_unknown_reward_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown verifier reward"):
        make_reward_funcs(["accuracy", "vibes"], variant="think", budget=10, overlong_buffer=5)
