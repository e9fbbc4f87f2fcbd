"""How a verifier's verdicts become one pick per problem (pure functions; tested on hand values).

As Aletheia's `bon_livecodebench.py`:

- list: one prompt shows the samples as candidates A, B, ...; a response picks a letter (or,
  scoring, scores every candidate and picks the unique highest); an unparseable response
  picks nothing, and a problem with no pick is a failed pick;
- pairwise: every pair (i < j) is asked as a 2-candidate prompt, in both orders unless told
  otherwise; each valid verdict is a win for the candidate it names; the pick is the most
  wins, ties to the lower sample index (`w.index(max(w))`); no valid verdict at all: no pick.

Ours:

- K responses per prompt (votes): list and knockout take the most-voted position, ties to
  the earlier letter (as Aletheia's `calibration.py` breaks vote ties: alphabetically);
  pairwise counts every valid verdict of every response as a win;
- knockout, for more samples than one prompt should show: the samples in lists of at most
  `size` (sizes as even as they can be: 8 in lists of 5 are 4 + 4), each list's pick goes on
  to the next round, until one is left; a list whose verdict is unparseable sends no one on,
  and a round with no one left is a failed pick.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

from pipeline.common.answers import AnswerRule, score_list, scored_pick, selection_index

Vote = int | None  # a position within the prompt's candidates (0 = A), or None: unparseable


def read_vote(text: str, num_candidates: int, *, scoring: bool, rule: AnswerRule) -> Vote:
    """The position one response picks among `num_candidates` (None: unparseable)."""
    if scoring:
        return scored_pick(score_list(text, rule), num_candidates)
    return selection_index(text, num_candidates, rule)


def plurality(votes: Sequence[Vote]) -> Vote:
    """The most-voted position among the valid votes, ties to the lowest; None if none is valid."""
    counts = Counter(v for v in votes if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def vote_share(votes: Sequence[Vote]) -> float | None:
    """The share of the valid votes that went to the plurality's pick (its confidence, as
    `calibration.py`'s self-consistency); None with no valid vote."""
    valid = [v for v in votes if v is not None]
    pick = plurality(valid)
    return None if pick is None else valid.count(pick) / len(valid)


def pair_orders(n: int, both_orders: bool = True) -> list[tuple[int, int]]:
    """The (shown as A, shown as B) sample positions of every pair among the first `n`: each
    pair i < j as (i, j) and, with `both_orders`, (j, i)."""
    pairs = []
    for i, j in itertools.combinations(range(n), 2):
        pairs.append((i, j))
        if both_orders:
            pairs.append((j, i))
    return pairs


def most_wins(wins: Sequence[int]) -> int | None:
    """The position with the most wins, ties to the lowest; None when nobody won anything."""
    if not wins or max(wins) == 0:
        return None
    return list(wins).index(max(wins))


def pairwise_pick(
    verdicts: dict[tuple[int, int], Sequence[Vote]], n: int
) -> tuple[int | None, list[int]]:
    """The pick among the first `n` samples and their win counts, from the verdicts of the
    ordered pairs (a, b) (each a list of votes: 0 = a wins, 1 = b wins, None = unparseable);
    pairs reaching past `n` are left out, so the first n of N read the same verdicts."""
    wins = [0] * n
    for (a, b), votes in verdicts.items():
        if a >= n or b >= n:
            continue
        for v in votes:
            if v is not None:
                wins[(a, b)[v]] += 1
    return most_wins(wins), wins


def knockout_groups(members: Sequence[int], size: int) -> list[tuple[int, ...]]:
    """`members` cut, in order, into the fewest lists of at most `size`, their sizes as even as
    possible (earlier lists take the remainder): 8 by 5 -> 4 + 4, 11 by 5 -> 4 + 4 + 3."""
    if size < 2:
        raise ValueError(f"knockout size {size}: a list needs 2 or more")
    count = math.ceil(len(members) / size) if members else 0
    out, start = [], 0
    for g in range(count):
        length = len(members) // count + (1 if g < len(members) % count else 0)
        out.append(tuple(members[start : start + length]))
        start += length
    return out
