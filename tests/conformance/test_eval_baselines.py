"""Conformance: the evaluation baselines (a random verifier's expected scores, fixed letters).

Every expected value is worked out by hand on a tiny table from the definitions in
pipeline/evaluate/baselines.py (the arithmetic is in the comments), not by a second call of
the code under test.

J1: gold A, pass rates A=1, B=.5, C=0 (3 candidates), K=2 listwise responses, and its round
    robin (pairs AB, AC, BC). J2: gold B, pass rates A=.25, B=1 (2 candidates), K=2.
"""

from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import kendalltau

from pipeline.evaluate.baselines import (
    enumerated_list_tau,
    enumerated_vote_tau,
    expected_list_tau,
    expected_vote_tau,
    fixed_letter_answers,
    random_aletheia,
    random_vote_share,
    round_robin_outcomes,
    tau_b,
    vote_outcomes,
)
from pipeline.evaluate.metrics import Judged, majority_vote
from pipeline.evaluate.protocol import PairVerdict, RankedList, majority_pick
from pipeline.evaluate.score import aletheia_metrics, baselines

J1 = Judged("p1", "A", (1.0, 0.5, 0.0), ("B", None), problem_id="q1")
J2 = Judged("p2", "B", (0.25, 1.0), (None, None), problem_id="q2")
L1 = RankedList(
    (1.0, 0.5, 0.0), (PairVerdict(0, 1, None), PairVerdict(0, 2, 2), PairVerdict(1, 2, None))
)
LOG3 = math.log2(3)


def test_the_enumerations() -> None:
    # 3 candidates: 8 round robins; 2 are cycles (wins 1, 1, 1), each of the other 6 a strict order
    rr = dict(round_robin_outcomes(3))
    assert rr[(1, 1, 1)] == pytest.approx(2 / 8)
    assert rr[(2, 1, 0)] == rr[(0, 2, 1)] == pytest.approx(1 / 8) and len(rr) == 7
    # 5 candidates: 2^10 round robins, every one counted once
    assert sum(p for _, p in round_robin_outcomes(5)) == pytest.approx(1.0)
    # 2 responses over 2 candidates: (2,0) and (0,2) with 1/4 each, (1,1) with 1/2
    assert dict(vote_outcomes(2, 2)) == pytest.approx({(0, 2): 0.25, (1, 1): 0.5, (2, 0): 0.25})
    assert len(vote_outcomes(5, 8)) == math.comb(12, 4)  # stars and bars


@pytest.mark.parametrize(
    ("x", "y"),
    [((2, 0, 1), (1.0, 0.5, 0.0)), ((1, 1, 0), (3, 2, 1)), ((0, 2, 2, 1), (0.1, 0.1, 1, 0.5))],
)
def test_tau_b_is_scipys_variant_b(x: tuple, y: tuple) -> None:
    assert tau_b(x, y) == pytest.approx(kendalltau(x, y, variant="b").statistic)


def test_tau_b_undefined_on_a_constant_side() -> None:
    assert tau_b((1, 1, 1), (1.0, 0.5, 0.0)) is None


def test_random_verifier_aletheia_section() -> None:
    got = random_aletheia([J1, J2], [L1])
    # top-1 and maj@K: 1/k per instance -> (1/3 + 1/2) / 2
    assert got["top1_accuracy"] == pytest.approx(5 / 12)
    assert got["majority_accuracy"] == pytest.approx(5 / 12)
    # best-of-K: 1 - (1 - 1/k)^K -> (1 - 4/9 + 1 - 1/4) / 2 = 47/72
    assert got["best_of_k_accuracy"] == pytest.approx(47 / 72)
    assert got["invalid_rate"] == 0.0
    # tau-b over 8 round robins: the 6 strict orders are the 6 permutations, whose taus cancel
    # (each order and its reverse); the 2 cycles are undefined, scored -1 -> -2/8
    assert got["kendall_tau_b"] == pytest.approx(-0.25)
    # NDCG, gains 2^r - 1: A 1, B sqrt2 - 1, C 0. The 6 strict orders put each candidate at
    # each rank twice; the 2 cycles keep list order A, B, C (the ideal order).
    gains = 1 + (2**0.5 - 1)
    ideal = 1 + (2**0.5 - 1) / LOG3
    expected = (2 * gains * (1 + 1 / LOG3 + 1 / 2) + 2 * ideal) / (8 * ideal)
    assert got["ndcg"] == pytest.approx(expected)
    assert got["ndcg"] == pytest.approx(0.84730, abs=1e-5)
    # every pair verdict valid, a coin flip: 0.5 over the 3 pairs of distinct pass rates
    assert (got["pairwise_accuracy"], got["pairwise_counted"]) == (0.5, 3)
    assert got["transitivity"] == 0.75  # 6 of the 8 round robins of a triple
    assert got["lists_scored"] == 1


def test_random_verifier_vote_share_section() -> None:
    got = random_vote_share([J1, J2])
    assert got["top1_accuracy"] == pytest.approx(5 / 12)
    assert got["self_consistency_accuracy"] == pytest.approx(5 / 12)
    assert got["best_of_n_accuracy"] == pytest.approx(47 / 72)
    assert (got["pairwise_accuracy"], got["pairwise_pairs"]) == (0.5, 3 + 1)
    # J2 given defined: votes (2,0) -> tau -1 and (0,2) -> +1, 1/4 each -> 0; J1 likewise 0
    assert got["kendall_tau_b"] == pytest.approx(0.0)
    # Linear-gain NDCG, ties by position. J1 (ideal 1 + .5/log2 3), its 2 votes over 3:
    #   (2,0,0) ABC ideal, (0,2,0) BAC .5 + 1/log2 3, (0,0,2) CAB 1/log2 3 + .5/2: 1/9 each;
    #   (1,1,0) ABC ideal, (1,0,1) ACB 1 + .5/2, (0,1,1) BCA .5 + 1/2: 2/9 each.
    i1 = 1 + 0.5 / LOG3
    d1 = (i1 + (0.5 + 1 / LOG3) + (1 / LOG3 + 0.25)) / 9 + 2 * (i1 + 1.25 + 1.0) / 9
    # J2 (ideal 1 + .25/log2 3): (2,0) and (1,1) rank A, B (.25 + 1/log2 3), 3/4 in all;
    # (0,2) ranks B, A (ideal), 1/4.
    i2 = 1 + 0.25 / LOG3
    d2 = 0.75 * (0.25 + 1 / LOG3) + 0.25 * i2
    assert got["ndcg"] == pytest.approx((d1 / i1 + d2 / i2) / 2)
    assert got["ndcg_instances"] == 2


def test_always_a_always_b_and_an_out_of_range_letter() -> None:
    # always A: J1 right, J2 wrong; every pair answered A = the earlier candidate wins, so
    # J1's round robin gives wins 2, 1, 0: the list order, which is the pass-rate order.
    judged, lists = fixed_letter_answers("A", [J1, J2], [L1])
    a = aletheia_metrics(judged, lists)
    assert (a["top1_accuracy"], a["majority_accuracy"], a["invalid_rate"]) == (0.5, 0.5, 0.0)
    assert (a["kendall_tau_b"], a["ndcg"], a["pairwise_accuracy"], a["transitivity"]) == (
        1.0, 1.0, 1.0, 1.0,
    )  # fmt: skip
    # always B: the later candidate wins every pair: wins 0, 1, 2, the reverse order
    judged, lists = fixed_letter_answers("B", [J1, J2], [L1])
    b = aletheia_metrics(judged, lists)
    assert (b["top1_accuracy"], b["kendall_tau_b"], b["pairwise_accuracy"]) == (0.5, -1.0, 0.0)
    # always C: J2 has no C (invalid), no pair prompt has a C (all verdicts invalid)
    judged, lists = fixed_letter_answers("C", [J1, J2], [L1])
    c = aletheia_metrics(judged, lists)
    assert (c["top1_accuracy"], c["invalid_rate"], c["lists_scored"]) == (0.0, 0.5, 0)
    assert math.isnan(c["kendall_tau_b"])


def test_best_letter_is_named() -> None:
    # gold letters C, C, A: always C is right on 2 of 3, always A on 1, always B on none
    j3 = Judged("p3", "C", (0.0, 0.5, 1.0), ("A", "A"))
    j4 = Judged("p4", "C", (0.25, 0.0, 1.0), ("C", "C"))
    b = baselines([j3, j4, J1], [])
    assert b["best_letter"]["letter"] == "C"
    assert b["best_letter"]["aletheia"]["top1_accuracy"] == pytest.approx(2 / 3)
    assert b["always_a"]["aletheia"]["top1_accuracy"] == pytest.approx(1 / 3)
    assert b["random"]["aletheia"]["top1_accuracy"] == pytest.approx(1 / 3)  # all k = 3
    # a tie between letters goes to the first: A and B each right once on J1, J2
    assert baselines([J1, J2], [L1])["best_letter"]["letter"] == "A"


@pytest.mark.parametrize(
    "pass_rates",
    [(1.0, 0.5, 0.0), (1.0, 0.5, 0.5), (0.5, 0.5, 0.5), (1.0, 0.0, 0.25, 0.25),
     (0.0, 1.0, 0.5, 0.75, 0.25), (1.0, 0.2, 0.2, 0.0, 0.0)],
)  # fmt: skip
def test_tau_closed_forms_equal_the_enumeration(pass_rates: tuple) -> None:
    # Aletheia: 4 candidates can never all win equally often (6 wins over 4), so only equal
    # pass rates give -1; 3 candidates: -2/8; 5 candidates: the regular round robins.
    assert expected_list_tau(pass_rates) == pytest.approx(enumerated_list_tau(pass_rates))
    if len(pass_rates) == 4 and len(set(pass_rates)) > 1:
        assert expected_list_tau(pass_rates) == 0.0
    for k in (1, 2, 3):
        want = enumerated_vote_tau(pass_rates, k)
        got = expected_vote_tau(pass_rates, k)
        assert (got is None) == (want is None) and (got is None or got == pytest.approx(want))


@pytest.mark.parametrize(("k", "K"), [(2, 3), (3, 4), (4, 2), (5, 3)])
def test_majority_of_a_random_verifier_is_right_one_time_in_k(k: int, K: int) -> None:
    # Every sequence of K letters among k, equally likely: the share whose vote (Aletheia's
    # statistics.mode, ours: first letter to reach the top count) is A, the gold letter.
    letters = "ABCDE"[:k]
    seqs = list(itertools.product(letters, repeat=K))
    assert sum(majority_pick(s) == "A" for s in seqs) / len(seqs) == pytest.approx(1 / k)
    assert sum(majority_vote(s) == "A" for s in seqs) / len(seqs) == pytest.approx(1 / k)
    got = random_aletheia([Judged("p", "A", (1.0,) + (0.0,) * (k - 1), (None,) * K)], [])
    assert got["majority_accuracy"] == pytest.approx(1 / k)
