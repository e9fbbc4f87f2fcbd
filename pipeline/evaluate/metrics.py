"""Vote-share metrics (ours; the report's second section), tested on hand-computed values.

Aletheia's protocol, the report's first section, is pipeline/evaluate/protocol.py; these
metrics rank candidates differently (by listwise vote shares, not a pairwise round robin),
so their numbers are not comparable with the paper's.

Inputs per instance: `picks`, the letter each of the K responses chose (None = invalid
response), the gold letter and the candidates' pass rates. How a verifier *ranks*
candidates: by vote share, the fraction of its K responses that picked the candidate
(invalid responses vote for nobody). Ranking metrics compare that score with the pass
rates; ties in the score are real ties (Kendall tau-b, pairwise accuracy count them),
and NDCG breaks them by candidate position (documented, deterministic). An instance none of
whose responses is valid has no ranking at all: the ranking metrics leave it out and report
how many instances (or pairs) they rest on, so a score from nothing is not read as a score.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import kendalltau

from schemas.instance import ANSWER_LETTERS

Pick = str | None


@dataclass(frozen=True)
class Judged:
    """One instance: the verifier's K picks and what is true about the candidates."""

    prompt_id: str
    gold: str
    pass_rates: tuple[float, ...]
    picks: tuple[Pick, ...]
    adversarial: tuple[str | None, ...] = ()
    problem_id: str = ""
    instance_id: str = ""
    source_instance_id: str | None = None  # Adv rows: the Heldout row they were edited from
    # The raw content of each response's answer box (None: no box), what Aletheia's
    # majority vote counts; () = the picks themselves (rows built without the texts).
    boxes: tuple[str | None, ...] = ()

    @property
    def answers(self) -> tuple[str | None, ...]:
        """The raw answers (`boxes`), or the picks where no raw answers were given."""
        return self.boxes or self.picks

    @property
    def pair_key(self) -> tuple[str, int, str]:
        """What an Adv row shares with the Heldout row it was edited from (its prompt_id may differ)."""
        return (self.problem_id, self.n, self.gold)

    @property
    def n(self) -> int:
        return len(self.pass_rates)

    @property
    def has_valid_pick(self) -> bool:
        return any(p is not None for p in self.picks)

    @property
    def gold_position(self) -> int:
        return ANSWER_LETTERS.index(self.gold)


def vote_shares(picks: Sequence[Pick], n: int) -> list[float]:
    """Fraction of all K responses that picked each candidate (invalid ones pick none)."""
    if not picks:
        raise ValueError("vote_shares: no responses")
    counts = Counter(p for p in picks if p is not None)
    return [counts[ANSWER_LETTERS[i]] / len(picks) for i in range(n)]


def majority_vote(picks: Sequence[Pick]) -> Pick:
    """The most frequent valid pick; a tie goes to the letter that reached the top count first."""
    counts: Counter[str] = Counter()
    best: Pick = None
    for p in picks:
        if p is None:
            continue
        counts[p] += 1
        if best is None or counts[p] > counts[best]:
            best = p
    return best


def top1_accuracy(items: Sequence[Judged]) -> float:
    """Mean single-response accuracy: the average over instances of the share of correct responses."""
    return _mean(sum(p == j.gold for p in j.picks) / len(j.picks) for j in items)


def self_consistency_accuracy(items: Sequence[Judged]) -> float:
    """Accuracy of the majority vote over the K responses."""
    return _mean(float(majority_vote(j.picks) == j.gold) for j in items)


def best_of_n_accuracy(items: Sequence[Judged]) -> float:
    """Oracle best-of-K: at least one of the K responses picked the gold candidate; over the
    instances with 2+ responses (best-of-1 is undefined, as in Aletheia's protocol)."""
    return _mean(float(j.gold in j.picks) for j in items if len(j.picks) > 1)


def invalid_rate(items: Sequence[Judged]) -> float:
    return _mean(sum(p is None for p in j.picks) / len(j.picks) for j in items)


def pairwise_accuracy(items: Sequence[Judged]) -> float:
    """Over every candidate pair with different pass rates: 1 when the vote shares order them the
    same way, 0.5 on a vote tie, 0 when reversed. Pairs pooled over the instances with a valid
    response (see `pairwise_pairs`)."""
    return _pairwise(items)[0]


def pairwise_pairs(items: Sequence[Judged]) -> int:
    """How many candidate pairs pairwise accuracy rests on."""
    return _pairwise(items)[1]


def _pairwise(items: Sequence[Judged]) -> tuple[float, int]:
    total, agree = 0, 0.0
    for j in (j for j in items if j.has_valid_pick):
        s = vote_shares(j.picks, j.n)
        for a in range(j.n):
            for b in range(a + 1, j.n):
                dp = j.pass_rates[a] - j.pass_rates[b]
                if dp == 0:
                    continue
                total += 1
                ds = s[a] - s[b]
                agree += 0.5 if ds == 0 else float((ds > 0) == (dp > 0))
    return (agree / total if total else float("nan"), total)


def kendall_tau_b(items: Sequence[Judged]) -> tuple[float, int]:
    """Mean per-instance Kendall tau-b between vote shares and pass rates, and how many instances
    it is defined on (tau-b is undefined when either side is constant, e.g. one unanimous vote
    over 2 candidates is fine but all-invalid responses are not)."""
    taus = []
    for j in items:
        s = vote_shares(j.picks, j.n)
        if len(set(s)) < 2 or len(set(j.pass_rates)) < 2:
            continue
        tau = kendalltau(s, j.pass_rates, variant="b").statistic
        if not math.isnan(tau):
            taus.append(float(tau))
    return (_mean(taus), len(taus))


def ndcg(scores: Sequence[float], relevance: Sequence[float]) -> float:
    """NDCG of the ranking by `scores` (ties: earlier position first) with gains = relevance,
    discount 1/log2(rank + 1), rank from 1."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    dcg = sum(relevance[i] / math.log2(r + 2) for r, i in enumerate(order))
    ideal = sum(rel / math.log2(r + 2) for r, rel in enumerate(sorted(relevance, reverse=True)))
    return dcg / ideal if ideal > 0 else float("nan")


def mean_ndcg(items: Sequence[Judged]) -> float:
    """Mean NDCG over the instances with a valid response (with none, every vote share is 0 and
    the "ranking" would be the list order: a score from nothing)."""
    return _mean(ndcg(vote_shares(j.picks, j.n), j.pass_rates) for j in items if j.has_valid_pick)


def accuracy_by_gold_position(items: Sequence[Judged]) -> dict[str, float]:
    """Top-1 accuracy split by where the gold candidate sits (position bias shows up here)."""
    groups: dict[str, list[Judged]] = defaultdict(list)
    for j in items:
        groups[j.gold].append(j)
    return {letter: top1_accuracy(groups[letter]) for letter in sorted(groups)}


def flip_rates(adv: Sequence[Judged], heldout: Sequence[Judged]) -> dict[str, dict[str, float]]:
    """Per bias type: how often the verifier's majority decision changes when the bias edits are applied.

    An Adv row is paired with the Heldout row it was edited from (its `source_instance_id`),
    else with the one Heldout row of the same (problem_id, number of candidates, gold letter);
    `prompt_id` is the problem's id, shared by all its rows, so it cannot pair rows. Rows with
    no unambiguous partner are left out (and counted in `unpaired`). A row with several bias types counts for
    each. Per bias type: `n` pairs; `valid`, the pairs where both majority decisions are a
    letter (with no valid response there is no decision to flip); over those, `flip_rate`: the
    decision changed, and `correct_to_wrong`: right on Heldout, wrong on Adv. Both are NaN
    (null in report.json) when no pair is valid, never 0.
    """
    by_id = {j.instance_id: j for j in heldout if j.instance_id}
    by_key: dict[tuple[str, int, str], list[Judged]] = defaultdict(list)
    for j in heldout:
        by_key[j.pair_key].append(j)
    stats: dict[str, list[tuple[bool, bool] | None]] = defaultdict(list)
    unpaired = 0
    for a in adv:
        h = by_id.get(a.source_instance_id) if a.source_instance_id else None
        if h is None and len(by_key.get(a.pair_key, [])) == 1:
            h = by_key[a.pair_key][0]
        if h is None:
            unpaired += 1
            continue
        before, after = majority_vote(h.picks), majority_vote(a.picks)
        outcome = (
            None
            if before is None or after is None
            else (before != after, before == h.gold and after != a.gold)
        )
        for bias in sorted({b for b in a.adversarial if b}) or ["none"]:
            stats[bias].append(outcome)
    out: dict[str, dict[str, float]] = {}
    for bias, v in sorted(stats.items()):
        valid = [o for o in v if o is not None]
        out[bias] = {
            "n": float(len(v)),
            "valid": float(len(valid)),
            "flip_rate": _mean(float(f) for f, _ in valid),
            "correct_to_wrong": _mean(float(h) for _, h in valid),
        }
    return out | ({"unpaired": {"n": float(unpaired)}} if unpaired else {})


def split_metrics(items: Sequence[Judged]) -> dict[str, object]:
    tau, tau_n = kendall_tau_b(items)
    return {
        "instances": len(items),
        "k": len(items[0].picks) if items else 0,
        "top1_accuracy": top1_accuracy(items),
        "self_consistency_accuracy": self_consistency_accuracy(items),
        "best_of_n_accuracy": best_of_n_accuracy(items),
        "invalid_rate": invalid_rate(items),
        "pairwise_accuracy": pairwise_accuracy(items),
        "pairwise_pairs": pairwise_pairs(items),
        "kendall_tau_b": tau,
        "kendall_tau_b_instances": tau_n,
        "ndcg": mean_ndcg(items),
        "ndcg_instances": sum(j.has_valid_pick for j in items),
        "accuracy_by_gold_position": accuracy_by_gold_position(items),
    }


def _mean(values: object) -> float:
    vals = list(values)  # type: ignore[call-overload]
    return sum(vals) / len(vals) if vals else float("nan")
