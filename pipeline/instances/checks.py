"""Invariant checks on instance tables (DESIGN.md section 8); the stages run them on their
own output before writing, and tests and publish call them again."""

from __future__ import annotations

from collections.abc import Iterable

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
    """Every breach of invariant 1 and of the row's own consistency, as messages."""
    out: list[str] = []
    for i, row in enumerate(table.to_pylist()):
        where = f"row {i} (prompt_id {row['prompt_id']})"
        n = row["num_candidates"]
        if not 2 <= n <= len(ANSWER_LETTERS):
            out.append(f"{where}: num_candidates {n} is not in 2..{len(ANSWER_LETTERS)}")
            continue
        for col in _LIST_COLUMNS:
            if len(row[col]) != n:
                out.append(f"{where}: {col} has {len(row[col])} entries for {n} candidates")
        verdicts = row["verdicts"]
        acs = [j for j, v in enumerate(verdicts) if v == "AC"]
        if len(acs) != 1:
            out.append(f"{where}: verdicts has {len(acs)} AC, not exactly one")
        elif acs[0] != row["chosen_position"]:
            out.append(f"{where}: chosen_position {row['chosen_position']} but AC at {acs[0]}")
        if "SE" in verdicts:
            out.append(f"{where}: verdicts contains SE")
        pos = row["chosen_position"]
        if not 0 <= pos < n or row["chosen_answer"] != ANSWER_LETTERS[pos]:
            out.append(
                f"{where}: chosen_answer {row['chosen_answer']!r} does not match position {pos}"
            )
        elif row["pass_rates"][pos] != 1.0:
            out.append(
                f"{where}: pass_rates[{pos}] of the correct candidate is {row['pass_rates'][pos]}"
            )
        if len(set(row["candidate_ids"])) != n:
            out.append(f"{where}: candidate_ids are not distinct")
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
