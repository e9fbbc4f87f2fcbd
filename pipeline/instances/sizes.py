"""List-size balancing: how many instances of each size (2..5) to cut from the groups.

A group with I usable incorrect candidates can make an instance of any size 2..1+I (up
to 5). Groups are taken most-constrained first and each is given the size that is
furthest behind, which is water-filling: computed per bucket of equal maximum size, not
per instance, so it costs nothing at millions of groups.
"""

from __future__ import annotations

from collections.abc import Mapping


def water_fill(levels: Mapping[int, int], n: int, ceiling: int | None) -> dict[int, int]:
    """Add up to `n` units to the lowest `levels` (ties: larger size first), none above `ceiling`.

    Returns units added per size; their sum is < n only when every level reached the ceiling.
    """
    level = dict(levels)
    added = {s: 0 for s in level}
    while n > 0:
        low = min(level.values())
        if ceiling is not None and low >= ceiling:
            break
        at_low = sorted((s for s, v in level.items() if v == low), reverse=True)
        higher = [v for v in level.values() if v > low]
        step_to = min(higher) if higher else None
        if ceiling is not None:
            step_to = ceiling if step_to is None else min(step_to, ceiling)
        if step_to is not None and len(at_low) * (step_to - low) <= n:
            for s in at_low:
                added[s] += step_to - low
                level[s] = step_to
            n -= len(at_low) * (step_to - low)
            continue
        each, extra = divmod(n, len(at_low))
        for i, s in enumerate(at_low):
            bump = each + (1 if i < extra else 0)
            added[s] += bump
            level[s] += bump
        n = 0
    return added


def allocate_sizes(
    slots_per_max_size: Mapping[int, int],
    min_size: int,
    targets: Mapping[int, int] | None,
) -> dict[int, dict[int, int]]:
    """For each maximum size m (with that many slots), how many slots get each size 2..m.

    With `targets`, no size goes past its target (slots left over are dropped); without,
    sizes are balanced as far as the groups allow and every slot is used.
    """
    sizes = range(min_size, max(slots_per_max_size, default=min_size) + 1)
    taken = {s: 0 for s in sizes}
    plan: dict[int, dict[int, int]] = {}
    for m in sorted(slots_per_max_size):
        feasible = [s for s in sizes if s <= m]
        if targets is None:
            add = water_fill({s: taken[s] for s in feasible}, slots_per_max_size[m], None)
        else:
            wanted = [s for s in feasible if targets.get(s, 0) > 0]
            # level = how far past its target a size is (<= 0 while it still wants rows)
            add = water_fill({s: taken[s] - targets[s] for s in wanted}, slots_per_max_size[m], 0)
        for s, k in add.items():
            taken[s] += k
        plan[m] = add
    return plan
