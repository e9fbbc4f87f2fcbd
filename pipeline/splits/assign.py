"""Cluster -> split, deterministic from (cluster id, seed)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence


def cluster_id_for(member_problem_ids: Sequence[str]) -> str:
    """A cluster is named after its smallest problem id: stable while that member stays."""
    return "k_" + hashlib.sha256(min(member_problem_ids).encode()).hexdigest()[:16]


def unit_draw(cluster_id: str, seed: int) -> float:
    """A uniform number in [0, 1) from (seed, cluster id): no global RNG, no order dependence."""
    digest = hashlib.sha256(f"{seed}\x00{cluster_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def eligible_for_heldout(dates: Sequence[dt.date | None], eval_after: dt.date | None) -> bool:
    """With a date cut, a cluster may be heldout only if every member is dated after it."""
    if eval_after is None:
        return True
    return all(d is not None and d > eval_after for d in dates)


def assign_cluster(
    cluster_id: str,
    dates: Sequence[dt.date | None],
    seed: int,
    heldout_fraction: float,
    eval_after: dt.date | None,
) -> tuple[str, str | None]:
    """('train' | 'heldout', why-not-heldout note or None)."""
    if not eligible_for_heldout(dates, eval_after):
        undated = any(d is None for d in dates)
        return "train", (
            "undated (treated as before eval_after)" if undated else "dated on/before eval_after"
        )
    return ("heldout", None) if unit_draw(cluster_id, seed) < heldout_fraction else ("train", None)
