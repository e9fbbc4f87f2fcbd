"""What a verifier that knows nothing scores: the baselines printed beside every metric.

Two kinds, per split and for both report sections:

- **random**: the expected value of each metric for a verifier that answers every prompt with
  a letter drawn uniformly among the prompt's valid letters, independently (never invalid).
  Computed exactly, no simulation: top-1 = mean of 1/k; maj@K = 1/k as well (letters are
  exchangeable and exactly one wins the vote, ties included); best-of-K = 1 - (1 - 1/k)^K;
  pairwise accuracy 0.5 and transitivity 0.75 (a random 3-candidate round robin is a cycle 2
  times in 8). NDCG is averaged over every possible outcome, enumerated with its
  probability: the 2^(n(n-1)/2) round robins of an n-candidate list (Aletheia's section) and
  the multinomial vote counts of K listwise responses (ours); lists have at most 5
  candidates, so that is at most 1024 outcomes, enumerated once per list size (the ranking
  they give does not depend on the pass rates). Tau-b has a closed form (its functions say
  why), which the tests check against the same enumeration.
- **fixed letter**: a verifier that always answers the same letter, to every listwise and
  pair prompt (a letter past a prompt's last candidate is an invalid answer). Its metrics are
  the real scoring functions run on those answers: `always A`, and the letter that scores the
  best top-1 accuracy on the split (named in the report).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import cache

from pipeline.evaluate.metrics import Judged, ndcg
from pipeline.evaluate.protocol import (
    UNDEFINED_TAU,
    PairVerdict,
    RankedList,
    curve_ks,
    exp_dcg,
    verdict_from_pick,
)
from schemas.instance import ANSWER_LETTERS

RANDOM_TRANSITIVITY = 0.75  # of the 8 round robins of 3 candidates, 6 are a strict order


# -- exact enumeration ----------------------------------------------------------------------


def tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall tau-b of two short sequences (scipy's `variant="b"`); None where undefined."""
    n = len(x)
    concordant = discordant = tied_x = tied_y = 0
    for i, j in itertools.combinations(range(n), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        tied_x += dx == 0
        tied_y += dy == 0
        if dx and dy:
            if (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return (concordant - discordant) / denominator if denominator else None


@cache
def round_robin_outcomes(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every win-count vector a uniformly random round robin of n candidates can give, with
    its probability (each of the n(n-1)/2 pairs won by either side with 1/2)."""
    pairs = list(itertools.combinations(range(n), 2))
    counts: Counter[tuple[int, ...]] = Counter()
    for winners in itertools.product((0, 1), repeat=len(pairs)):
        wins = [0] * n
        for (i, j), w in zip(pairs, winners, strict=True):
            wins[j if w else i] += 1
        counts[tuple(wins)] += 1
    total = 2 ** len(pairs)
    return tuple((w, c / total) for w, c in sorted(counts.items()))


@cache
def vote_outcomes(n: int, k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every vote-count vector of k responses each picking one of n candidates uniformly, with
    its multinomial probability k! / (c_1! ... c_n!) / n^k."""
    out = []
    for cuts in itertools.combinations(range(k + n - 1), n - 1):  # stars and bars
        bounds = (-1, *cuts, k + n - 1)
        votes = tuple(bounds[i + 1] - bounds[i] - 1 for i in range(n))
        ways = math.factorial(k) / math.prod(math.factorial(c) for c in votes)
        out.append((votes, ways / n**k))
    return tuple(out)


@cache
def _round_robin_orders(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The ranking (most wins first, equal wins in list order) of a random round robin, with
    its probability: it does not depend on the pass rates, so it is worked out once per n."""
    orders: Counter[tuple[int, ...]] = Counter()
    for wins, p in round_robin_outcomes(n):
        orders[tuple(sorted(range(n), key=lambda c: -wins[c]))] += p
    return tuple(orders.items())


@cache
def _vote_orders(n: int, k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The vote-share ranking (ties by position) of k random votes, with its probability."""
    orders: Counter[tuple[int, ...]] = Counter()
    for votes, p in vote_outcomes(n, k):
        orders[tuple(sorted(range(n), key=lambda c: (-votes[c], c)))] += p
    return tuple(orders.items())


def enumerated_list_tau(pattern: Sequence[float]) -> float:
    """Aletheia's per-list tau-b (undefined scored -1), averaged over every round robin."""
    total = 0.0
    for wins, p in round_robin_outcomes(len(pattern)):
        t = tau_b(wins, pattern) if len(set(wins)) > 1 and len(set(pattern)) > 1 else None
        total += p * (UNDEFINED_TAU if t is None else t)
    return total


def expected_list_tau(pass_rates: Sequence[float]) -> float:
    """`enumerated_list_tau` in closed form (the tests check the two agree): relabelling the
    candidates maps round robins one to one, so each defined tau-b comes with every
    permutation of its win counts, and those average to 0 (the tau-b denominator does not
    change under a permutation; the numerator sums to 0). What is left is the undefined
    case: -1 times the chance that every candidate wins as often (or -1 when the pass rates
    are all equal)."""
    if len(set(pass_rates)) < 2:
        return UNDEFINED_TAU
    return UNDEFINED_TAU * _all_equal_chance(len(pass_rates))


@cache
def _all_equal_chance(n: int) -> float:
    return sum(p for wins, p in round_robin_outcomes(n) if len(set(wins)) == 1)


def _expected_list_ndcg(pass_rates: Sequence[float]) -> float | None:
    """Aletheia's per-list NDCG (gain 2^rel - 1; equal wins keep list order) under a random
    round robin; None where the ideal DCG is 0 (such lists are left out)."""
    ideal = exp_dcg(sorted(pass_rates, reverse=True))
    if ideal == 0.0:
        return None
    orders = _round_robin_orders(len(pass_rates))
    return sum(p * exp_dcg([pass_rates[c] for c in order]) / ideal for order, p in orders)


def enumerated_vote_tau(pattern: Sequence[float], k: int) -> float | None:
    """Our per-instance tau-b given that it is defined (vote shares not all equal), averaged
    over every vote count of k random responses; None when it is never defined."""
    total = mass = 0.0
    for votes, p in vote_outcomes(len(pattern), k):
        t = tau_b(votes, pattern)
        if t is not None:
            total += p * t
            mass += p
    return total / mass if mass else None


def expected_vote_tau(pass_rates: Sequence[float], k: int) -> float | None:
    """`enumerated_vote_tau` in closed form (the tests check the two agree): the vote counts'
    distribution is the same under any relabelling of the candidates, so, as for the round
    robin, the defined tau-b values average to 0. Defined needs unequal pass rates and vote
    counts that are not all equal (possible whenever there are 2+ candidates)."""
    return 0.0 if len(set(pass_rates)) > 1 and k >= 1 else None


def _expected_vote_ndcg(pass_rates: Sequence[float], k: int) -> float:
    """Our NDCG (linear gain, vote-share ties broken by position) under k random votes."""
    n = len(pass_rates)
    return sum(
        p * ndcg([n - order.index(c) for c in range(n)], pass_rates)  # scores giving that order
        for order, p in _vote_orders(n, k)
    )


# -- the random verifier's expected metrics ---------------------------------------------------


def random_aletheia(judged: Sequence[Judged], lists: Sequence[RankedList]) -> dict[str, float]:
    """Expected values of the Aletheia-protocol metrics (same keys as score.aletheia_metrics)."""
    ndcgs = [x for rl in lists if (x := _expected_list_ndcg(rl.pass_rates)) is not None]
    counted = sum(rl.pass_rates[v.i] != rl.pass_rates[v.j] for rl in lists for v in rl.verdicts)
    judged_triples = sum(math.comb(len(rl.pass_rates), 3) for rl in lists)
    return {
        "top1_accuracy": _mean(1 / j.n for j in judged),
        "majority_accuracy": _mean(1 / j.n for j in judged),
        "best_of_k_accuracy": _expected_best_of_k(judged),
        "invalid_rate": 0.0 if judged else math.nan,
        "lists_scored": len(lists),
        "kendall_tau_b": _mean(expected_list_tau(rl.pass_rates) for rl in lists),
        "ndcg": _mean(ndcgs),
        "ndcg_lists": len(ndcgs),
        "pairwise_accuracy": 0.5 if counted else math.nan,
        "pairwise_counted": counted,
        "transitivity": RANDOM_TRANSITIVITY if judged_triples else math.nan,
    }


def random_vote_share(judged: Sequence[Judged]) -> dict[str, float]:
    """Expected values of our vote-share metrics (same keys as metrics.split_metrics)."""
    taus = [t for j in judged if (t := expected_vote_tau(j.pass_rates, len(j.picks))) is not None]
    unequal = sum(
        j.pass_rates[a] != j.pass_rates[b]
        for j in judged
        for a, b in itertools.combinations(range(j.n), 2)
    )
    return {
        "top1_accuracy": _mean(1 / j.n for j in judged),
        "self_consistency_accuracy": _mean(1 / j.n for j in judged),
        "best_of_n_accuracy": _expected_best_of_k(judged),
        "invalid_rate": 0.0 if judged else math.nan,
        "pairwise_accuracy": 0.5 if unequal else math.nan,
        "pairwise_pairs": unequal,
        "kendall_tau_b": _mean(taus),
        "ndcg": _mean(_expected_vote_ndcg(j.pass_rates, len(j.picks)) for j in judged),
        "ndcg_instances": len(judged),
    }


def random_sc_curve(judged: Sequence[Judged]) -> list[dict[str, float | int]]:
    """The random verifier's self-consistency curve, at the k of the split's own curve: maj@k
    stays 1/n at every k (letters are exchangeable), best-of-k = 1 - (1 - 1/n)^k (undefined
    at k = 1)."""
    most = max((len(j.picks) for j in judged), default=0)
    out: list[dict[str, float | int]] = []
    for k in curve_ks(most) if most else []:
        at = [j for j in judged if len(j.picks) >= k]
        out.append(
            {
                "k": k,
                "instances": len(at),
                "majority_accuracy": _mean(1 / j.n for j in at),
                "best_of_k_accuracy": (
                    math.nan if k == 1 else _mean(1 - (1 - 1 / j.n) ** k for j in at)
                ),
            }
        )
    return out


def _expected_best_of_k(judged: Sequence[Judged]) -> float:
    """1 - (1 - 1/n)^K over the instances with 2+ responses (best-of-1 is undefined)."""
    return _mean(1 - (1 - 1 / j.n) ** len(j.picks) for j in judged if len(j.picks) > 1)


# -- a verifier that always gives the same letter ---------------------------------------------


def fixed_letter_answers(
    letter: str, judged: Sequence[Judged], lists: Sequence[RankedList]
) -> tuple[list[Judged], list[RankedList]]:
    """The same instances and round robins, every response replaced by `letter` (invalid where
    the prompt has no such option)."""
    position = ANSWER_LETTERS.index(letter)
    # The raw answer is the letter itself, valid or not (a box holding a letter past the
    # last candidate is one invalid answer, as in Aletheia's vote).
    fixed = [
        replace(
            j,
            picks=(letter if position < j.n else None,) * len(j.picks),
            boxes=(letter,) * len(j.picks),
        )
        for j in judged
    ]
    pair_pick = letter if position < 2 else None
    fixed_lists = [
        RankedList(rl.pass_rates, tuple(_fixed(v, pair_pick) for v in rl.verdicts)) for rl in lists
    ]
    return fixed, fixed_lists


def _fixed(v: PairVerdict, pick: str | None) -> PairVerdict:
    return verdict_from_pick(v.i, v.j, pick)


def letters_in(judged: Sequence[Judged]) -> list[str]:
    """The letters some instance of the split offers."""
    return list(ANSWER_LETTERS[: max((j.n for j in judged), default=0)])


def _mean(values: object) -> float:
    vals = list(values)  # type: ignore[call-overload]
    return sum(vals) / len(vals) if vals else math.nan
