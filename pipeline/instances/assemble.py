"""Judged candidates -> instances: one problem, 2-5 distinct candidates, exactly one AC.

Every random choice is seeded (hashes, or a per-group seeded generator), so the output is
a pure function of (inputs, config). `prepare_pool` checks and cleans the judged candidates
once for every split: contradictions quarantined; sandbox errors, programs without code,
excluded verdicts and flaky duplicates counted and left out; candidates over the token
cap marked. `build_split` then makes one split in named steps:

1. `_split_candidates`: the split's tier, problems and allowed origins (and, for Train's
   construction, candidates within the token cap), grouped by the grouping policy
   (Aletheia: problem + generator + language);
2. `_distinct_programs`: one candidate per normalised program per group; the incorrect ones
   in the split's band (easy: pass rate <= 0.5; hard: 0.7..0.9);
3. lists: Aletheia's selection (Train: `combos.aletheia_lists`, up to 3 combinations of
   distinct incorrect pass rates per list size; evaluation sets:
   `listwise.listwise_eval_lists`, combinations x code picks), or ours (`_balanced_lists`:
   one list per correct candidate, sizes balanced by water-filling);
4. `_drop_long_prompts`: rows whose verifier prompt is over the token cap;
5. `_keep_prompt_ids_with_enough_rows` (Train: Aletheia's more-than-6 rule) and
   `_take_size_targets` (Aletheia's 12,500 per size, one row per prompt_id first);
6. `_cap_strata` (optional) and `_finish`: ids, letters and labels, rows in seeded order.

An evaluation split is then also cut to its `test` split (`take_test_split`: up to 250 rows
per list size and language, as Aletheia); the whole split is its `full` split.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from pipeline.instances.combos import MEMBER_COLUMNS, aletheia_lists
from pipeline.instances.config import AssembleConfig, SplitSpec, test_table_name
from pipeline.instances.listwise import listwise_eval_lists
from pipeline.instances.normalize import with_dedup_key
from pipeline.instances.rng import hash_column, mix64, purpose_salt
from pipeline.instances.sizes import allocate_sizes
from pipeline.instances.tokens import TokenCounter, load_counter
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
    counter: TokenCounter | None = None,
) -> Pool:
    """Check and clean the judged candidates once for every split.

    Rows that contradict themselves go to quarantine with the field and reason; everything
    else that is left out is counted by reason in `stats["left_out"]`.
    """
    _require(judged, CANDIDATE_COLUMNS, "judged candidates")
    _require(problems, PROBLEM_COLUMNS, "problems")
    _require(assignments, ["problem_id", "split"], "split assignments")
    df = judged.select(CANDIDATE_COLUMNS)
    stats: dict[str, Any] = {"judged_rows": df.height}
    df, quarantine = _quarantine_contradictions(df, problems)
    stats["quarantined"] = len(quarantine)
    counts: dict[str, int] = {}
    df = _leave_out_unusable(df, config, counts)
    df = _with_problem_split(df, assignments, config, counts)
    df = _mark_long_candidates(df, counter, config, stats)
    df = _leave_out_flaky(df, counts)
    df = df.with_columns(
        cand_hash=hash_column(df.get_column("candidate_id"), f"{config.seed}:candidate")
    )
    stats["left_out"] = counts
    stats["eligible"] = df.height
    return Pool(candidates=df, quarantine=quarantine, stats=stats)


def _contradictions(problems: pl.DataFrame) -> list[tuple[str, pl.Expr, pl.Expr]]:
    """(field, is-bad, reason) for rows that contradict themselves or the problems table."""
    return [
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


def _quarantine_contradictions(
    df: pl.DataFrame, problems: pl.DataFrame
) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    quarantine: list[dict[str, Any]] = []
    for field_name, bad, reason in _contradictions(problems):
        flagged = df.filter(bad.fill_null(True))
        if flagged.height:
            quarantine += _quarantine_rows(flagged, field_name, reason)
            df = df.filter(~bad.fill_null(True))
    return df, quarantine


def _drop_counted(
    df: pl.DataFrame, bad: pl.Expr, reason: str, counts: dict[str, int]
) -> pl.DataFrame:
    counts[reason] = df.filter(bad).height
    return df.filter(~bad)


def _leave_out_unusable(
    df: pl.DataFrame, config: AssembleConfig, counts: dict[str, int]
) -> pl.DataFrame:
    """Sandbox errors, programs without code and verdicts the config excludes."""
    df = _drop_counted(df, pl.col("verdict") == "SE", "sandbox_error", counts)
    no_code = ~pl.col("extraction").is_in(_USABLE_EXTRACTION) | (
        pl.col("code").str.strip_chars() == ""
    )
    df = _drop_counted(df, no_code, "no_code", counts)
    return _drop_counted(
        df, pl.col("verdict").is_in(config.exclude_verdicts), "excluded_verdict", counts
    )


def _with_problem_split(
    df: pl.DataFrame, assignments: pl.DataFrame, config: AssembleConfig, counts: dict[str, int]
) -> pl.DataFrame:
    """Each candidate's problem split; candidates no configured split draws from go."""
    split_of = assignments.select("problem_id", pl.col("split").alias("problem_split")).unique()
    twice = split_of.filter(pl.col("problem_id").is_duplicated())
    if twice.height:  # invariant 2 would be at the mercy of row order
        pid = twice.get_column("problem_id").sort().item(0)
        raise AssemblyInputError(
            f"split assignments: problem_id {pid} is assigned to more than one split"
        )
    df = df.join(split_of, on="problem_id", how="left")
    outside = ~pl.col("problem_split").is_in(["train", "heldout"]).fill_null(False)
    df = _drop_counted(df, outside, "problem_not_in_train_or_heldout", counts)
    # Pools no configured split draws from (e.g. strong candidates on Train problems) are
    # not normalised (or tokenised) for nothing.
    pools = {f"{s.tier}/{s.problems}" for s in config.splits}
    if config.eval_problems == "not_in_train":  # eval splits may draw on any problem
        pools |= {f"{s.tier}/train" for s in config.splits if s.problems == "heldout"}
    wanted = pl.concat_str("tier", "problem_split", separator="/").is_in(sorted(pools))
    return _drop_counted(df, ~wanted, "pool_not_used_by_any_split", counts)


def _mark_long_candidates(
    df: pl.DataFrame, counter: TokenCounter | None, config: AssembleConfig, stats: dict[str, Any]
) -> pl.DataFrame:
    """Aletheia's candidate cap: programs longer than `max_candidate_tokens` are marked
    (`over_token_cap`); the splits that apply the cap (Train's construction) leave them out
    before any list is made, correct ones too; the listwise evaluation sets keep them."""
    if counter is None or config.max_candidate_tokens is None or df.height == 0:
        return df.with_columns(over_token_cap=pl.lit(False))
    n_tokens = pl.Series(counter.count_texts(df.get_column("code").to_list()), dtype=pl.Int64)
    too_long = n_tokens > config.max_candidate_tokens
    stats["candidates_over_token_cap"] = int(too_long.sum())
    return df.with_columns(over_token_cap=too_long)


def _leave_out_flaky(df: pl.DataFrame, counts: dict[str, int]) -> pl.DataFrame:
    """The same program (up to comments and whitespace) judged AC once and not AC another
    time is flaky: it is kept out altogether rather than trusted either way."""
    df = with_dedup_key(df).with_columns(is_correct=pl.col("verdict") == "AC")
    flaky = pl.col("is_correct").n_unique().over("problem_id", "dedup_key") > 1
    return _drop_counted(df, flaky, "flaky_duplicates", counts)


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
    pool: pl.DataFrame,
    problems: pl.DataFrame,
    spec: SplitSpec,
    config: AssembleConfig,
    counter: TokenCounter | None = None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Instances of one split (INSTANCE_SCHEMA columns, as a polars frame) and its stats."""
    stats: dict[str, Any] = {"tier": spec.tier, "band": spec.band, "problem_split": spec.problems}
    cands = _split_candidates(pool, spec, config, stats)
    correct, incorrect = _distinct_programs(cands, spec, config, stats)
    if config.selection == "aletheia":
        make_lists = listwise_eval_lists if spec.construction == "listwise_eval" else aletheia_lists
        inst = make_lists(correct, incorrect, spec, config)
        stats["construction"] = spec.construction
        stats["lists_made"] = inst.height
        inst = _cap_per_problem(inst, spec, stats)
    else:
        inst = _balanced_lists(correct, incorrect, spec, config, stats)
    inst = _as_instance_lists(inst, problems, config.statement_cut)
    if spec.list_sizes is not None:
        inst = inst.filter(pl.col("size").is_in(spec.list_sizes))
    inst = _drop_long_prompts(inst, counter, config, stats)
    inst = _keep_prompt_ids_with_enough_rows(inst, spec, stats)
    if config.selection == "aletheia":
        inst = _take_size_targets(inst, spec, stats)
    inst = _cap_strata(inst, spec, stats)
    inst = _finish(inst, spec)
    stats.update(_split_summary(inst))
    return inst, stats


def _split_candidates(
    pool: pl.DataFrame, spec: SplitSpec, config: AssembleConfig, stats: dict[str, Any]
) -> pl.DataFrame:
    """The split's tier, problems and allowed origins, with each candidate's group key;
    candidates over the token cap left out where the split applies it."""
    cands = pool.filter((pl.col("tier") == spec.tier) & (pl.col("problem_split") == spec.problems))
    if spec.apply_candidate_cap:
        stats["candidate_too_long"] = cands.filter(pl.col("over_token_cap")).height
        cands = cands.filter(~pl.col("over_token_cap"))
    if spec.origins is not None:
        stats["origin_not_allowed"] = cands.filter(~pl.col("origin").is_in(spec.origins)).height
        cands = cands.filter(pl.col("origin").is_in(spec.origins))
    stats["pool"] = cands.height
    return cands.with_columns(_group_key(config.grouping))


def _distinct_programs(
    cands: pl.DataFrame, spec: SplitSpec, config: AssembleConfig, stats: dict[str, Any]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One candidate per normalised program per group (by seeded hash): the correct ones, and
    the incorrect ones in the split's band."""
    cands = cands.sort("cand_hash", "candidate_id").unique(
        ["gkey", "dedup_key"], keep="first", maintain_order=True
    )
    stats["after_dedup"] = cands.height
    correct = cands.filter(pl.col("is_correct"))
    incorrect = cands.filter(~pl.col("is_correct") & _band_filter(spec, config))
    return correct, incorrect


def _balanced_lists(
    correct: pl.DataFrame,
    incorrect: pl.DataFrame,
    spec: SplitSpec,
    config: AssembleConfig,
    stats: dict[str, Any],
) -> pl.DataFrame:
    """Our selection: instance j of a group uses the group's j-th correct candidate; sizes are
    balanced over the split by water-filling; the correct one at a uniform position."""
    if config.one_incorrect_per_pass_rate:
        incorrect = (
            incorrect.with_columns(_pr=pl.col("pass_rate").round(9))
            .unique(["gkey", "_pr"], keep="first", maintain_order=True)
            .drop("_pr")
        )
    correct = correct.with_columns(j=pl.int_range(pl.len()).over("gkey"))
    slots = _balanced_slots(correct, incorrect, spec, config, stats)
    slots = _assign_sizes(slots, spec, config, stats)
    slots = _draw_positions(slots, spec, config)
    return _fill_slots(slots, correct, incorrect)


def _balanced_slots(
    correct: pl.DataFrame,
    incorrect: pl.DataFrame,
    spec: SplitSpec,
    config: AssembleConfig,
    stats: dict[str, Any],
) -> pl.DataFrame:
    """Up to `max_instances_per_group` slots per usable group, capped per problem."""
    salt = f"{config.seed}:{spec.name}"
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
    slots = groups.with_columns(
        j=pl.int_ranges(pl.min_horizontal("n_correct", pl.lit(spec.max_instances_per_group)))
    ).explode("j")
    slots = slots.with_columns(
        slot_id=pl.concat_str("gkey", pl.col("j").cast(pl.String), separator="\x1e")
    )
    slots = slots.with_columns(slot_hash=hash_column(slots.get_column("slot_id"), salt + ":slot"))
    return _cap_per_problem(slots, spec, stats)


def _cap_per_problem(frame: pl.DataFrame, spec: SplitSpec, stats: dict[str, Any]) -> pl.DataFrame:
    if spec.max_instances_per_problem is None:
        return frame
    before = frame.height
    frame = _cap_rank(frame, ["problem_id"], spec.max_instances_per_problem)
    stats["dropped_problem_cap"] = before - frame.height
    return frame


def _draw_positions(slots: pl.DataFrame, spec: SplitSpec, config: AssembleConfig) -> pl.DataFrame:
    """The correct candidate's position in each slot, uniform over the slot's size."""
    if not slots.height:
        return slots.with_columns(pos=pl.lit(0, dtype=pl.Int64))
    with_pos = mix64(
        slots.get_column("slot_hash").to_numpy(), purpose_salt(config.seed, spec.name, "position")
    )
    sizes = slots.get_column("size").cast(pl.UInt64).to_numpy()
    return slots.with_columns(pos=pl.Series((with_pos % sizes).astype("int64")))


def _fill_slots(
    slots: pl.DataFrame, correct: pl.DataFrame, incorrect: pl.DataFrame
) -> pl.DataFrame:
    """Each slot's members: its correct candidate at `pos`, the incorrect ones drawn by
    seeded hash around it; one row per slot with the members' columns as lists."""
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
    cols = ["slot_id", "position", *MEMBER_COLUMNS]
    members = pl.concat([chosen_correct.select(cols), drawn.select(cols)]).sort(
        "slot_id", "position"
    )
    lists = members.group_by("slot_id", maintain_order=True).agg(
        [pl.col(c) for c in MEMBER_COLUMNS]
    )
    return slots.select("slot_id", "slot_hash", "problem_id", "size", "pos").join(
        lists, on="slot_id", how="inner"
    )


def aletheia_statement_cut(statement: str) -> str:
    """Aletheia's query: the statement up to its first `\\nExample\\n` or `\\nExamples\\n`
    line, stripped (`cerebrm_datagen.py`, `listwise_eval_sets.py`:
    `description.split("\\nExample\\n")[0].split("\\nExamples\\n")[0].strip()`)."""
    return statement.split("\nExample\n")[0].split("\nExamples\n")[0].strip()


def _query(statement_cut: str) -> pl.Expr:
    """The `query` column: the ingested `prompt_statement` (its sample sections cut by
    heading; the full statement when that is empty), or Aletheia's cut of the statement."""
    if statement_cut == "aletheia":
        return pl.col("statement").map_elements(aletheia_statement_cut, return_dtype=pl.String)
    return (
        pl.when(pl.col("prompt_statement").str.strip_chars() != "")
        .then(pl.col("prompt_statement"))
        .otherwise(pl.col("statement"))
    )


def _as_instance_lists(
    inst: pl.DataFrame, problems: pl.DataFrame, statement_cut: str = "headings"
) -> pl.DataFrame:
    """Members' lists under the instance column names, the group labels, query and source."""
    inst = inst.rename(
        {
            "code": "candidates",
            "candidate_id": "candidate_ids",
            "origin": "candidate_origins",
            "generator": "candidate_generators",
            "language": "candidate_languages",
            "verdict": "verdicts",
            "pass_rate": "pass_rates",
        }
    ).with_columns(
        generator=_single_or_mixed("candidate_generators"),
        language=_single_or_mixed("candidate_languages"),
    )
    info = problems.select("problem_id", "source", query=_query(statement_cut))
    return inst.join(info, on="problem_id", how="left")


def _drop_long_prompts(
    inst: pl.DataFrame, counter: TokenCounter | None, config: AssembleConfig, stats: dict[str, Any]
) -> pl.DataFrame:
    """Aletheia's prompt cap: rows whose verifier prompt exceeds `max_prompt_tokens`."""
    if counter is None or config.max_prompt_tokens is None or inst.height == 0:
        return inst
    n_tokens = counter.prompt_tokens_many(
        inst.select("query", "candidates", "candidate_languages").iter_rows(),
        config.prompt_template,
        config.system_template,
        aletheia_src=config.aletheia_src,
    )
    too_long = pl.Series(n_tokens, dtype=pl.Int64) > config.max_prompt_tokens
    stats["dropped_prompt_too_long"] = int(too_long.sum())
    return inst.filter(~too_long)


def _keep_prompt_ids_with_enough_rows(
    inst: pl.DataFrame, spec: SplitSpec, stats: dict[str, Any]
) -> pl.DataFrame:
    """Aletheia's Train rule: a prompt_id (problem) enters only with at least
    `min_rows_per_prompt_id` rows of that list size (Aletheia: more than 6)."""
    if spec.min_rows_per_prompt_id <= 1:
        return inst
    enough = pl.len().over("problem_id", "size") >= spec.min_rows_per_prompt_id
    stats["dropped_few_rows_per_prompt_id"] = inst.filter(~enough).height
    return inst.filter(enough)


def _take_size_targets(inst: pl.DataFrame, spec: SplitSpec, stats: dict[str, Any]) -> pl.DataFrame:
    """Aletheia's downsampling: per list size, one row of each prompt_id first (in seeded
    order), then further rows of those prompt_ids, up to the size's target; sizes without a
    target are left out. A shortfall is reported, not padded with duplicates."""
    if spec.size_targets is None:
        return inst
    ranked = inst.sort("slot_hash", "slot_id").with_columns(
        _again=pl.int_range(pl.len()).over("problem_id", "size") > 0
    )
    ranked = ranked.sort("_again", "slot_hash", "slot_id").with_columns(
        _k=pl.int_range(pl.len()).over("size")
    )
    targets = pl.DataFrame(
        {"size": list(spec.size_targets), "_target": list(spec.size_targets.values())},
        schema={"size": pl.Int64, "_target": pl.Int64},
    )
    out = ranked.join(targets, on="size", how="inner").filter(pl.col("_k") < pl.col("_target"))
    have = dict(out.group_by("size").len().iter_rows())
    stats["size_target_shortfall"] = {
        str(n): t - have.get(n, 0)
        for n, t in sorted(spec.size_targets.items())
        if have.get(n, 0) < t
    }
    return out.drop("_again", "_k", "_target")


def _cap_strata(inst: pl.DataFrame, spec: SplitSpec, stats: dict[str, Any]) -> pl.DataFrame:
    if spec.cap_per_stratum is None:
        return inst
    before = inst.height
    inst = _cap_rank(inst, ["size", "language"], spec.cap_per_stratum)
    stats["dropped_stratum_cap"] = before - inst.height
    return inst


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


def _finish(inst: pl.DataFrame, spec: SplitSpec) -> pl.DataFrame:
    inst = inst.sort("slot_hash", "slot_id")
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
        source_instance_id=pl.lit(None, dtype=pl.String),
        adversarial=pl.col("candidate_ids").list.eval(pl.lit(None, dtype=pl.String)),
        split=pl.lit(spec.name),
    )


def take_test_split(
    inst: pl.DataFrame, spec: SplitSpec, config: AssembleConfig
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The split's `test` split (Aletheia's `subsample_equal`): at most
    `test_rows_per_stratum` rows per (num_candidates, language), a seeded uniform sample
    without replacement of the finished (`full`) split, in the full split's row order, so
    a test row is the same row (same instance_id) as in `full`."""
    assert spec.test_rows_per_stratum is not None
    if inst.height == 0:
        return inst, {"rows": 0, "rows_per_stratum": spec.test_rows_per_stratum}
    draw = hash_column(inst.get_column("slot_id"), f"{config.seed}:{spec.name}:test")
    test = (
        inst.with_columns(_draw=draw)
        .sort("_draw", "slot_id")
        .with_columns(_r=pl.int_range(pl.len()).over("num_candidates", "language"))
        .filter(pl.col("_r") < spec.test_rows_per_stratum)
        .sort("slot_hash", "slot_id")
        .drop("_draw", "_r")
    )
    stats = {"rows_per_stratum": spec.test_rows_per_stratum, **_split_summary(test)}
    return test, stats


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


def _token_counter(config: AssembleConfig) -> tuple[TokenCounter | None, str | None]:
    if config.max_candidate_tokens is None and config.max_prompt_tokens is None:
        return None, "no token caps configured"
    return load_counter(config.tokenizer, required=config.require_tokenizer)


def assemble_frames(
    judged: pl.DataFrame,
    problems: pl.DataFrame,
    assignments: pl.DataFrame,
    config: AssembleConfig,
) -> tuple[dict[str, pa.Table], list[dict[str, Any]], dict[str, Any]]:
    """All configured splits from in-memory frames: tables by split name (an evaluation
    split's `test` split as `<name>.test` beside it), quarantine rows, stats."""
    counter, why = _token_counter(config)
    pool = prepare_pool(judged, problems, assignments, config, counter)
    tables: dict[str, pa.Table] = {}
    stats: dict[str, Any] = {"input": pool.stats, "splits": {}}
    stats["token_caps"] = {"tokenizer": config.tokenizer, "applied": counter is not None}
    if why is not None:
        stats["token_caps"]["reason"] = why
    built: dict[str, tuple[dict[str, pa.Table], dict[str, Any]]] = {}
    # Aletheia's rule (eval_problems: not_in_train) needs Train before the evaluation splits
    train_side = [s for s in config.splits if s.problems == "train"]
    eval_pool = pool.candidates
    for spec in [*train_side, *(s for s in config.splits if s.problems != "train")]:
        aletheia_rule = config.eval_problems == "not_in_train"
        if spec.problems == "heldout" and aletheia_rule and "eval_problems" not in stats:
            train_tables = [built[s.name][0][s.name] for s in train_side]
            eval_pool, stats["eval_problems"] = _not_in_train_pool(
                pool.candidates, assignments, train_tables
            )
        candidates = eval_pool if spec.problems == "heldout" else pool.candidates
        inst, split_stats = build_split(candidates, problems, spec, config, counter)
        out = {spec.name: to_instance_table(inst, config.build_id)}
        if spec.has_test_split:  # published as the split's `test`; the table above is `full`
            test, split_stats["test"] = take_test_split(inst, spec, config)
            out[test_table_name(spec.name)] = to_instance_table(test, config.build_id)
        built[spec.name] = (out, split_stats)
    for spec in config.splits:  # the configured order
        tables |= built[spec.name][0]
        stats["splits"][spec.name] = built[spec.name][1]
    return tables, pool.quarantine, json.loads(json.dumps(stats))


def problems_not_in_train(assignments: pl.DataFrame, train_tables: list[pa.Table]) -> set[str]:
    """Aletheia's evaluation pool (`splits.heldout_rule: not_in_train`): every assigned
    problem whose near-duplicate cluster holds no problem with a row in `train_tables`, so
    neither a Train problem nor a near-duplicate of one is in it."""
    if "cluster_id" not in assignments.columns:
        raise AssemblyInputError(
            "split assignments: eval_problems not_in_train needs their cluster_id column "
            "(the split stage's assignments.parquet), to keep Train's near-duplicates out"
        )
    pairs = assignments.select("problem_id", "cluster_id").unique()
    cluster_of = dict(
        zip(pairs["problem_id"].to_list(), pairs["cluster_id"].to_list(), strict=True)
    )
    in_train = {pid for t in train_tables for pid in t.column("problem_id").to_pylist()}
    train_clusters = {cluster_of[p] for p in in_train if p in cluster_of}
    return {p for p, c in cluster_of.items() if c not in train_clusters}


def _not_in_train_pool(
    candidates: pl.DataFrame, assignments: pl.DataFrame, train_tables: list[pa.Table]
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The candidates of the problems not in Train (`problems_not_in_train`), as `heldout`
    problems, and what the rule kept and left out."""
    keep = problems_not_in_train(assignments, train_tables)
    pool = candidates.filter(pl.col("problem_id").is_in(sorted(keep))).with_columns(
        problem_split=pl.lit("heldout")
    )
    offered = set(candidates.get_column("problem_id").to_list())
    train = {pid for t in train_tables for pid in t.column("problem_id").to_pylist()}
    return pool, {
        "rule": "not_in_train",
        "train_problems": len(train),
        "eval_problems_offered": len(offered & keep),
        "left_out_as_train_or_near_duplicate": len(offered - keep),
    }
