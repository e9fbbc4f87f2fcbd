"""Conformance: Best-of-N selection and calibration (docs/aletheia-conformance.md, section
"Best-of-N and calibration"). Expected values are written out by hand from Aletheia's
definitions (`src/bon_livecodebench.py`, `src/rewards.py`, `src/calibration.py`), not
computed by our code."""

from __future__ import annotations

import pytest

from pipeline.bestofn.judging import Verdicts
from pipeline.bestofn.metrics import group_metrics, problem_facts
from pipeline.bestofn.samples import ProblemSamples, Sample
from pipeline.bestofn.selection import (
    knockout_groups,
    pair_orders,
    pairwise_pick,
    plurality,
    read_vote,
)
from pipeline.bestofn.verifier import Choice
from pipeline.common.answers import score_list
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.evaluate.calibration import expected_calibration_error, vote_prediction
from pipeline.policy_eval.config import BootstrapSettings
from schemas.problem import Problem

# (response, candidates, Aletheia's `_parse_list_verdict`): the text after the last </think>,
# its first box, kept only when it is exactly one of the list's letters (A..H).
LIST_VERDICTS = [
    ("<think>\nweighing\n</think>\n\\boxed{H}", 8, 7),
    ("<think>\n\\boxed{A}\n</think>\n\\boxed{C}", 8, 2),  # a box in the thinking is no verdict
    ("\\boxed{ B }", 4, None),  # no stripping
    ("\\boxed{b}", 4, None),  # no case folding
    ("\\boxed{F}", 5, None),  # past the list
    ("no box at all", 3, None),
]


@pytest.mark.parametrize("text,n,expected", LIST_VERDICTS)
def test_list_verdicts_read_as_aletheias_bon(text: str, n: int, expected: int | None) -> None:
    assert read_vote(text, n, scoring=False, rule="after_think") == expected


# `_parse_list_verdict(scoring=True)`: `extract_boxed_contents_score10` (ast.literal_eval of
# the box, a list of ints), one score per candidate, a unique maximum.
SCORE_VERDICTS = [
    ("<think>x</think>\\boxed{[3, 9, 1]}", 3, 1),
    ("\\boxed{[3, 9, 9]}", 3, None),  # two maxima
    ("\\boxed{[3, 9]}", 3, None),  # one score short
    ("\\boxed{[3, 9.5, 1]}", 3, None),  # not all integers
    ("\\boxed{B}", 3, None),
    ("\\boxed{[10, 0]}", 2, 0),  # a pair prompt: A wins
]


@pytest.mark.parametrize("text,n,expected", SCORE_VERDICTS)
def test_scoring_verdicts_pick_the_unique_highest_score(
    text: str, n: int, expected: int | None
) -> None:
    assert read_vote(text, n, scoring=True, rule="after_think") == expected


def test_score_list_is_a_list_of_integers_only() -> None:
    assert score_list("\\boxed{[7, 2, 9]}") == [7, 2, 9]
    assert score_list("\\boxed{[True, 2]}") is None
    assert score_list("\\boxed{(7, 2)}") is None
    assert score_list("\\boxed{__import__('os')}") is None  # literal_eval: no code runs


def test_list_prompt_shows_up_to_eight_letters() -> None:
    (user, _) = build_messages(
        "Q", [f"print({i})" for i in range(8)], ["python"] * 8, PromptSpec(max_candidates=8)
    )
    assert "[CANDIDATE_H]" in user["content"] and "A, B, C, D, E, F, G, H" in user["content"]
    with pytest.raises(ValueError, match="2..5"):  # the datasets' prompts stay at 5
        build_messages("Q", ["x"] * 6, ["python"] * 6, PromptSpec())


def test_pairs_are_every_combination_in_both_orders() -> None:
    # `itertools.combinations(range(n), 2)`, each asked AB then BA (bias_correction).
    assert pair_orders(3) == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    assert pair_orders(3, both_orders=False) == [(0, 1), (0, 2), (1, 2)]


def test_pairwise_wins_map_back_through_the_order_and_ties_go_to_the_lower_index() -> None:
    # Asked (1, 0): candidate 1 shown as A. Its verdict A (vote 0) is a win for candidate 1.
    verdicts = {(0, 1): [1], (1, 0): [0], (0, 2): [0], (2, 0): [1], (1, 2): [None], (2, 1): [0]}
    pick, wins = pairwise_pick(verdicts, 3)
    assert wins == [2, 2, 1] and pick == 0  # `w.index(max(w))`: the tie to candidate 0
    # The first 2 of 3 read the verdicts among them only.
    assert pairwise_pick(verdicts, 2) == (1, [0, 2])
    # No parseable verdict at all: no pick (a failed pick), not candidate 0.
    assert pairwise_pick({(0, 1): [None], (1, 0): [None]}, 2) == (None, [0, 0])


def test_k_votes_take_the_plurality_ties_to_the_earlier_letter() -> None:
    assert plurality([2, 1, 2, None]) == 2
    assert plurality([2, 1, None, None]) == 1  # tie: the alphabetically first, as calibration.py
    assert plurality([None, None]) is None


def test_knockout_lists_are_at_most_the_size_and_even() -> None:
    assert knockout_groups(range(8), 5) == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert knockout_groups(range(11), 5) == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10)]
    assert knockout_groups(range(5), 5) == [(0, 1, 2, 3, 4)]


def _problem(i: int) -> Problem:
    return Problem(
        problem_id=f"p{i}", source="t", source_id=str(i), title="t", statement="s",
        test_mode="stdio", tests=[{"input": "1", "output": "1"}], time_limit_s=1.0,
        memory_limit_mb=64, license="x",
    )  # fmt: skip


def test_an_unparseable_verdict_is_a_failed_pick_counted_apart() -> None:
    # Three problems of 4 samples: the verifier picks a correct one, a wrong one, and nothing.
    problems = [
        ProblemSamples(_problem(i), tuple(Sample(j, f"print({j})", "python") for j in range(4)))
        for i in range(3)
    ]
    verdicts = Verdicts(
        verdicts=[["WA", "AC", "AC", "WA"], ["AC", "WA", "WA", "WA"], ["AC", "AC", "AC", "AC"]],
        signatures=None,
        stamp="test",
    )
    choices = {4: [Choice(1, 1, 0), Choice(2, 1, 0), Choice(None, 1, 1)]}
    rows = problem_facts(problems, verdicts, choices, 4, seed=0)
    m = group_metrics(rows, BootstrapSettings(resamples=100))
    assert m["verifier_counts"] == {
        "picked_correct": 1,
        "picked_wrong": 1,
        "unparseable": 1,
        "unparseable_rate": 1 / 3,
        "pass@1_parseable": 0.5,
        "responses": 3,
        "unparseable_responses": 1,
    }
    assert m["methods"]["verifier"]["value"] == pytest.approx(1 / 3)  # the failed pick scores 0
    assert m["methods"]["random"]["value"] == pytest.approx((2 / 4 + 1 / 4 + 4 / 4) / 3)
    assert m["methods"]["oracle"]["value"] == 1.0
    # The verifier's pick only (`verifier` at N): a curve needs the other n asked too.
    assert rows[0]["curve"][2]["verifier"] is None and rows[0]["curve"][4]["verifier"] == 1.0


def test_calibration_votes_confidence_and_ece_as_aletheia() -> None:
    # `_vote_from_completions`: plurality over valid letters, ties alphabetically, share of votes.
    assert vote_prediction(["B", "A", "B", "A"]) == ("A", 0.5)
    assert vote_prediction(["C", "C", "A"]) == ("C", pytest.approx(2 / 3))
    assert vote_prediction([]) is None
    # `compute_ece` with 10 bins: [0, 0.1] closed, then (lo, hi].
    ece, bins = expected_calibration_error([0.1, 0.2, 0.5, 1.0, 1.0], [0, 1, 1, 1, 0])
    # 0.1 -> [0, 0.1]: |0.1 - 0| / 5; 0.2 -> (0.1, 0.2]: |0.2 - 1| / 5; 0.5 -> (0.4, 0.5]:
    # |0.5 - 1| / 5; the two 1.0s -> (0.9, 1]: 2/5 x |1 - 0.5|.
    assert ece == pytest.approx(0.02 + 0.16 + 0.1 + 0.2)
    assert [b["n"] for b in bins] == [1, 1, 0, 0, 1, 0, 0, 0, 0, 2]
    assert bins[9] == {"lo": 0.9, "hi": 1.0, "n": 2, "confidence": 1.0, "accuracy": 0.5}


def test_ca3_calibration_names_its_method_and_the_one_it_leaves_out() -> None:
    """Aletheia's default calibration method reads the option tokens' log-probabilities; ours is
    its `self_consistency` method (the vote share): the section names it, so a reader cannot
    take our ECE for the log-probability one."""
    from pipeline.evaluate.calibration import calibration
    from pipeline.evaluate.metrics import Judged
    from pipeline.evaluate.report import _calibration

    item = Judged(prompt_id="p", gold="A", pass_rates=(1.0, 0.0), picks=("A", "B"),
                  boxes=("A", "B"))  # fmt: skip
    cal = calibration([item])
    assert cal["method"] == "self_consistency"
    text = "\n".join(_calibration({"heldout": {"calibration": cal}}, {}))
    assert "self-consistency" in text and "log-probabilities at the box" in text
