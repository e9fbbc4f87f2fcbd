"""Invariant checks on instance tables (docs/architecture.md, "Invariants"); the stages run them on their
own output before writing, and tests and publish call them again."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl
import pyarrow as pa

from schemas.instance import ANSWER_LETTERS

_LIST_COLUMNS = (
    "candidates",
    "pass_rates",
    "candidate_ids",
    "candidate_origins",
    "candidate_generators",
    "candidate_languages",
    "verdicts",
    "adversarial",
)


class InvariantError(AssertionError):
    """An output table breaks an invariant; the message names the row and the field."""


def instance_violations(table: pa.Table) -> list[str]:
    """Every breach of invariant 1 and of the row's own consistency, as messages.

    Vectorised (polars) so it runs on every output at full scale; messages name the row
    (index and prompt_id) and the field.
    """
    if table.num_rows == 0:
        return []
    df = pl.from_arrow(
        table.select(
            ["prompt_id", "num_candidates", "chosen_position", "chosen_answer", *_LIST_COLUMNS]
        )
    )
    assert isinstance(df, pl.DataFrame)
    n, pos = pl.col("num_candidates"), pl.col("chosen_position")
    is_ac = pl.col("verdicts").list.eval(pl.element() == "AC")
    letters = list(ANSWER_LETTERS)
    checks: list[tuple[str, pl.Expr]] = [
        ("num_candidates is not in 2..5", ~n.is_between(2, len(ANSWER_LETTERS))),
        *[
            (f"{c} length differs from num_candidates", pl.col(c).list.len() != n)
            for c in _LIST_COLUMNS
        ],
        ("verdicts does not hold exactly one AC", is_ac.list.sum() != 1),
        ("chosen_position is not the AC candidate", is_ac.list.arg_max() != pos),
        ("verdicts contains SE", pl.col("verdicts").list.contains("SE")),
        (
            "chosen_answer does not match chosen_position",
            # the bare letter, or Aletheia's [[A]] form (publish.answer_format: bracketed)
            pl.col("chosen_answer").str.replace(r"^\[\[([A-Z])\]\]$", "$1")
            != pos.clip(0, len(letters) - 1).replace_strict(list(range(len(letters))), letters),
        ),
        (
            "pass_rates of the correct candidate is not 1.0",
            pl.col("pass_rates").list.get(pos, null_on_oob=True) != 1.0,
        ),
        ("candidate_ids are not distinct", pl.col("candidate_ids").list.n_unique() != n),
    ]
    flagged = df.with_row_index("_row").select(
        "_row", "prompt_id", *[expr.fill_null(True).alias(msg) for msg, expr in checks]
    )
    out: list[str] = []
    for msg, _ in checks:
        for row, pid in flagged.filter(pl.col(msg)).select("_row", "prompt_id").iter_rows():
            out.append(f"row {row} (prompt_id {pid}): {msg}")
    return out


def disjoint_problem_violations(train: pa.Table, evals: Iterable[pa.Table]) -> list[str]:
    """Invariant 2 (exact problems): no problem_id of Train in any eval table."""
    train_ids = set(train.column("problem_id").to_pylist())
    out = []
    for t in evals:
        for split, pid in zip(
            t.column("split").to_pylist(), t.column("problem_id").to_pylist(), strict=True
        ):
            if pid in train_ids:
                out.append(f"problem {pid} is in train and in {split}")
    return out


def require(violations: list[str], what: str) -> None:
    if violations:
        shown = "; ".join(violations[:5])
        raise InvariantError(f"{what}: {len(violations)} violation(s): {shown}")
