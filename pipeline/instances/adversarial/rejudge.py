"""The re-judge of bias-edited programs, done outside the flow process.

Planning is deterministic (seeded by the config and the instance ids), so the edits are
planned twice: once to write the edited programs as a candidates table that the judge
shards judge on the sandbox nodes, and once more, when the judged table is back, to build
the output rows. `table_rejudge` answers each planned edit from that judged table by
(problem_id, candidate_id); an edit the table lacks is `None`, counted as `not_rejudged`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.instances.adversarial.apply import Outcome, Rejudge
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.adversarial.plan import Counts, PlannedEdit, plan_edits, plan_per_row
from schemas.candidate import Candidate
from schemas.ids import normalize_code
from schemas.tables import validate_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA


class EditPlanError(ValueError):
    """Two planned edits share a candidate id but not a program: the lookup would be ambiguous."""


def planned_edits(
    rows: list[dict[str, Any]], config: AdversarialConfig
) -> tuple[list[PlannedEdit], Counts]:
    """Every edit the configured construction plans (the same list `apply_edits` judges)."""
    if config.construction == "per_row":
        plans, _, counts = plan_per_row(rows, config)
        return [e for p in plans for e in p.edits], counts
    planned, _, counts = plan_edits(rows, config)
    return planned, counts


def edit_candidates(planned: list[PlannedEdit], rows: list[dict[str, Any]]) -> list[Candidate]:
    """One candidate per distinct (problem_id, candidate_id) among the planned edits, first
    occurrence first: an edited program that several plans produce is judged once.

    The candidate id hashes the language and the normalised code, as the judge's own
    dedup does; a second edit under the same key must be the same normalised program,
    else the judged table could not tell the two apart (raises EditPlanError).
    """
    seen: dict[tuple[str, str], PlannedEdit] = {}
    out: list[Candidate] = []
    for edit in planned:
        key = (edit.problem_id, edit.candidate_id)
        first = seen.get(key)
        if first is not None:
            if first.language != edit.language or normalize_code(first.after) != normalize_code(
                edit.after
            ):
                raise EditPlanError(
                    f"instance {rows[edit.row]['instance_id']} position {edit.position} "
                    f"({edit.bias}): candidate_id {edit.candidate_id} already names another "
                    f"edited program of problem {edit.problem_id}"
                )
            continue
        seen[key] = edit
        out.append(edit.as_candidate(rows[edit.row]["candidate_ids"][edit.position]))
    return out


def load_outcomes(judged: Path) -> dict[tuple[str, str], Outcome]:
    """(problem_id, candidate_id) -> Outcome from a judged table (JUDGED_CANDIDATE_SCHEMA).

    The same program may sit on several rows (two generators); rows that disagree mean the
    table is not one judge run's output, so that is an error naming the row.
    """
    judged = Path(judged)
    if not judged.exists():
        raise FileNotFoundError(f"no judged edits at {judged}")
    columns = ["problem_id", "candidate_id", "verdict", "pass_rate"]
    schema = pa.schema([JUDGED_CANDIDATE_SCHEMA.field(c) for c in columns])
    # Only the four columns: the per-test lists of a large re-judge are not needed here.
    present = [c for c in columns if c in pq.read_schema(judged).names]
    table = validate_table(pq.read_table(judged, columns=present), schema, name=judged.name)
    out: dict[tuple[str, str], Outcome] = {}
    for r in table.to_pylist():
        key = (r["problem_id"], r["candidate_id"])
        outcome = Outcome(r["verdict"], float(r["pass_rate"]))
        if out.setdefault(key, outcome) != outcome:
            raise ValueError(
                f"{judged}: candidate {key[1]} of problem {key[0]} has two verdicts "
                f"({out[key]} and {outcome})"
            )
    return out


def table_rejudge(judged: Path) -> Rejudge:
    """A Rejudge that reads the outcomes of the judge shards instead of calling a sandbox."""
    outcomes = load_outcomes(judged)

    def rejudge(edits: list[PlannedEdit]) -> list[Outcome | None]:
        return [outcomes.get((e.problem_id, e.candidate_id)) for e in edits]

    return rejudge
