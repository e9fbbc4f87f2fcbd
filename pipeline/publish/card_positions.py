"""The card's gold-position mix: where the correct candidate sits, for every split of every
config, per list size (the positions plot shows only `full`).

Each position should hold about 1/n of a size's rows (the assembly draws it uniformly, and a
`test` split is drawn independently of it: tests/conformance/test_gold_positions.py). Beside
each split, a chi-square test of its counts against that, all sizes pooled (the statistic
summed over sizes, df = sum of n - 1), so a reader can tell an uneven mix on a few rows
from a skew: a small p on a split of a dozen rows is expected now and then. The test counts
each source row once: Adv holds six copies of each Heldout row (one per bias type, the gold
at the same place), and six copies of one draw are not six draws.
"""

from __future__ import annotations

from pipeline.publish.card_facts import SplitFacts
from schemas.instance import ANSWER_LETTERS


def uniform_position_p(positions_by_size: dict[int, dict[str, int]]) -> float | None:
    """The chi-square p-value of the gold positions against uniform within each list size,
    pooled over sizes; None when no size has rows."""
    stat, df = 0.0, 0
    for n, counts in positions_by_size.items():
        rows = sum(counts.values())
        if not rows:
            continue
        expected = rows / n
        stat += sum((counts.get(x, 0) - expected) ** 2 / expected for x in ANSWER_LETTERS[:n])
        df += n - 1
    from scipy.stats import chi2  # 1-9 s to import: only when a card is written

    return float(chi2.sf(stat, df)) if df else None


def _mix(counts: dict[str, int], n: int) -> str:
    return " / ".join(str(counts.get(x, 0)) for x in ANSWER_LETTERS[:n])


def position_mix_line(f: SplitFacts) -> str:
    """`- heldout / test: 2 cand. 11 / 1; 3 cand. 2 / 1 / 1 (p = 0.02)`; where rows are
    copies of fewer source rows (Adv), the p is over those: `(p = 0.2 over 12 source rows)`."""
    sizes = "; ".join(
        f"{n} cand. {_mix(c, n)}" for n, c in sorted(f.positions_by_size.items()) if c
    )
    copies = bool(f.source_positions_by_size) and f.source_rows < f.rows
    p = uniform_position_p(f.source_positions_by_size if copies else f.positions_by_size)
    over = f" over {f.source_rows} source rows" if copies else ""
    return f"- `{f.config}` / `{f.split}`: {sizes or 'no rows'}" + (
        f" (p = {p:.2g}{over})" if p is not None else ""
    )


def position_mix_md(facts: list[SplitFacts]) -> str:
    """The card's section: a line per split with rows (instance and DPO configs)."""
    lines = [f for f in facts if f.kind != "questions" and f.rows]
    if not lines:
        return ""
    return "\n".join(
        [
            "### Gold position by list size",
            "",
            (
                "Rows per position of the correct candidate (A / B / C ...) for each list "
                "size, in every split; p: a chi-square test against an even spread within "
                "each size (sizes pooled), over distinct source rows where a split holds "
                "copies of fewer rows (Adv: one per bias type). The assembly draws the "
                "position uniformly and a `test` split independently of it, so an uneven mix "
                "on a few rows (a small p on a small split) turns up by chance now and then."
            ),
            "",
            *(position_mix_line(f) for f in lines),
        ]
    )
