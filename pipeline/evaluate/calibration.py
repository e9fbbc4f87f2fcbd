"""Calibration of the verifier's K votes (the report's calibration section, per split).

As Aletheia's `src/calibration.py`, method `self_consistency` (its `_vote_from_completions`,
`compute_ece`, `compute_brier`):

- an instance's votes are its K listwise responses' answer boxes, each stripped and
  upper-cased, kept when it is one of the instance's letters (a response with no box, or
  any other content, casts no vote);
- the prediction is the most-voted letter, ties to the alphabetically first; its confidence
  is its share of the valid votes (`top_count / n_votes`); correct when it is the gold letter;
- an instance with no valid vote has no confidence and is left out (counted in `unscored`);
- expected calibration error over 10 equal-width bins of [0, 1]: the first bin is closed,
  [0, 0.1], every other is half-open on the left, (lo, hi], so a confidence of exactly 0.2
  falls in (0.1, 0.2]; ECE = sum over bins of (bin size / n) x |mean confidence - accuracy|,
  empty bins adding nothing;
- the Brier score: the mean of (confidence - correct)^2.

With K = 1 every confidence is 1 (one vote is all of the valid votes), so the ECE is then
1 - accuracy: the section says so rather than show it as a finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.evaluate.metrics import Judged
from schemas.instance import ANSWER_LETTERS

N_BINS = 10
# Aletheia's default method, the softmax of the option tokens' log-probabilities at the box, is
# not computed: the generation backends return texts, not token log-probabilities.
METHOD = "self_consistency"
BINNING = (
    "10 equal-width bins of [0, 1], the first [0, 0.1] closed, the others (lo, hi] "
    "(Aletheia's calibration.py compute_ece)"
)


def votes_of(item: Judged) -> list[str]:
    """The instance's valid votes: each answer box stripped and upper-cased, kept when it is
    one of its letters (from the picks where the row carries no raw boxes)."""
    letters = set(ANSWER_LETTERS[: item.n])
    if not item.boxes:
        return [p for p in item.picks if p is not None]
    cleaned = (b.strip().upper() for b in item.boxes if b is not None)
    return [b for b in cleaned if b in letters]


def vote_prediction(votes: Sequence[str]) -> tuple[str, float] | None:
    """(the most-voted letter, ties to the alphabetically first; its share of the votes)."""
    if not votes:
        return None
    counts = Counter(votes)
    top = max(counts.values())
    return min(x for x, c in counts.items() if c == top), top / len(votes)


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[int], n_bins: int = N_BINS
) -> tuple[float, list[dict[str, Any]]]:
    """ECE and the reliability bins (lo, hi, n, mean confidence, accuracy) with the binning of
    the module docstring."""
    conf = np.asarray(confidences, dtype=float)
    hit = np.asarray(correct, dtype=float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ece, bins = 0.0, []
    for i in range(n_bins):
        lo, hi = float(edges[i]), float(edges[i + 1])
        inside = (conf >= lo) & (conf <= hi) if i == 0 else (conf > lo) & (conf <= hi)
        m = int(inside.sum())
        if m == 0:
            bins.append({"lo": lo, "hi": hi, "n": 0, "confidence": None, "accuracy": None})
            continue
        c, a = float(conf[inside].mean()), float(hit[inside].mean())
        ece += m / len(conf) * abs(c - a)
        bins.append({"lo": lo, "hi": hi, "n": m, "confidence": c, "accuracy": a})
    return float(ece), bins


def calibration(items: Sequence[Judged], n_bins: int = N_BINS) -> dict[str, Any]:
    """The split's calibration: instances scored (with a valid vote), accuracy and mean
    confidence over them, ECE, Brier score and the reliability bins."""
    confidences: list[float] = []
    correct: list[int] = []
    for item in items:
        got = vote_prediction(votes_of(item))
        if got is not None:
            confidences.append(got[1])
            correct.append(int(got[0] == item.gold))
    ece, bins = expected_calibration_error(confidences, correct, n_bins)
    scored = len(confidences)
    return {
        "method": METHOD,
        "instances": len(items),
        "scored": scored,
        "unscored": len(items) - scored,
        "k": max((len(j.picks) for j in items), default=0),
        "accuracy": float(np.mean(correct)) if scored else float("nan"),
        "mean_confidence": float(np.mean(confidences)) if scored else float("nan"),
        "ece": ece if scored else float("nan"),
        "brier": float(np.mean((np.asarray(confidences) - np.asarray(correct)) ** 2))
        if scored
        else float("nan"),
        "n_bins": n_bins,
        "binning": BINNING,
        "bins": bins,
    }
