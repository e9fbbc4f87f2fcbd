"""Aletheia's listwise evaluation sets (src/listwise_eval_sets.py, commit 1431408), in our code.

Within one group (problem + generator + language by default) with at least one correct
program, the incorrect programs of the split's band are bucketed by pass rate; with k
distinct rates (ascending), the group yields lists of n = 2..min(k, 5) candidates (with
`spare_incorrect_rates: 1`, Aletheia's loop `range(1, min(k, 5))`). For each size n:

1. the combinations of n - 1 rates, in `itertools.combinations` order: every one
   (`combos_per_size: all`, Hard) or up to `combos_per_size` drawn without replacement
   (Heldout 5, Strong 3);
2. for each combination, the code picks: the product of the buckets [correct programs,
   then one bucket per rate of the combination], in `itertools.product` order, of which up
   to `picks_per_combo` are drawn without replacement (Heldout 3, Strong 1, Hard 10);
3. each pick, in the order [correct, the rates' programs], is shuffled: the correct one's
   position is where the shuffle put it.

The draws follow Aletheia's sequence (sample of combinations, then per combination a
sample of products, then one shuffle per list) from one `random.Random` seeded by (seed,
split, group), so the output is a pure function of the inputs and the config. Aletheia's
global RNG is unseeded; its draws cannot be reproduced, only their law and order. A
combination or a product is drawn by its index and decoded, never listed, so a group with
many rates or programs costs what it yields.
"""

from __future__ import annotations

import random
from math import comb, prod
from typing import Any

import polars as pl

from pipeline.instances.combos import grouped_members, list_row, list_sizes, lists_frame
from pipeline.instances.config import AssembleConfig, SplitSpec


def nth_combination(items: list[Any], r: int, index: int) -> tuple[Any, ...]:
    """The `index`-th r-combination of `items` in `itertools.combinations` order."""
    n = len(items)
    out = []
    start = 0
    for left in range(r, 0, -1):
        # skip the blocks of combinations whose next element comes before items[i]
        i = start
        while True:
            block = comb(n - i - 1, left - 1)
            if index < block:
                break
            index -= block
            i += 1
        out.append(items[i])
        start = i + 1
    return tuple(out)


def nth_product(buckets: list[list[Any]], index: int) -> tuple[Any, ...]:
    """The `index`-th tuple of `itertools.product(*buckets)` (the last bucket varies fastest)."""
    picks = []
    for bucket in reversed(buckets):
        index, i = divmod(index, len(bucket))
        picks.append(bucket[i])
    return tuple(reversed(picks))


def group_lists(
    gkey: str,
    correct: list[dict[str, Any]],
    buckets: dict[float, list[dict[str, Any]]],
    spec: SplitSpec,
    config: AssembleConfig,
) -> list[dict[str, Any]]:
    """One group's lists, in Aletheia's order (size, combination, pick)."""
    rng = random.Random(f"{config.seed}:{spec.name}:{gkey}")
    rates = sorted(buckets)
    out = []
    for n in list_sizes(len(rates), spec, config):
        total_combos = comb(len(rates), n - 1)
        if spec.combos_per_size == "all":
            combo_ids: list[int] = list(range(total_combos))
        else:
            assert isinstance(spec.combos_per_size, int)
            combo_ids = rng.sample(range(total_combos), min(spec.combos_per_size, total_combos))
        for ci, combo_index in enumerate(combo_ids):
            combo = nth_combination(rates, n - 1, combo_index)
            code_buckets = [correct] + [buckets[r] for r in combo]
            total_picks = prod(len(b) for b in code_buckets)
            assert spec.picks_per_combo is not None
            pick_ids = rng.sample(range(total_picks), min(spec.picks_per_combo, total_picks))
            for pi, pick_index in enumerate(pick_ids):
                members = list(nth_product(code_buckets, pick_index))
                order = list(range(n))  # 0 = the correct program
                rng.shuffle(order)
                members = [members[k] for k in order]
                out.append(list_row(f"{gkey}\x1e{n}:{ci}:{pi}", members, order.index(0)))
    return out


def listwise_eval_lists(
    correct: pl.DataFrame, incorrect: pl.DataFrame, spec: SplitSpec, config: AssembleConfig
) -> pl.DataFrame:
    """All lists of one evaluation split, one row each (the frame `aletheia_lists` returns).
    `correct` and `incorrect` hold one row per distinct program of each group (`gkey`), the
    incorrect ones already in the split's band."""
    rows: list[dict[str, Any]] = []
    for gkey, group_correct, group_buckets in grouped_members(correct, incorrect):
        rows += group_lists(gkey, group_correct, group_buckets, spec, config)
    return lists_frame(rows, correct, spec, config)
