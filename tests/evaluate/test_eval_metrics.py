"""Verifier metrics against values worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest

from pipeline.evaluate.metrics import (
    Judged,
    accuracy_by_gold_position,
    best_of_n_accuracy,
    flip_rates,
    invalid_rate,
    kendall_tau_b,
    majority_vote,
    mean_ndcg,
    ndcg,
    pairwise_accuracy,
    self_consistency_accuracy,
    split_metrics,
    top1_accuracy,
    vote_shares,
)

# I1: gold B, pass rates A=.5 B=1 C=0, picks B B A invalid -> shares A=.25 B=.5 C=0
I1 = Judged("p1", "B", (0.5, 1.0, 0.0), ("B", "B", "A", None), problem_id="q1", instance_id="i1")
# I2: gold A, pass rates A=1 B=.25 C=.25, picks B C B A -> shares A=.25 B=.5 C=.25
I2 = Judged("p2", "A", (1.0, 0.25, 0.25), ("B", "C", "B", "A"), problem_id="q2")
ITEMS = [I1, I2]


def test_vote_shares_count_invalid_responses_in_the_denominator() -> None:
    assert vote_shares(I1.picks, 3) == [0.25, 0.5, 0.0]
    assert vote_shares(I2.picks, 3) == [0.25, 0.5, 0.25]


def test_majority_vote_ties_go_to_the_first_letter_to_reach_the_top_count() -> None:
    assert majority_vote(["A", "B", "B", "A"]) == "B"  # B reached 2 first
    assert majority_vote([None, "C", None]) == "C"
    assert majority_vote([None, None]) is None


def test_accuracies() -> None:
    assert top1_accuracy(ITEMS) == pytest.approx((2 / 4 + 1 / 4) / 2)  # 0.375
    assert self_consistency_accuracy(ITEMS) == 0.5  # I1 majority B right, I2 majority B wrong
    assert best_of_n_accuracy(ITEMS) == 1.0  # both have a correct response somewhere
    assert invalid_rate(ITEMS) == pytest.approx((1 / 4 + 0) / 2)
    assert accuracy_by_gold_position(ITEMS) == {"A": 0.25, "B": 0.5}


def test_pairwise_accuracy_pools_pairs_and_half_counts_vote_ties() -> None:
    # I1: (A,B) agree, (A,C) agree, (B,C) agree -> 3 of 3
    # I2: (A,B) reversed -> 0; (A,C) vote tie -> 0.5; (B,C) same pass rate -> not a pair
    assert pairwise_accuracy(ITEMS) == pytest.approx((3 + 0.5) / 5)


def test_kendall_tau_b() -> None:
    # I1: shares and pass rates in the same order -> 1.
    # I2: x=(.25,.5,.25), y=(1,.25,.25): one discordant pair, one tie in x only, one in y only
    #     tau_b = (0 - 1) / sqrt((0+1+1) * (0+1+1)) = -0.5
    tau, n = kendall_tau_b(ITEMS)
    assert n == 2
    assert tau == pytest.approx((1.0 - 0.5) / 2)


def test_kendall_tau_b_skips_constant_scores() -> None:
    all_invalid = Judged("p3", "A", (1.0, 0.0), (None, None))
    tau, n = kendall_tau_b([all_invalid])
    assert n == 0 and math.isnan(tau)


def test_ndcg() -> None:
    assert ndcg([0.25, 0.5, 0.0], [0.5, 1.0, 0.0]) == pytest.approx(1.0)
    # order B(.5), A(.25), C(.25 - tie broken by position); gains .25, 1, .25
    dcg = 0.25 / math.log2(2) + 1.0 / math.log2(3) + 0.25 / math.log2(4)
    idcg = 1.0 / math.log2(2) + 0.25 / math.log2(3) + 0.25 / math.log2(4)
    assert ndcg([0.25, 0.5, 0.25], [1.0, 0.25, 0.25]) == pytest.approx(dcg / idcg)
    assert mean_ndcg(ITEMS) == pytest.approx((1.0 + dcg / idcg) / 2)


def test_flip_rates_per_bias_type() -> None:
    # a1 pairs with I1 by source_instance_id: majority B (right) -> A (wrong): flip, correct->wrong
    a1 = Judged(
        "p1",
        "B",
        I1.pass_rates,
        ("A", "A", "B"),
        (None, "authority", None),
        "q1",
        instance_id="a1",
        source_instance_id="i1",
    )
    # a2 has no source_instance_id; pairs with I2 by (problem, n, gold): majority B -> B: no flip
    a2 = Judged(
        "p2-adv", "A", I2.pass_rates, ("B", "B"), ("self_declared", "authority", None), "q2"
    )
    # a3 matches nothing
    a3 = Judged("zzz", "C", (0.0, 0.0, 1.0), ("C",), (None, None, "authority"), "q9")
    got = flip_rates([a1, a2, a3], ITEMS)
    assert got["authority"] == {"n": 2.0, "valid": 2.0, "flip_rate": 0.5, "correct_to_wrong": 0.5}
    assert got["self_declared"] == {
        "n": 1.0, "valid": 1.0, "flip_rate": 0.0, "correct_to_wrong": 0.0,
    }  # fmt: skip
    assert got["unpaired"] == {"n": 1.0}


def test_flip_rate_without_a_valid_pair_is_undefined_not_zero() -> None:
    # Both sides all invalid: no decision on either side, so nothing could flip or not flip.
    h = Judged("p", "A", (1.0, 0.0, 0.0), (None, None), problem_id="q", instance_id="h")
    a = Judged(
        "p", "A", (1.0, 0.0, 0.0), (None, None), (None, "authority", None), "q",
        instance_id="a", source_instance_id="h",
    )  # fmt: skip
    got = flip_rates([a], [h])["authority"]
    assert (got["n"], got["valid"]) == (1.0, 0.0)
    assert math.isnan(got["flip_rate"]) and math.isnan(got["correct_to_wrong"])
    # One side valid, the other not: still no pair to judge a flip on.
    h_valid = Judged("p", "A", (1.0, 0.0, 0.0), ("A", None), problem_id="q", instance_id="h")
    assert flip_rates([a], [h_valid])["authority"]["valid"] == 0.0


def test_ranking_metrics_leave_out_instances_with_no_valid_response() -> None:
    # An all-invalid instance has vote shares 0, 0, 0: before, NDCG scored the list order
    # (here 1.0: the gold is first) and every pair a 0.5 tie. Now it is left out and counted.
    none_valid = Judged("p", "A", (1.0, 0.5, 0.0), (None, None, None))
    m = split_metrics([none_valid])
    assert math.isnan(m["ndcg"]) and m["ndcg_instances"] == 0
    assert math.isnan(m["pairwise_accuracy"]) and m["pairwise_pairs"] == 0
    m = split_metrics([none_valid, I1])
    assert m["ndcg"] == pytest.approx(1.0) and m["ndcg_instances"] == 1
    assert m["pairwise_accuracy"] == 1.0 and m["pairwise_pairs"] == 3


def test_split_metrics_has_every_metric() -> None:
    m = split_metrics(ITEMS)
    assert m["instances"] == 2 and m["k"] == 4
    assert m["self_consistency_accuracy"] == 0.5
    assert m["pairwise_accuracy"] == pytest.approx(0.7)
