"""Judged candidates -> instances: one problem, 2-5 distinct candidates, exactly one AC.

Everything is vectorised in polars; every random choice is a seeded hash (see `rng`),
so the output is a pure function of (inputs, config). The steps for one split:

1. pool: eligible candidates of the split's tier on the split's problems (checked and
   cleaned once for all splits in `prepare_pool`);
2. groups: by the grouping policy (Aletheia: problem + generator + language); within a
   group, one candidate per normalised program; incorrect ones only in the split's band
   and, by Aletheia's diversity rule, one per distinct pass rate;
3. slots: up to `max_instances_per_group` per group (each with another correct
   candidate), at most `max_instances_per_problem` per problem;
4. sizes: balanced over 2..5 (or to configured targets) by water-filling;
5. lists: the incorrect candidates drawn for each slot, the correct one put at a
   uniformly drawn position; test splits capped per (list size, language).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.normalize import with_dedup_key
from pipeline.instances.rng import hash_column, mix64, purpose_salt
from pipeline.instances.sizes import allocate_sizes
from schemas.common import LANGUAGES
from schemas.ids import instance_id_for
from schemas.instance import ANSWER_LETTERS, INSTANCE_SCHEMA
from schemas.verdict import Verdict

STAGE = "assemble"
CANDIDATE_COLUMNS = [
    "candidate_id",
    "problem_id",
    "language",
    "code",
    "extraction",
    "origin",
    "generator",
    "tier",
    "verdict",
    "passed",
    "total",
    "pass_rate",
]
PROBLEM_COLUMNS = ["problem_id", "source", "statement", "prompt_statement"]
_USABLE_EXTRACTION = ("ok", "fallback", "not_applicable")
_VERDICTS = [v.value for v in Verdict]


class AssemblyInputError(ValueError):
    """An input table lacks a column or has the wrong shape; the message names it."""


@dataclass
class Pool:
    """Eligible candidates (one row each) with their problem's split, plus what was left out."""

    candidates: pl.DataFrame
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def _require(frame: pl.DataFrame, columns: list[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise AssemblyInputError(f"{name}: missing column(s) {missing}")


def _quarantine_rows(bad: pl.DataFrame, field_name: str, reason: pl.Expr) -> list[dict[str, Any]]:
    rows = bad.select(
        pl.col("candidate_id").alias("source_row_id"),
        reason.alias("reason"),
        pl.struct(
            "candidate_id", "problem_id", "language", "verdict", "passed", "total", "pass_rate"
        )
        .struct.json_encode()
        .alias("raw"),
    ).to_dicts()
    return [{"stage": STAGE, "source": "judged", "field": field_name, **r} for r in rows]


def prepare_pool(
    judged: pl.DataFrame,
    problems: pl.DataFrame,
    assignments: pl.DataFrame,
    config: AssembleConfig,
) -> Pool:
    """Check and clean the judged candidates once for every split.

    Rows that contradict themselves go to quarantine with the field and reason; SE
    verdicts, programs without code and excluded verdicts are counted and left out.
    """
    _require(judged, CANDIDATE_COLUMNS, "judged candidates")
    _require(problems, PROBLEM_COLUMNS, "problems")
    _require(assignments, ["problem_id", "split"], "split assignments")
    df = judged.select(CANDIDATE_COLUMNS)
    stats: dict[str, Any] = {"judged_rows": df.height}

    checks: list[tuple[str, pl.Expr, pl.Expr]] = [
        (
            "verdict",
            ~pl.col("verdict").is_in(_VERDICTS),
            pl.format("unknown verdict {}", "verdict"),
        ),
        (
            "language",
            ~pl.col("language").is_in(list(LANGUAGES)),
            pl.format("unknown language {}", "language"),
        ),
        ("tier", ~pl.col("tier").is_in(["weak", "strong"]), pl.format("unknown tier {}", "tier")),
        (
            "pass_rate",
            pl.col("pass_rate").is_nan() | (pl.col("pass_rate") < 0) | (pl.col("pass_rate") > 1),
            pl.format("pass_rate {} is not in [0, 1]", "pass_rate"),
        ),
        (
            "total",
            (pl.col("total") <= 0) & (pl.col("verdict") != "SE"),
            pl.lit("no tests were run"),
        ),
        (
            "verdict",
            (pl.col("verdict") == "AC")
            & ((pl.col("passed") != pl.col("total")) | (pl.col("pass_rate") != 1.0)),
            pl.format("verdict AC but {}/{} tests passed", "passed", "total"),
        ),
        (
            "verdict",
            ~pl.col("verdict").is_in(["AC", "SE"]) & (pl.col("passed") == pl.col("total")),
            pl.format("verdict {} but every test passed", "verdict"),
        ),
        (
            "problem_id",
            ~pl.col("problem_id").is_in(problems.get_column("problem_id").implode()),
            pl.lit("problem_id is not in the problems table"),
        ),
    ]
    quarantine: list[dict[str, Any]] = []
    for field_name, bad, reason in checks:
        flagged = df.filter(bad.fill_null(True))
        if flagged.height:
            quarantine += _quarantine_rows(flagged, field_name, reason)
            df = df.filter(~bad.fill_null(True))
    stats["quarantined"] = len(quarantine)

    counts: dict[str, int] = {}
    se = pl.col("verdict") == "SE"
    counts["sandbox_error"] = df.filter(se).height
    df = df.filter(~se)
    no_code = ~pl.col("extraction").is_in(_USABLE_EXTRACTION) | (
        pl.col("code").str.strip_chars() == ""
    )
    counts["no_code"] = df.filter(no_code).height
    df = df.filter(~no_code)
    excluded = pl.col("verdict").is_in(config.exclude_verdicts)
    counts["excluded_verdict"] = df.filter(excluded).height
    df = df.filter(~excluded)

    split_of = assignments.select("problem_id", pl.col("split").alias("problem_split")).unique()
    twice = split_of.filter(pl.col("problem_id").is_duplicated())
    if twice.height:  # invariant 2 would be at the mercy of row order
        pid = twice.get_column("problem_id").sort().item(0)
        raise AssemblyInputError(
            f"split assignments: problem_id {pid} is assigned to more than one split"
        )
    df = df.join(split_of, on="problem_id", how="left")
    outside = ~pl.col("problem_split").is_in(["train", "heldout"]).fill_null(False)
    counts["problem_not_in_train_or_heldout"] = df.filter(outside).height
    df = df.filter(~outside)
    # Pools no configured split draws from (e.g. strong candidates on Train problems) are
    # not normalised for nothing.
    wanted = pl.concat_str("tier", "problem_split", separator="/").is_in(
        sorted({f"{s.tier}/{s.problems}" for s in config.splits})
    )
    counts["pool_not_used_by_any_split"] = df.filter(~wanted).height
    df = df.filter(wanted)

    # The same program (up to comments and whitespace) judged AC once and not AC another
    # time is flaky: it is kept out altogether rather than trusted either way.
    df = with_dedup_key(df).with_columns(is_correct=pl.col("verdict") == "AC")
    flaky = pl.col("is_correct").n_unique().over("problem_id", "dedup_key") > 1
    counts["flaky_duplicates"] = df.filter(flaky).height
    df = df.filter(~flaky)

    df = df.with_columns(
        cand_hash=hash_column(df.get_column("candidate_id"), f"{config.seed}:candidate")
    )
    stats["left_out"] = counts
    stats["eligible"] = df.height
    return Pool(candidates=df, quarantine=quarantine, stats=stats)


def _group_key(grouping: str) -> pl.Expr:
    parts = {
        "generator_language": ["problem_id", "generator", "language"],
        "language": ["problem_id", "language"],
        "mixed": ["problem_id"],
    }[grouping]
    return pl.concat_str([pl.col(c) for c in parts], separator="\x1f").alias("gkey")


def _band_filter(spec: SplitSpec, config: AssembleConfig) -> pl.Expr:
    pr = pl.col("pass_rate")
    if spec.band == "easy":
        return pr <= config.easy_max_pass_rate
    return (pr >= config.hard_min_pass_rate) & (pr <= config.hard_max_pass_rate)


def _cap_rank(
    frame: pl.DataFrame, by: list[str], limit: int, order: str = "slot_hash"
) -> pl.DataFrame:
    """Keep the first `limit` rows of each `by` group in `order` (a seeded hash)."""
    return (
        frame.sort(order, "slot_id")
        .with_columns(_r=pl.int_range(pl.len()).over(by))
        .filter(pl.col("_r") < limit)
        .drop("_r")
    )


def build_split(
    pool: pl.DataFrame, problems: pl.DataFrame, spec: SplitSpec, config: AssembleConfig
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Instances of one split (INSTANCE_SCHEMA columns, as a polars frame) and its stats."""
    stats: dict[str, Any] = {"tier": spec.tier, "band": spec.band, "problem_split": spec.problems}
    salt = f"{config.seed}:{spec.name}"
    cands = pool.filter((pl.col("tier") == spec.tier) & (pl.col("problem_split") == spec.problems))
    cands = cands.with_columns(_group_key(config.grouping))
    stats["pool"] = cands.height

    # One candidate per normalised program per group, chosen by seeded hash.
    cands = cands.sort("cand_hash", "candidate_id").unique(
        ["gkey", "dedup_key"], keep="first", maintain_order=True
    )
    stats["after_dedup"] = cands.height
    correct = cands.filter(pl.col("is_correct"))
    incorrect = cands.filter(~pl.col("is_correct") & _band_filter(spec, config))
    if config.one_incorrect_per_pass_rate:
        incorrect = (
            incorrect.with_columns(_pr=pl.col("pass_rate").round(9))
            .unique(["gkey", "_pr"], keep="first", maintain_order=True)
            .drop("_pr")
        )
    correct = correct.with_columns(j=pl.int_range(pl.len()).over("gkey"))

    groups = (
        correct.group_by("gkey")
        .agg(pl.first("problem_id"), n_correct=pl.len())
        .join(incorrect.group_by("gkey").agg(n_incorrect=pl.len()), on="gkey", how="inner")
        .filter(pl.col("n_incorrect") >= config.min_candidates - 1)
        .with_columns(
            max_size=pl.min_horizontal(pl.col("n_incorrect") + 1, pl.lit(config.max_candidates))
        )
    )
    stats["groups_usable"] = groups.height

    # Slots: instance j of a group uses the group's j-th correct candidate.
    slots = groups.with_columns(
        j=pl.int_ranges(pl.min_horizontal("n_correct", pl.lit(spec.max_instances_per_group)))
    ).explode("j")
    slots = slots.with_columns(
        slot_id=pl.concat_str("gkey", pl.col("j").cast(pl.String), separator="\x1e")
    )
    slots = slots.with_columns(slot_hash=hash_column(slots.get_column("slot_id"), salt + ":slot"))
    before = slots.height
    slots = _cap_rank(slots, ["problem_id"], spec.max_instances_per_problem)
    stats["dropped_problem_cap"] = before - slots.height

    slots = _assign_sizes(slots, spec, config, stats)
    with_pos = mix64(
        slots.get_column("slot_hash").to_numpy(), purpose_salt(config.seed, spec.name, "position")
    )
    slots = (
        slots.with_columns(
            pos=pl.Series(
                (with_pos % slots.get_column("size").cast(pl.UInt64).to_numpy()).astype("int64")
            )
        )
        if slots.height
        else slots.with_columns(pos=pl.lit(0, dtype=pl.Int64))
    )

    chosen_correct = correct.join(
        slots.select("gkey", "j", "slot_id", "pos"), on=["gkey", "j"], how="inner"
    ).with_columns(position=pl.col("pos"))
    drawn = incorrect.join(
        slots.select("gkey", "slot_id", "slot_hash", "size", "pos"), on="gkey", how="inner"
    )
    if drawn.height:
        draw_key = mix64(
            drawn.get_column("slot_hash").to_numpy(), drawn.get_column("cand_hash").to_numpy()
        )
        drawn = drawn.with_columns(draw=pl.Series(draw_key, dtype=pl.UInt64))
    else:
        drawn = drawn.with_columns(draw=pl.lit(0, dtype=pl.UInt64))
    drawn = (
        drawn.sort("slot_id", "draw", "candidate_id")
        .with_columns(r=pl.int_range(pl.len()).over("slot_id"))
        .filter(pl.col("r") < pl.col("size") - 1)
        .with_columns(
            position=pl.when(pl.col("r") < pl.col("pos"))
            .then(pl.col("r"))
            .otherwise(pl.col("r") + 1)
        )
    )
    cols = [
        "slot_id",
        "position",
        "candidate_id",
        "code",
        "origin",
        "generator",
        "language",
        "verdict",
        "pass_rate",
    ]
    members = pl.concat([chosen_correct.select(cols), drawn.select(cols)]).sort(
        "slot_id", "position"
    )
    lists = members.group_by("slot_id", maintain_order=True).agg(
        candidates=pl.col("code"),
        candidate_ids=pl.col("candidate_id"),
        candidate_origins=pl.col("origin"),
        candidate_generators=pl.col("generator"),
        candidate_languages=pl.col("language"),
        verdicts=pl.col("verdict"),
        pass_rates=pl.col("pass_rate"),
    )
    inst = slots.select("slot_id", "slot_hash", "problem_id", "size", "pos").join(
        lists, on="slot_id", how="inner"
    )
    inst = inst.with_columns(
        generator=_single_or_mixed("candidate_generators"),
        language=_single_or_mixed("candidate_languages"),
    )
    if spec.cap_per_stratum is not None:
        before = inst.height
        inst = _cap_rank(inst, ["size", "language"], spec.cap_per_stratum)
        stats["dropped_stratum_cap"] = before - inst.height
    inst = _finish(inst, problems, spec)
    stats.update(_split_summary(inst))
    return inst, stats


def _single_or_mixed(column: str) -> pl.Expr:
    return (
        pl.when(pl.col(column).list.n_unique() == 1)
        .then(pl.col(column).list.first())
        .otherwise(pl.lit("mixed"))
    )


def _assign_sizes(
    slots: pl.DataFrame, spec: SplitSpec, config: AssembleConfig, stats: dict[str, Any]
) -> pl.DataFrame:
    per_max = dict(slots.group_by("max_size").len().iter_rows())
    plan = allocate_sizes(per_max, config.min_candidates, spec.size_targets)
    # Within each bucket of equal max size, slots in hash order take the sizes largest first.
    rows = []
    for m, alloc in plan.items():
        for size in sorted(alloc, reverse=True):
            rows += [(m, size)] * alloc[size]
    sizes = pl.DataFrame(rows, schema={"max_size": pl.UInt32, "size": pl.Int64}, orient="row")
    sizes = sizes.with_columns(k=pl.int_range(pl.len()).over("max_size"))
    ordered = slots.sort("slot_hash", "slot_id").with_columns(
        k=pl.int_range(pl.len()).over("max_size"), max_size=pl.col("max_size").cast(pl.UInt32)
    )
    out = ordered.join(sizes, on=["max_size", "k"], how="inner").drop("k")
    stats["dropped_size_targets"] = slots.height - out.height
    return out


def _finish(inst: pl.DataFrame, problems: pl.DataFrame, spec: SplitSpec) -> pl.DataFrame:
    info = problems.select(
        "problem_id",
        "source",
        query=pl.when(pl.col("prompt_statement").str.strip_chars() != "")
        .then(pl.col("prompt_statement"))
        .otherwise(pl.col("statement")),
    )
    inst = inst.join(info, on="problem_id", how="left").sort("slot_hash", "slot_id")
    instance_ids = [
        instance_id_for(p, ids, salt=spec.name)
        for p, ids in zip(
            inst.get_column("problem_id").to_list(),
            inst.get_column("candidate_ids").to_list(),
            strict=True,
        )
    ]
    return inst.with_columns(
        prompt_id=pl.col("problem_id"),  # Aletheia: the problem's id, shared by its instances
        instance_id=pl.Series(instance_ids, dtype=pl.String),
        num_candidates=pl.col("size").cast(pl.Int64),
        chosen_position=pl.col("pos").cast(pl.Int64),
        chosen_answer=pl.col("pos").replace_strict(
            list(range(len(ANSWER_LETTERS))), list(ANSWER_LETTERS)
        ),
        easy_hard=pl.lit(spec.band),
        weak_strong=pl.lit(spec.tier),
        modification=pl.lit(None, dtype=pl.String),
        adversarial=pl.col("candidate_ids").list.eval(pl.lit(None, dtype=pl.String)),
        split=pl.lit(spec.name),
    )


def _split_summary(inst: pl.DataFrame) -> dict[str, Any]:
    def hist(col: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in sorted(Counter(inst.get_column(col).to_list()).items())}

    return {
        "rows": inst.height,
        "problems": inst.get_column("problem_id").n_unique() if inst.height else 0,
        "by_size": hist("num_candidates"),
        "by_language": hist("language"),
        "by_position": hist("chosen_position"),
    }


def to_instance_table(inst: pl.DataFrame, build_id: str) -> pa.Table:
    """The frame as an Arrow table in INSTANCE_SCHEMA (column order and types)."""
    frame = inst.with_columns(build_id=pl.lit(build_id))
    table = frame.select(INSTANCE_SCHEMA.names).to_arrow()
    return table.cast(INSTANCE_SCHEMA) if table.num_rows else INSTANCE_SCHEMA.empty_table()


def assemble_frames(
    judged: pl.DataFrame,
    problems: pl.DataFrame,
    assignments: pl.DataFrame,
    config: AssembleConfig,
) -> tuple[dict[str, pa.Table], list[dict[str, Any]], dict[str, Any]]:
    """All configured splits from in-memory frames: tables by split name, quarantine rows, stats."""
    pool = prepare_pool(judged, problems, assignments, config)
    tables: dict[str, pa.Table] = {}
    stats: dict[str, Any] = {"input": pool.stats, "splits": {}}
    for spec in config.splits:
        inst, split_stats = build_split(pool.candidates, problems, spec, config)
        tables[spec.name] = to_instance_table(inst, config.build_id)
        stats["splits"][spec.name] = split_stats
    return tables, pool.quarantine, json.loads(json.dumps(stats))
