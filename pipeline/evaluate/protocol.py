"""Aletheia's evaluation protocol: the default report (each metric tested on hand-computed values).

Accuracy (Aletheia `src/evaluate.py`, `src/evaluate_ckpt.py`), on the listwise prompt:

- top-1: the first sampled response alone picks the gold letter (K=1 in Aletheia);
- majority vote (maj@K): Python's `statistics.mode` over the K responses' raw answers, the
  content of each answer box as written (None where a response has no box). Every
  distinct content is its own vote: `B`, `F` (past the last candidate), `AB` and no box
  at all are four different answers, so invalid answers do not pool their votes. A tie
  goes to the answer met first. Correct when the winning content is the gold letter;
- best-of-K: some response picks the gold letter; undefined (null) at K = 1, where
  Aletheia reports none;
- self-consistency curves: maj@k and best-of-k over the first k responses, for every
  k = 1, 2, ..., K.

Ranking (Aletheia `src/ranking_consistency.py`, `src/kendall_tau.py`), on lists of 3+
candidates only: every pair (i < j) of a list is asked as its own 2-candidate prompt
(candidate i as A, j as B; one sample), each valid verdict is a win for the candidate it
picks, and candidates are ranked by their win counts (a stable sort: equal counts keep
list order). Per list:

- Kendall tau-b between win counts and pass rates; where it is undefined (all win counts
  equal, all pass rates equal, or NaN) the list scores -1, not nothing. Only those lists
  count as undefined: a defined tau-b of exactly -1 (a fully reversed ranking) is a value;
- NDCG with gain `2^pass_rate - 1` and discount `1/log2(rank + 1)`; a list whose ideal DCG
  is 0 is left out;
- pairwise accuracy: over single verdicts (not lists), invalid verdicts and pairs with equal
  pass rates left out;
- transitivity: the share of candidate triples with all three verdicts valid whose wins
  form a strict order (2, 1, 0).

As in Aletheia, a list none of whose pairwise verdicts is valid has no wins recorded at
all and is left out of tau and NDCG (it is counted in `lists_without_valid_verdict`).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import kendalltau

Pick = str | None
Box = str | None  # the raw content of a response's answer box; None: the response has none
UNDEFINED_TAU = -1.0  # Aletheia's score for a list whose tau-b is undefined


@dataclass(frozen=True)
class PairVerdict:
    """One round-robin verdict: candidates i < j (0-based) of a list; the winner or None (invalid)."""

    i: int
    j: int
    winner: int | None

    def __post_init__(self) -> None:
        if not 0 <= self.i < self.j:
            raise ValueError(f"pair ({self.i}, {self.j}): need 0 <= i < j")
        if self.winner is not None and self.winner not in (self.i, self.j):
            raise ValueError(f"pair ({self.i}, {self.j}): winner {self.winner} is neither")


def round_robin_pairs(n: int) -> list[tuple[int, int]]:
    """The pairs a list of `n` candidates is asked as (none below 3 candidates, as in Aletheia)."""
    return list(itertools.combinations(range(n), 2)) if n >= 3 else []


def verdict_from_pick(i: int, j: int, pick: Pick) -> PairVerdict:
    """A 2-candidate response's letter as a verdict: A is candidate i, B is candidate j."""
    return PairVerdict(i, j, {"A": i, "B": j}.get(pick or ""))


# -- accuracy ------------------------------------------------------------------------------


def majority_pick(answers: Sequence[Box]) -> Box:
    """`statistics.mode` of the raw answers: each distinct content (None included) is one
    answer with its own votes; a tie goes to the answer met first."""
    if not answers:
        raise ValueError("majority_pick: no responses")
    return statistics.mode(answers)


def top1_accuracy(golds: Sequence[str], answers: Sequence[Sequence[Box]]) -> float:
    """Share of instances whose first response picks the gold letter."""
    return _mean(float(a[0] == g) for g, a in zip(golds, answers, strict=True))


def majority_correct(gold: str, answers: Sequence[Box]) -> bool:
    return majority_pick(answers) == gold


def majority_accuracy(golds: Sequence[str], answers: Sequence[Sequence[Box]]) -> float:
    """maj@K over the raw answers (see `majority_pick`)."""
    return _mean(float(majority_correct(g, a)) for g, a in zip(golds, answers, strict=True))


def best_of_k_correct(gold: str, answers: Sequence[Box]) -> bool | None:
    """Some response picks the gold letter; None (undefined) for a single response."""
    return None if len(answers) < 2 else gold in answers


def best_of_k_accuracy(golds: Sequence[str], answers: Sequence[Sequence[Box]]) -> float:
    """Mean over the instances with 2+ responses (NaN, null in the report, when none has)."""
    hits = (best_of_k_correct(g, a) for g, a in zip(golds, answers, strict=True))
    return _mean(float(h) for h in hits if h is not None)


def curve_ks(k: int) -> list[int]:
    """The k of a self-consistency curve: every k from 1 to K (the paper's curves, K = 8)."""
    return list(range(1, k + 1))


def self_consistency_curve(
    golds: Sequence[str], answers: Sequence[Sequence[Box]]
) -> list[dict[str, float | int]]:
    """maj@k and best-of-k over each instance's first k responses, k from `curve_ks`; a
    point rests on the instances with at least k responses (`instances`)."""
    most = max((len(a) for a in answers), default=0)
    out: list[dict[str, float | int]] = []
    for k in curve_ks(most) if most else []:
        pairs = [(g, a[:k]) for g, a in zip(golds, answers, strict=True) if len(a) >= k]
        out.append(
            {
                "k": k,
                "instances": len(pairs),
                "majority_accuracy": majority_accuracy(*_unzip(pairs)),
                "best_of_k_accuracy": best_of_k_accuracy(*_unzip(pairs)),
            }
        )
    return out


def _unzip(pairs: list[tuple[str, Sequence[Box]]]) -> tuple[list[str], list[Sequence[Box]]]:
    return [g for g, _ in pairs], [a for _, a in pairs]


# -- ranking from round-robin verdicts -------------------------------------------------------


def win_counts(n: int, verdicts: Sequence[PairVerdict]) -> list[int]:
    """Wins per candidate; a pair decided twice counts once (Aletheia keeps a set of (winner, loser))."""
    seen = {(v.winner, v.j if v.winner == v.i else v.i) for v in verdicts if v.winner is not None}
    wins = [0] * n
    for winner, _ in seen:
        wins[winner] += 1
    return wins


def round_robin_ranking(n: int, verdicts: Sequence[PairVerdict]) -> list[int]:
    """Candidate positions, most wins first; equal win counts keep list order."""
    wins = win_counts(n, verdicts)
    return sorted(range(n), key=lambda c: -wins[c])


def list_tau_b(pass_rates: Sequence[float], verdicts: Sequence[PairVerdict]) -> float | None:
    """Tau-b between win counts and pass rates; None where tau-b is undefined (all win
    counts equal, all pass rates equal, or NaN)."""
    wins = win_counts(len(pass_rates), verdicts)
    if len(set(wins)) == 1 or len(set(pass_rates)) == 1:
        return None
    tau = kendalltau(wins, list(pass_rates), variant="b").statistic
    return None if tau is None or math.isnan(tau) else float(tau)


def list_kendall_tau(pass_rates: Sequence[float], verdicts: Sequence[PairVerdict]) -> float:
    """Aletheia's per-list score: tau-b, or UNDEFINED_TAU (-1) where tau-b is undefined."""
    tau = list_tau_b(pass_rates, verdicts)
    return UNDEFINED_TAU if tau is None else tau


def exp_dcg(relevances: Sequence[float]) -> float:
    """DCG with gain 2^rel - 1 and discount 1/log2(rank + 1), ranks from 1."""
    return sum((2.0**rel - 1.0) / math.log2(r + 2) for r, rel in enumerate(relevances))


def list_ndcg(pass_rates: Sequence[float], verdicts: Sequence[PairVerdict]) -> float | None:
    """NDCG of the round-robin ranking against pass rates; None when the ideal DCG is 0."""
    order = round_robin_ranking(len(pass_rates), verdicts)
    ideal = exp_dcg(sorted(pass_rates, reverse=True))
    if ideal == 0.0:
        return None
    return exp_dcg([pass_rates[c] for c in order]) / ideal


def pairwise_counts(
    pass_rates: Sequence[float], verdicts: Sequence[PairVerdict]
) -> tuple[int, int]:
    """(correct, counted) verdicts of one list: invalid ones and equal pass rates not counted."""
    correct = total = 0
    for v in verdicts:
        if v.winner is None or pass_rates[v.i] == pass_rates[v.j]:
            continue
        total += 1
        correct += v.winner == (v.i if pass_rates[v.i] > pass_rates[v.j] else v.j)
    return correct, total


def transitivity_counts(n: int, verdicts: Sequence[PairVerdict]) -> tuple[int, int]:
    """(transitive, judged) triples: a triple is judged when all three of its verdicts are valid."""
    beats = {(v.winner, v.j if v.winner == v.i else v.i) for v in verdicts if v.winner is not None}
    transitive = judged = 0
    for triple in itertools.combinations(range(n), 3):
        wins = dict.fromkeys(triple, 0)
        seen = 0
        for x, y in itertools.combinations(triple, 2):
            if (x, y) in beats:
                wins[x] += 1
                seen += 1
            elif (y, x) in beats:
                wins[y] += 1
                seen += 1
        if seen == 3:
            judged += 1
            transitive += sorted(wins.values()) == [0, 1, 2]
    return transitive, judged


@dataclass(frozen=True)
class RankedList:
    """One list of 3+ candidates: its pass rates and its round-robin verdicts."""

    pass_rates: tuple[float, ...]
    verdicts: tuple[PairVerdict, ...]

    @property
    def has_valid_verdict(self) -> bool:
        return any(v.winner is not None for v in self.verdicts)


def ranking_metrics(lists: Sequence[RankedList]) -> dict[str, float | int]:
    """Kendall tau-b (undefined = -1), NDCG (2^rel - 1), pairwise accuracy, transitivity."""
    scored = [rl for rl in lists if rl.has_valid_verdict]
    defined = [list_tau_b(rl.pass_rates, rl.verdicts) for rl in scored]
    taus = [UNDEFINED_TAU if t is None else t for t in defined]
    ndcgs = [x for rl in scored if (x := list_ndcg(rl.pass_rates, rl.verdicts)) is not None]
    pairs = [pairwise_counts(rl.pass_rates, rl.verdicts) for rl in lists]
    triples = [transitivity_counts(len(rl.pass_rates), rl.verdicts) for rl in lists]
    verdicts = [v for rl in lists for v in rl.verdicts]
    correct, counted = sum(c for c, _ in pairs), sum(t for _, t in pairs)
    transitive, judged = sum(t for t, _ in triples), sum(j for _, j in triples)
    return {
        "lists": len(lists),
        "lists_without_valid_verdict": len(lists) - len(scored),
        "lists_scored": len(scored),  # what tau-b rests on
        "pair_verdicts": len(verdicts),
        "pair_verdicts_invalid": sum(v.winner is None for v in verdicts),
        "kendall_tau_b": _mean(taus),
        "kendall_tau_b_undefined": sum(t is None for t in defined),
        "ndcg": _mean(ndcgs),
        "ndcg_lists": len(ndcgs),
        "pairwise_accuracy": correct / counted if counted else float("nan"),
        "pairwise_counted": counted,
        "transitivity": transitive / judged if judged else float("nan"),
        "triples_judged": judged,
    }


def _mean(values: object) -> float:
    vals = list(values)  # type: ignore[call-overload]
    return sum(vals) / len(vals) if vals else float("nan")
