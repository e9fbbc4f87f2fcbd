"""Adv and Mixed: bias edits on instances, every edited program judged again.

1. pick the instances to edit (all for Adv, a seeded share for Mixed);
2. per candidate, a bias type of its role (pro on incorrect, anti on the correct one)
   drawn by a seeded RNG; an edit that does not apply falls through to the next type;
3. check each edit's shape with tree-sitter (comment-only edits differ in comments only,
   renames are one consistent renaming, dead code adds no parse error);
4. judge every edited program again; an edit whose verdict or pass rate differs from
   the original's is rejected and counted (invariant 4), and the candidate stays as it was.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.instances.adversarial.catalogue import BY_NAME, BiasType, bias_types
from pipeline.instances.adversarial.syntax import (
    differs_in_comments_only,
    has_error,
    renaming_between,
)
from pipeline.instances.config import AdversarialConfig
from pipeline.instances.rng import hash64
from schemas.ids import candidate_id_for, instance_id_for

STAGE = "adversarial"


@dataclass
class PlannedEdit:
    row: int
    position: int
    bias: str
    problem_id: str
    language: str
    origin: str
    generator: str
    tier: str
    before: str
    after: str
    verdict: str
    pass_rate: float

    @property
    def candidate_id(self) -> str:
        return candidate_id_for(self.language, self.after)


@dataclass
class Outcome:
    """What the sandbox said of an edited program (None where it could not be judged)."""

    verdict: str
    pass_rate: float


# A re-judge function: edits in, one Outcome (or None: not judgeable) per edit, same order.
Rejudge = Callable[[list[PlannedEdit]], list[Outcome | None]]


def shape_ok(bias: BiasType, language: str, before: str, after: str) -> bool:
    """Parse both programs and check the edit changed only what its kind allows."""
    if bias.kind == "comment":
        return differs_in_comments_only(language, before, after)
    if bias.kind == "identifier":
        return renaming_between(language, before, after) is not None
    return not (has_error(language, after) and not has_error(language, before))


def select_rows(instance_ids: list[str], share: float, seed: int) -> set[int]:
    """Exactly round(share * n) rows, those with the smallest seeded hash of their instance_id."""
    k = round(share * len(instance_ids))
    if k == 0:
        return set()
    hashes = hash64(instance_ids, f"{seed}:adversarial-select")
    order = sorted(range(len(instance_ids)), key=lambda i: (int(hashes[i]), instance_ids[i]))
    return set(order[:k])


def plan_edits(
    rows: list[dict[str, Any]], config: AdversarialConfig
) -> tuple[list[PlannedEdit], set[int], dict[str, Any]]:
    """The edits to try, the rows picked for editing, and per-bias counts so far."""
    pro = bias_types(config.bias_types, "pro")
    anti = bias_types(config.bias_types, "anti")
    selected = select_rows([r["instance_id"] for r in rows], config.share, config.seed)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    planned: list[PlannedEdit] = []
    for i in sorted(selected):
        row = rows[i]
        for pos, code in enumerate(row["candidates"]):
            is_correct = pos == row["chosen_position"]
            if (is_correct and not config.edit_correct) or (
                not is_correct and not config.edit_incorrect
            ):
                continue
            pool = list(anti if is_correct else pro)
            if not pool:
                continue
            rng = random.Random(f"{config.seed}:{row['instance_id']}:{pos}")
            rng.shuffle(pool)
            language = row["candidate_languages"][pos]
            for bias in pool:
                after = bias.apply(language, code, rng)
                if after is None or after == code:
                    counts[bias.name]["not_applicable"] += 1
                    continue
                if not shape_ok(bias, language, code, after):
                    counts[bias.name]["rejected_shape"] += 1
                    continue
                others = {cid for j, cid in enumerate(row["candidate_ids"]) if j != pos}
                if candidate_id_for(language, after) in others:
                    counts[bias.name]["rejected_collision"] += 1
                    continue
                planned.append(
                    PlannedEdit(
                        row=i,
                        position=pos,
                        bias=bias.name,
                        problem_id=row["problem_id"],
                        language=language,
                        origin=row["candidate_origins"][pos],
                        generator=row["candidate_generators"][pos],
                        tier=row["weak_strong"],
                        before=code,
                        after=after,
                        verdict=row["verdicts"][pos],
                        pass_rate=float(row["pass_rates"][pos]),
                    )
                )
                counts[bias.name]["planned"] += 1
                break
    return planned, selected, {k: dict(v) for k, v in counts.items()}


def apply_edits(
    rows: list[dict[str, Any]], config: AdversarialConfig, rejudge: Rejudge
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Edited rows (the output split) and stats; `rejudge` judges the edited programs."""
    planned, selected, by_bias = plan_edits(rows, config)
    outcomes = rejudge(planned) if planned else []
    if len(outcomes) != len(planned):
        raise RuntimeError(f"re-judge returned {len(outcomes)} outcomes for {len(planned)} edits")

    accepted: dict[int, dict[int, PlannedEdit]] = defaultdict(dict)
    rejected_examples: list[dict[str, Any]] = []
    for edit, outcome in zip(planned, outcomes, strict=True):
        counts = by_bias.setdefault(edit.bias, {})
        if outcome is None:
            reason = "not_rejudged"
        elif outcome.verdict == "SE":
            reason = "rejudge_sandbox_error"  # unknown, so not usable either way
        elif outcome.verdict != edit.verdict:
            reason = "rejected_verdict_changed"
        elif outcome.pass_rate != edit.pass_rate:
            reason = "rejected_pass_rate_changed"
        else:
            counts["accepted"] = counts.get("accepted", 0) + 1
            accepted[edit.row][edit.position] = edit
            continue
        counts[reason] = counts.get(reason, 0) + 1
        if len(rejected_examples) < 20:
            rejected_examples.append(
                {
                    "instance_id": rows[edit.row]["instance_id"],
                    "position": edit.position,
                    "bias": edit.bias,
                    "reason": reason,
                    "verdict": [edit.verdict, outcome.verdict if outcome else None],
                    "pass_rate": [edit.pass_rate, outcome.pass_rate if outcome else None],
                }
            )

    out: list[dict[str, Any]] = []
    dropped = 0
    for i, row in enumerate(rows):
        edits = accepted.get(i, {})
        if i in selected and not edits and config.drop_selected_without_edit:
            dropped += 1
            continue
        new = dict(row)
        new["candidates"] = list(row["candidates"])
        new["candidate_ids"] = list(row["candidate_ids"])
        new["adversarial"] = list(row["adversarial"])
        for pos, edit in edits.items():
            new["candidates"][pos] = edit.after
            new["candidate_ids"][pos] = edit.candidate_id
            new["adversarial"][pos] = edit.bias
        new["split"] = config.split
        new["instance_id"] = instance_id_for(
            row["problem_id"], new["candidate_ids"], salt=config.split
        )
        if config.build_id is not None:
            new["build_id"] = config.build_id
        out.append(new)

    edited_rows = sum(1 for r in out if any(a is not None for a in r["adversarial"]))
    stats = {
        "instances_in": len(rows),
        "selected": len(selected),
        "rows_out": len(out),
        "rows_with_edits": edited_rows,
        "dropped_selected_without_edit": dropped,
        "edits_planned": len(planned),
        "edits_accepted": sum(len(v) for v in accepted.values()),
        "edits_rejected_by_rejudge": sum(
            v.get(k, 0)
            for v in by_bias.values()
            for k in ("rejected_verdict_changed", "rejected_pass_rate_changed")
        ),
        "by_bias": {k: dict(sorted(by_bias[k].items())) for k in sorted(by_bias)},
        "rejected_examples": rejected_examples,
    }
    return out, stats


def sandbox_rejudge(problems: dict[str, Any], client: Any, config: AdversarialConfig) -> Rejudge:
    """Re-judge through the judge stage (same requests, limits and comparison as the originals)."""
    from pipeline.judge.stage import judge_rows
    from schemas.candidate import Candidate

    def rejudge(edits: list[PlannedEdit]) -> list[Outcome | None]:
        cands = [
            Candidate(
                candidate_id=e.candidate_id,
                problem_id=e.problem_id,
                language=e.language,  # type: ignore[arg-type]
                code=e.after,
                extraction="ok",
                origin=e.origin,  # type: ignore[arg-type]
                generator=e.generator,
                tier=e.tier,  # type: ignore[arg-type]
            )
            for e in edits
        ]
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
    "apply_edits",
    "plan_edits",
    "sandbox_rejudge",
    "shape_ok",
]
