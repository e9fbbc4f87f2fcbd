"""Aletheia's Train list selection (src/cerebrm_datagen.py, `main`), in our code.

Within one group (problem + generator + language by default), incorrect candidates are
bucketed by their pass rate. With k distinct rates, a list of n candidates needs
n - 1 + `spare_incorrect_rates` of them (Aletheia's loop gives spare = 1: a pair needs two
distinct rates). For every allowed size n, up to `max_combos_per_size` different sets of
n - 1 rates are drawn uniformly; each set becomes one list: a correct candidate drawn from the
group's correct ones, one candidate drawn from each chosen rate's bucket, and the correct
one put at a uniformly drawn position. Every draw is seeded by (seed, split, group), so the
output is a pure function of the inputs and the config. The evaluation sets' construction
(src/listwise_eval_sets.py) is `pipeline/instances/listwise.py`; both share the helpers
here that group the members and build the frame.
"""

from __future__ import annotations

import random
from itertools import combinations
from math import comb
from typing import Any

import polars as pl

from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.rng import hash_column

# Above this many combinations they are drawn by rejection instead of listed (same law).
_ENUMERATE_MAX = 5_000
MEMBER_COLUMNS = ["candidate_id", "code", "origin", "generator", "language", "verdict", "pass_rate"]


def draw_rate_sets(rates: list[float], m: int, k: int, rng: random.Random) -> list[tuple]:
    """Up to `k` distinct sets of `m` rates out of `rates`, uniformly without replacement."""
    total = comb(len(rates), m)
    if total <= _ENUMERATE_MAX:
        return rng.sample(list(combinations(rates, m)), min(k, total))
    seen: list[tuple] = []
    while len(seen) < k:
        pick = tuple(sorted(rng.sample(rates, m)))
        if pick not in seen:
            seen.append(pick)
    return seen


def list_sizes(n_rates: int, spec: SplitSpec, config: AssembleConfig) -> list[int]:
    """The list sizes a group with `n_rates` distinct incorrect pass rates yields."""
    largest = min(n_rates + 1 - config.spare_incorrect_rates, config.max_candidates)
    sizes = range(config.min_candidates, largest + 1)
    return [n for n in sizes if spec.list_sizes is None or n in spec.list_sizes]


def _group_lists(
    gkey: str,
    correct: list[dict[str, Any]],
    buckets: dict[float, list[dict[str, Any]]],
    spec: SplitSpec,
    config: AssembleConfig,
) -> list[dict[str, Any]]:
    rng = random.Random(f"{config.seed}:{spec.name}:{gkey}")
    rates = sorted(buckets)
    out = []
    for n in list_sizes(len(rates), spec, config):
        for i, chosen_rates in enumerate(
            draw_rate_sets(rates, n - 1, config.max_combos_per_size, rng)
        ):
            wrong = [rng.choice(buckets[r]) for r in chosen_rates]
            rng.shuffle(wrong)
            pos = rng.randrange(n)
            members = wrong[:pos] + [rng.choice(correct)] + wrong[pos:]
            out.append(list_row(f"{gkey}\x1e{n}:{i}", members, pos))
    return out


def grouped_members(
    correct: pl.DataFrame, incorrect: pl.DataFrame
) -> list[tuple[str, list[dict[str, Any]], dict[float, list[dict[str, Any]]]]]:
    """(gkey, correct programs, incorrect programs by pass rate) for every group that has
    both, in gkey order; members in candidate_id order."""
    cols = ["gkey", "problem_id", *MEMBER_COLUMNS]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for r in correct.sort("gkey", "candidate_id").select(cols).iter_rows(named=True):
        by_group.setdefault(r["gkey"], []).append(r)
    buckets: dict[str, dict[float, list[dict[str, Any]]]] = {}
    for r in incorrect.sort("gkey", "candidate_id").select(cols).iter_rows(named=True):
        buckets.setdefault(r["gkey"], {}).setdefault(round(r["pass_rate"], 9), []).append(r)
    return [(g, by_group[g], buckets[g]) for g in sorted(by_group.keys() & buckets.keys())]


def list_row(slot_id: str, members: list[dict[str, Any]], pos: int) -> dict[str, Any]:
    """One list as a row: its slot id, problem, size, the correct one's position and the
    members' columns as lists (in list order)."""
    row: dict[str, Any] = {
        "slot_id": slot_id,
        "problem_id": members[pos]["problem_id"],
        "size": len(members),
        "pos": pos,
    }
    for col in MEMBER_COLUMNS:
        row[col] = [m[col] for m in members]
    return row


def lists_frame(
    rows: list[dict[str, Any]], correct: pl.DataFrame, spec: SplitSpec, config: AssembleConfig
) -> pl.DataFrame:
    """List rows as a frame, with each slot's seeded hash (the split's row order)."""
    schema = {
        "slot_id": pl.String,
        "problem_id": pl.String,
        "size": pl.Int64,
        "pos": pl.Int64,
        **{c: pl.List(correct.schema[c]) for c in MEMBER_COLUMNS},
    }
    frame = pl.DataFrame(rows, schema=schema)
    return frame.with_columns(
        slot_hash=hash_column(frame.get_column("slot_id"), f"{config.seed}:{spec.name}:slot")
    )


def aletheia_lists(
    correct: pl.DataFrame, incorrect: pl.DataFrame, spec: SplitSpec, config: AssembleConfig
) -> pl.DataFrame:
    """All lists of one split, one row each: slot_id, slot_hash, problem_id, size, pos and
    the members' columns as lists (in list order). `correct` and `incorrect` hold one row per
    distinct program of each group (`gkey`), the incorrect ones already in the split's band."""
    rows: list[dict[str, Any]] = []
    for gkey, group_correct, group_buckets in grouped_members(correct, incorrect):
        rows += _group_lists(gkey, group_correct, group_buckets, spec, config)
    return lists_frame(rows, correct, spec, config)
