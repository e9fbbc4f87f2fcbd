"""Planning bias edits: which candidates of which rows get which type, and the edited text.

Nothing is judged here; `apply.py` re-judges every planned edit in the sandbox.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pipeline.common.progress import track
from pipeline.instances.adversarial.catalogue import BiasType, bias_types
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.adversarial.syntax import (
    code_stream,
    differs_in_comments_only,
    has_error,
    renaming_between,
)
from pipeline.instances.rng import hash64
from schemas.candidate import Candidate
from schemas.ids import candidate_id_for


@dataclass
class PlannedEdit:
    row: int
    position: int
    plan: int  # per_row: index of the row copy this edit belongs to; per_candidate: -1
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

    def as_candidate(self, parent_candidate_id: str | None = None) -> Candidate:
        """The edited program as a candidate row for the judge stage."""
        return Candidate(
            candidate_id=self.candidate_id,
            problem_id=self.problem_id,
            language=self.language,  # type: ignore[arg-type]
            code=self.after,
            extraction="ok",
            origin=self.origin,  # type: ignore[arg-type]
            generator=self.generator,
            tier=self.tier,  # type: ignore[arg-type]
            parent_candidate_id=parent_candidate_id,
        )


def _docstring_only(language: str, before: str, after: str) -> bool:
    """Python: `after` is `before` behind one leading string statement (a docstring)."""
    a, b = code_stream(language, after), code_stream(language, before)
    extra = a[: len(a) - len(b)]
    return (
        len(a) > len(b)
        and a[len(a) - len(b) :] == b
        and all(t == "<line>" or t.startswith("string") for t, _ in extra)
    )


def shape_ok(bias: BiasType, language: str, before: str, after: str) -> bool:
    """Parse both programs and check the edit changed only what its kind allows."""
    if has_error(language, after) and not has_error(language, before):
        return False
    if bias.kind == "comment" or (bias.kind == "docstring" and language != "python"):
        return differs_in_comments_only(language, before, after)
    if bias.kind == "docstring":
        return _docstring_only(language, before, after)
    if bias.kind == "identifier":
        return renaming_between(language, before, after) is not None
    if bias.kind == "layout":
        return after != before and code_stream(language, before) == code_stream(language, after)
    return True


def select_rows(instance_ids: list[str], share: float, seed: int) -> set[int]:
    """Exactly round(share * n) rows, those with the smallest seeded hash of their instance_id."""
    k = round(share * len(instance_ids))
    if k == 0:
        return set()
    hashes = hash64(instance_ids, f"{seed}:adversarial-select")
    order = sorted(range(len(instance_ids)), key=lambda i: (int(hashes[i]), instance_ids[i]))
    return set(order[:k])


Counts = dict[str, dict[str, int]]


def _try_edit(
    bias: BiasType, row: dict[str, Any], pos: int, rng: random.Random, counts: Counts
) -> str | None:
    """The edited program of candidate `pos`, or None (counted under the reason)."""
    code = row["candidates"][pos]
    language = row["candidate_languages"][pos]
    after = bias.apply(language, code, rng)
    if after is None or after == code:
        counts[bias.name]["not_applicable"] += 1
        return None
    if not shape_ok(bias, language, code, after):
        counts[bias.name]["rejected_shape"] += 1
        return None
    others = {cid for j, cid in enumerate(row["candidate_ids"]) if j != pos}
    if candidate_id_for(language, after) in others:
        counts[bias.name]["rejected_collision"] += 1
        return None
    return after


def _planned(
    row_index: int, row: dict[str, Any], pos: int, bias: str, after: str, plan: int
) -> PlannedEdit:
    return PlannedEdit(
        row=row_index,
        position=pos,
        plan=plan,
        bias=bias,
        problem_id=row["problem_id"],
        language=row["candidate_languages"][pos],
        origin=row["candidate_origins"][pos],
        generator=row["candidate_generators"][pos],
        tier=row["weak_strong"],
        before=row["candidates"][pos],
        after=after,
        verdict=row["verdicts"][pos],
        pass_rate=float(row["pass_rates"][pos]),
    )


def targets(bias: BiasType, row: dict[str, Any]) -> list[int]:
    """Positions a per-row bias edits: every incorrect candidate (pro) or the correct one (anti).

    Aletheia's helpers meant the same, but build the new list with a filtering
    comprehension, which keeps only the edited candidates; every candidate stays here.
    """
    chosen = row["chosen_position"]
    if bias.role == "anti":
        return [chosen]
    return [p for p in range(row["num_candidates"]) if p != chosen]


def plan_row_copy(
    row_index: int, row: dict[str, Any], bias: BiasType, plan: int, seed: int, counts: Counts
) -> list[PlannedEdit] | None:
    """The edits for one copy of a row under one bias type, or None if any target fails."""
    edits = []
    for pos in targets(bias, row):
        # One RNG state per (row, type), restarted for each target: the same wording on each.
        rng = random.Random(f"{seed}:{row['instance_id']}:{bias.name}")
        after = _try_edit(bias, row, pos, rng, counts)
        if after is None:
            return None
        edits.append(_planned(row_index, row, pos, bias.name, after, plan))
    counts[bias.name]["planned"] += 1
    return edits


@dataclass
class RowPlan:
    row: int
    bias: str
    edits: list[PlannedEdit]


def plan_per_row(
    rows: list[dict[str, Any]], config: AdversarialConfig
) -> tuple[list[RowPlan], set[int], Counts]:
    """Adv (`copy_per_bias`): every row x every type. Mixed: each picked row gets the first
    type, in a seeded order, whose edits apply to all its targets."""
    types = bias_types(config.bias_types)
    selected = select_rows([r["instance_id"] for r in rows], config.share, config.seed)
    counts: Counts = defaultdict(lambda: defaultdict(int))
    plans: list[RowPlan] = []
    tracker = track("rows", len(selected))
    for i in sorted(selected):
        tracker.advance()
        row = rows[i]
        order = list(types)
        if not config.copy_per_bias:
            random.Random(f"{config.seed}:{row['instance_id']}:type").shuffle(order)
        for bias in order:
            edits = plan_row_copy(i, row, bias, len(plans), config.seed, counts)
            if edits is None:
                continue
            plans.append(RowPlan(i, bias.name, edits))
            if not config.copy_per_bias:
                break
    return plans, selected, counts


def plan_edits(
    rows: list[dict[str, Any]], config: AdversarialConfig
) -> tuple[list[PlannedEdit], set[int], Counts]:
    """`per_candidate` (ours): a type of its role per candidate, drawn by a seeded RNG; an
    edit that does not apply falls through to the next type."""
    pro = bias_types(config.bias_types, "pro")
    anti = bias_types(config.bias_types, "anti")
    selected = select_rows([r["instance_id"] for r in rows], config.share, config.seed)
    counts: Counts = defaultdict(lambda: defaultdict(int))
    planned: list[PlannedEdit] = []
    for i in sorted(selected):
        row = rows[i]
        for pos in range(row["num_candidates"]):
            is_correct = pos == row["chosen_position"]
            if (is_correct and not config.edit_correct) or (
                not is_correct and not config.edit_incorrect
            ):
                continue
            pool = list(anti if is_correct else pro)
            rng = random.Random(f"{config.seed}:{row['instance_id']}:{pos}")
            rng.shuffle(pool)
            for bias in pool:
                after = _try_edit(bias, row, pos, rng, counts)
                if after is None:
                    continue
                planned.append(_planned(i, row, pos, bias.name, after, -1))
                counts[bias.name]["planned"] += 1
                break
    return planned, selected, counts
