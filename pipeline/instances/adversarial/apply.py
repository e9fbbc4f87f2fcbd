"""Adv and Mixed: bias edits on instances, every edited program judged again.

Two constructions (`AdversarialConfig.construction`):

- `per_row` (default, Aletheia's `src/rq4_datagen.py`): a row carries ONE bias type, its
  `modification`. A pro-bias type is put on every incorrect candidate (the same wording on
  each), an anti-bias type on the correct one only; every other candidate is kept as it
  was. Adv copies each input row once per configured type; Mixed gives each picked row one
  type drawn by a seeded RNG. A copy is kept only if every targeted edit applied, kept its
  shape and kept its verdict.
- `per_candidate` (ours, earlier): each candidate of a picked row gets its own randomly
  drawn type of its role, so one row mixes types (`modification` is "mixed").

Both: check each edit's shape with tree-sitter (comment-only edits differ in comments
only, renames are one consistent renaming, layout edits keep the token stream, added code
adds no parse error), then judge every edited program again, except those proven
unchanged (comments or layout only, in a program that cannot read its own lines or source:
`unchanged.py`), which keep the original's verdict, counted `carried_unchanged`; an edit
whose verdict or pass rate differs from the original's is rejected and counted (invariant
4). Aletheia does not re-judge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.instances.adversarial.catalogue import BY_NAME, bias_types
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.adversarial.plan import (
    Counts,
    PlannedEdit,
    RowPlan,
    plan_edits,
    plan_per_row,
    select_rows,
    shape_ok,
    targets,
)
from pipeline.instances.adversarial.unchanged import provably_unchanged
from schemas.ids import instance_id_for

if TYPE_CHECKING:
    from sandbox.engines import JudgeEngine
    from schemas.problem import Problem

STAGE = "adversarial"


@dataclass
class Outcome:
    """What the sandbox said of an edited program (None where it could not be judged)."""

    verdict: str
    pass_rate: float


# A re-judge function: edits in, one Outcome (or None: not judgeable) per edit, same order.
Rejudge = Callable[[list[PlannedEdit]], list[Outcome | None]]


def carries_verdict(edit: PlannedEdit, config: AdversarialConfig) -> bool:
    """True when the edit is proven not to change its program (comments or layout only,
    see unchanged.py), so it keeps the original's verdict and pass rate unjudged."""
    return not config.rejudge_unchanged and provably_unchanged(
        edit.language, edit.before, edit.after
    )


def _verdicts(
    rows: list[dict[str, Any]],
    planned: list[PlannedEdit],
    rejudge: Rejudge,
    counts: Counts,
    config: AdversarialConfig,
) -> tuple[list[bool], list[dict[str, Any]]]:
    """Re-judge every planned edit not proven unchanged; per edit whether it kept its
    verdict and pass rate (a proven edit keeps them by construction)."""
    carried = [carries_verdict(e, config) for e in planned]
    to_judge = [e for e, c in zip(planned, carried, strict=True) if not c]
    judged = iter(rejudge(to_judge) if to_judge else [])
    outcomes: list[Outcome | None] = []
    try:
        for edit, c in zip(planned, carried, strict=True):
            outcomes.append(Outcome(edit.verdict, edit.pass_rate) if c else next(judged))
    except StopIteration:
        raise RuntimeError(
            f"re-judge returned too few outcomes for {len(to_judge)} edits"
        ) from None
    if next(judged, None) is not None:
        raise RuntimeError(f"re-judge returned too many outcomes for {len(to_judge)} edits")
    ok: list[bool] = []
    examples: list[dict[str, Any]] = []
    for edit, outcome, c in zip(planned, outcomes, carried, strict=True):
        if c:
            counts[edit.bias]["carried_unchanged"] += 1
        if outcome is None:
            reason = "not_rejudged"
        elif outcome.verdict == "SE":
            reason = "rejudge_sandbox_error"  # unknown, so not usable either way
        elif outcome.verdict != edit.verdict:
            reason = "rejected_verdict_changed"
        elif outcome.pass_rate != edit.pass_rate:
            reason = "rejected_pass_rate_changed"
        else:
            counts[edit.bias]["accepted"] += 1
            ok.append(True)
            continue
        ok.append(False)
        counts[edit.bias][reason] += 1
        if len(examples) < 20:
            examples.append(
                {
                    "instance_id": rows[edit.row]["instance_id"],
                    "position": edit.position,
                    "bias": edit.bias,
                    "reason": reason,
                    "verdict": [edit.verdict, outcome.verdict if outcome else None],
                    "pass_rate": [edit.pass_rate, outcome.pass_rate if outcome else None],
                }
            )
    return ok, examples


def _edited_row(
    row: dict[str, Any],
    edits: list[PlannedEdit],
    modification: str | None,
    config: AdversarialConfig,
) -> dict[str, Any]:
    new = dict(row)
    new["candidates"] = list(row["candidates"])
    new["candidate_ids"] = list(row["candidate_ids"])
    new["adversarial"] = list(row["adversarial"])
    for edit in edits:
        new["candidates"][edit.position] = edit.after
        new["candidate_ids"][edit.position] = edit.candidate_id
        new["adversarial"][edit.position] = edit.bias
    new["modification"] = modification
    new["source_instance_id"] = row["instance_id"]
    new["split"] = config.split
    # The bias is in the salt: two copies of one row never share an instance_id.
    new["instance_id"] = instance_id_for(
        row["problem_id"], new["candidate_ids"], salt=f"{config.split}:{modification or ''}"
    )
    if config.build_id is not None:
        new["build_id"] = config.build_id
    return new


def _rows_per_row(
    rows: list[dict[str, Any]], config: AdversarialConfig, rejudge: Rejudge
) -> tuple[list[dict[str, Any]], dict[str, Any], Counts]:
    plans, selected, counts = plan_per_row(rows, config)
    planned = [e for p in plans for e in p.edits]
    ok, examples = _verdicts(rows, planned, rejudge, counts, config)
    good = {e.plan for e, k in zip(planned, ok, strict=True) if k}
    bad = {e.plan for e, k in zip(planned, ok, strict=True) if not k}
    kept = [p for n, p in enumerate(plans) if n in good and n not in bad]
    for n in sorted(bad):
        counts[plans[n].bias]["copies_rejected_by_rejudge"] += 1
    by_row: dict[int, list[RowPlan]] = defaultdict(list)
    for p in kept:
        by_row[p.row].append(p)
    out: list[dict[str, Any]] = []
    dropped = 0
    if config.copy_per_bias:
        # Aletheia concatenates one block per bias type; so do we, in the configured order.
        order = config.bias_types or [b.name for b in bias_types(None)]
        by_bias: dict[str, list[RowPlan]] = defaultdict(list)
        for p in kept:
            by_bias[p.bias].append(p)
        for name in order:
            out += [_edited_row(rows[p.row], p.edits, p.bias, config) for p in by_bias[name]]
        dropped = sum(1 for i in selected if i not in by_row)
        out += [_edited_row(r, [], None, config) for i, r in enumerate(rows) if i not in selected]
    else:
        for i, row in enumerate(rows):
            got = by_row.get(i)
            if got:
                out.append(_edited_row(row, got[0].edits, got[0].bias, config))
            elif i in selected and config.drop_selected_without_edit:
                dropped += 1
            else:
                out.append(_edited_row(row, [], None, config))
    stats = {
        "construction": "per_row",
        "selected": len(selected),
        "row_copies_planned": len(plans),
        "row_copies_kept": len(kept),
        "selected_rows_without_any_copy": dropped,
        "edits_planned": len(planned),
        "edits_accepted": sum(ok),
        "rejected_examples": examples,
    }
    return out, stats, counts


def _rows_per_candidate(
    rows: list[dict[str, Any]], config: AdversarialConfig, rejudge: Rejudge
) -> tuple[list[dict[str, Any]], dict[str, Any], Counts]:
    planned, selected, counts = plan_edits(rows, config)
    ok, examples = _verdicts(rows, planned, rejudge, counts, config)
    accepted: dict[int, list[PlannedEdit]] = defaultdict(list)
    for edit, k in zip(planned, ok, strict=True):
        if k:
            accepted[edit.row].append(edit)
    out: list[dict[str, Any]] = []
    dropped = 0
    for i, row in enumerate(rows):
        edits = accepted.get(i, [])
        if i in selected and not edits and config.drop_selected_without_edit:
            dropped += 1
            continue
        kinds = sorted({e.bias for e in edits})
        modification = None if not kinds else kinds[0] if len(kinds) == 1 else "mixed"
        out.append(_edited_row(row, edits, modification, config))
    stats = {
        "construction": "per_candidate",
        "selected": len(selected),
        "selected_rows_without_any_copy": dropped,
        "edits_planned": len(planned),
        "edits_accepted": sum(ok),
        "rejected_examples": examples,
    }
    return out, stats, counts


def apply_edits(
    rows: list[dict[str, Any]], config: AdversarialConfig, rejudge: Rejudge
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Edited rows (the output split) and stats; `rejudge` judges the edited programs."""
    build = _rows_per_row if config.construction == "per_row" else _rows_per_candidate
    out, stats, counts = build(rows, config, rejudge)
    stats.update(
        instances_in=len(rows),
        rows_out=len(out),
        rows_with_edits=sum(1 for r in out if r["modification"] is not None),
        # Edits no verdict came back for (a judged table that lacks them, or not judgeable):
        # each rejected and counted, never dropped unseen.
        edits_not_rejudged=sum(c.get("not_rejudged", 0) for c in counts.values()),
        # Edits proven unchanged (comments / layout only): accepted with the original's
        # verdict, no sandbox run (unchanged.py); counted in `accepted` too.
        edits_carried_unchanged=sum(c.get("carried_unchanged", 0) for c in counts.values()),
        by_bias={k: dict(sorted(counts[k].items())) for k in sorted(counts)},
        rows_by_modification={
            k: sum(1 for r in out if r["modification"] == k)
            for k in sorted({r["modification"] for r in out if r["modification"]})
        },
    )
    return out, stats


def sandbox_rejudge(
    problems: dict[str, Problem], client: JudgeEngine, config: AdversarialConfig
) -> Rejudge:
    """Re-judge through the judge stage (same requests, limits and comparison as the originals)."""
    from pipeline.judge.stage import judge_rows

    def rejudge(edits: list[PlannedEdit]) -> list[Outcome | None]:
        cands = [e.as_candidate() for e in edits]
        judged = judge_rows(cands, problems, client, config.judge)
        by_key = {
            (r["problem_id"], r["candidate_id"]): Outcome(r["verdict"], float(r["pass_rate"]))
            for r in judged
        }
        return [by_key.get((e.problem_id, e.candidate_id)) for e in edits]

    return rejudge


__all__ = [
    "BY_NAME",
    "Outcome",
    "PlannedEdit",
    "Rejudge",
    "RowPlan",
    "apply_edits",
    "carries_verdict",
    "plan_edits",
    "plan_per_row",
    "sandbox_rejudge",
    "select_rows",
    "shape_ok",
    "targets",
]
