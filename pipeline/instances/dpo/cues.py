"""Surface cues that tell a DPO pair's chosen turn from its rejected one without its answer.

Aletheia's construction closes every chosen turn with `</think>` and the gold box, while a
rejected turn is kept as the judge wrote it; where the judges rarely close their thinking
(a small model, a tight token budget) nearly every chosen turn closes it and nearly no
rejected one does, and a model trained on the pairs can learn that instead of the answer.
Measured per pair, three cues:

- `think_closed`: the turn holds `</think>` (1) or not (0);
- `boxes`: how many `\\boxed{` the turn holds;
- `length`: the turn's length in characters.

For each cue, the pairs where the chosen turn's value is higher, lower, or the same as the
rejected one's. The share a single cue orders correctly, `separates` = max(higher, lower) /
pairs, is what a rule "pick the turn with more (or less) of it" gets right, ties counted
wrong: above `SEPARATES_WARN` the DPO stage warns in the build log and the card says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.dpo import turn_text

CUES: tuple[str, ...] = ("think_closed", "boxes", "length")
CUE_WORDS: dict[str, str] = {
    "think_closed": "closes `</think>`",
    "boxes": "`\\boxed{}` count",
    "length": "length (characters)",
}
SEPARATES_WARN = 0.9  # one cue ordering more than this share of pairs is a warning


def cue_values(text: str) -> dict[str, int]:
    return {
        "think_closed": int("</think>" in text),
        "boxes": text.count("\\boxed{"),
        "length": len(text),
    }


@dataclass(frozen=True)
class CueStats:
    """One cue over a set of pairs."""

    cue: str
    pairs: int
    chosen_higher: int
    chosen_lower: int
    chosen_value: float  # think_closed: the share of turns; boxes: the mean; length: the median
    rejected_value: float
    median_ratio: float | None = None  # length: the median of chosen / rejected

    @property
    def tied(self) -> int:
        return self.pairs - self.chosen_higher - self.chosen_lower

    @property
    def separates(self) -> float:
        """The share of pairs one rule on this cue orders correctly (more, or less, of it)."""
        return max(self.chosen_higher, self.chosen_lower) / self.pairs if self.pairs else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "chosen_higher": self.chosen_higher,
            "chosen_lower": self.chosen_lower,
            "tied": self.tied,
            "separates": round(self.separates, 4),
            "chosen": round(self.chosen_value, 4),
            "rejected": round(self.rejected_value, 4),
            **({"median_ratio": round(self.median_ratio, 4)} if self.median_ratio else {}),
        }


def _summary(cue: str, values: list[int]) -> float:
    if not values:
        return 0.0
    if cue == "length":
        return float(statistics.median(values))
    return sum(values) / len(values)  # a share for think_closed, a mean for boxes


def measure_cues(chosen: Sequence[str], rejected: Sequence[str]) -> list[CueStats]:
    """Every cue over the pairs (chosen[i], rejected[i])."""
    if len(chosen) != len(rejected):
        raise ValueError(f"cues: {len(chosen)} chosen turns but {len(rejected)} rejected ones")
    c = [cue_values(t) for t in chosen]
    r = [cue_values(t) for t in rejected]
    out = []
    for cue in CUES:
        cv, rv = [v[cue] for v in c], [v[cue] for v in r]
        ratios = [a / b for a, b in zip(cv, rv, strict=True) if b] if cue == "length" else []
        out.append(
            CueStats(
                cue=cue,
                pairs=len(cv),
                chosen_higher=sum(a > b for a, b in zip(cv, rv, strict=True)),
                chosen_lower=sum(a < b for a, b in zip(cv, rv, strict=True)),
                chosen_value=_summary(cue, cv),
                rejected_value=_summary(cue, rv),
                median_ratio=float(statistics.median(ratios)) if ratios else None,
            )
        )
    return out


def measure_rows(rows: Iterable[dict[str, Any]]) -> list[CueStats]:
    """The cues of DPO rows (`chosen` and `rejected` as published)."""
    pairs = [(turn_text(r["chosen"]), turn_text(r["rejected"])) for r in rows]
    return measure_cues([c for c, _ in pairs], [r for _, r in pairs])


def cue_warnings(name: str, stats: Sequence[CueStats]) -> list[str]:
    """One line per cue that separates more than SEPARATES_WARN of the pairs."""
    return [
        f"{name}: the cue {CUE_WORDS[s.cue]} alone orders {s.separates:.0%} of the "
        f"{s.pairs} pairs (chosen {'higher' if s.chosen_higher >= s.chosen_lower else 'lower'}"
        f"): a model can learn it instead of the answer; dpo.rejected_form: closed builds "
        "pairs whose turns share one form"
        for s in stats
        if s.pairs and s.separates > SEPARATES_WARN
    ]
