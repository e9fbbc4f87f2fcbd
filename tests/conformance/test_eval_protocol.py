"""Conformance: the evaluation protocol (docs/aletheia-conformance.md, rows E1-E7).

Expected values are worked out by hand from Aletheia's definitions (src/evaluate.py,
src/evaluate_ckpt.py, src/ranking_consistency.py, src/kendall_tau.py); the arithmetic is in
the comments. Pass rates of the main list: A=1.0, B=0.5, C=0.0.
"""

from __future__ import annotations

import math

import pytest

from pipeline.evaluate.protocol import (
    PairVerdict,
    RankedList,
    list_kendall_tau,
    list_ndcg,
    majority_accuracy,
    majority_pick,
    ranking_metrics,
    round_robin_pairs,
    round_robin_ranking,
    top1_accuracy,
    verdict_from_pick,
    win_counts,
)

PR = (1.0, 0.5, 0.0)
# A beats B, A beats C, C beats B: wins A=2, B=0, C=1
ORDERED = (PairVerdict(0, 1, 0), PairVerdict(0, 2, 0), PairVerdict(1, 2, 2))
# a cycle: A beats B, B beats C, C beats A: every candidate wins once
CYCLE = (PairVerdict(0, 1, 0), PairVerdict(1, 2, 1), PairVerdict(0, 2, 2))
ALL_INVALID = (PairVerdict(0, 1, None), PairVerdict(0, 2, None), PairVerdict(1, 2, None))


def test_e1_top1_reads_the_first_sample_only() -> None:
    # gold A; first sample B -> wrong although 2 of 3 samples say A
    assert top1_accuracy(["A"], [("B", "A", "A")]) == 0.0
    assert top1_accuracy(["A", "B"], [("A", None), ("B", "B")]) == 1.0


def test_e2_majority_vote_counts_invalid_answers_as_votes() -> None:
    # statistics.mode over [None, None, 'A']: None has 2 votes, so the vote is invalid (wrong)
    assert majority_pick([None, None, "A"]) is None
    assert majority_accuracy(["A"], [(None, None, "A")]) == 0.0
    # a tie goes to the answer met first: B and A twice each, B first
    assert majority_pick(["B", "A", "A", "B"]) == "B"


def test_e3_round_robin_pairs_and_ranking_by_wins() -> None:
    assert round_robin_pairs(2) == []  # lists of 2 are not ranked
    assert round_robin_pairs(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    # the pair prompt shows candidate i as A and j as B
    assert verdict_from_pick(1, 3, "B") == PairVerdict(1, 3, 3)
    assert verdict_from_pick(1, 3, None).winner is None
    assert win_counts(3, ORDERED) == [2, 0, 1]
    assert round_robin_ranking(3, ORDERED) == [0, 2, 1]
    assert round_robin_ranking(3, CYCLE) == [0, 1, 2]  # equal wins keep list order


def test_e4_kendall_tau_b_with_undefined_scored_minus_one() -> None:
    # wins (2, 0, 1) vs pass rates (1, .5, 0): pairs AB concordant, AC concordant, BC
    # discordant, no ties -> (2 - 1) / 3
    assert list_kendall_tau(PR, ORDERED) == pytest.approx(1 / 3)
    # wins (1, 1, 1): tau-b undefined -> -1
    assert list_kendall_tau(PR, CYCLE) == -1.0
    # all pass rates equal: undefined -> -1
    assert list_kendall_tau((0.5, 0.5, 0.5), ORDERED) == -1.0
    m = ranking_metrics(
        [RankedList(PR, ORDERED), RankedList(PR, CYCLE), RankedList(PR, ALL_INVALID)]
    )
    # mean over the lists with a valid verdict: (1/3 + -1) / 2; the all-invalid list is left out
    assert m["kendall_tau_b"] == pytest.approx((1 / 3 - 1) / 2)
    assert m["kendall_tau_b_undefined"] == 1 and m["lists_without_valid_verdict"] == 1


def test_e5_ndcg_uses_exponential_gain() -> None:
    # ranking A, C, B -> relevances 1, 0, .5; gains 2^r - 1 = 1, 0, sqrt(2) - 1; discounts
    # 1/log2(2), 1/log2(3), 1/log2(4); ideal order 1, .5, 0
    dcg = 1 / 1 + 0 / math.log2(3) + (2**0.5 - 1) / 2
    idcg = 1 / 1 + (2**0.5 - 1) / math.log2(3) + 0 / 2
    assert list_ndcg(PR, ORDERED) == pytest.approx(dcg / idcg)
    assert list_ndcg(PR, ORDERED) == pytest.approx(0.95700, abs=1e-5)
    linear = (1 + 0 + 0.5 / 2) / (1 + 0.5 / math.log2(3))  # what a linear gain would give
    assert abs(list_ndcg(PR, ORDERED) - linear) > 0.005
    assert list_ndcg((0.0, 0.0, 0.0), ORDERED) is None  # ideal DCG 0: left out


def test_e6_pairwise_accuracy_per_verdict_invalid_excluded() -> None:
    # list 1 (PR): A>B right, A>C right, C>B wrong -> 2 of 3
    # list 2 (1, .5, .5): (0,1) invalid, C beats A wrong, (1,2) equal pass rates -> 0 of 1
    second = RankedList(
        (1.0, 0.5, 0.5), (PairVerdict(0, 1, None), PairVerdict(0, 2, 2), PairVerdict(1, 2, 1))
    )
    m = ranking_metrics([RankedList(PR, ORDERED), second])
    assert m["pairwise_counted"] == 4
    assert m["pairwise_accuracy"] == pytest.approx(2 / 4)  # pooled, not (2/3 + 0) / 2


def test_e7_transitivity_over_fully_judged_triples() -> None:
    m = ranking_metrics(
        [RankedList(PR, ORDERED), RankedList(PR, CYCLE), RankedList(PR, ALL_INVALID)]
    )
    # ORDERED: wins 2, 1, 0 -> transitive; CYCLE: 1, 1, 1 -> not; ALL_INVALID: not judged
    assert (m["triples_judged"], m["transitivity"]) == (2, 0.5)
