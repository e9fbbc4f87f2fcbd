"""Re-checks of invariants 2 and 3 (docs/architecture.md) on finished split outputs (the split tests call these).

Independent of how the split stage computed them: they read the written Parquet files.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.splits.decontam import build_index, find_contamination
from pipeline.splits.text import TokenHasher


class InvariantError(AssertionError):
    """An invariant does not hold; the message names the offending ids."""


def check_no_cluster_leak(split_dir: Path) -> None:
    """Invariant 2: no cluster (problem or near-duplicate) has members in two kept splits."""
    rows = pq.read_table(Path(split_dir) / "assignments.parquet").to_pylist()
    splits: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r["split"] != "dropped":
            splits[r["cluster_id"]].add(r["split"])
    leaks = sorted(c for c, s in splits.items() if len(s) > 1)
    if leaks:
        raise InvariantError(f"clusters in more than one split: {leaks[:10]} ({len(leaks)} in all)")
    ids = {p: r["split"] for r in rows for p in [r["problem_id"]]}
    for name in ("train", "heldout"):
        for pid in (
            pq.read_table(Path(split_dir) / f"{name}.parquet", columns=["problem_id"])
            .column(0)
            .to_pylist()
        ):
            if ids.get(pid) != name:
                raise InvariantError(f"{pid} is in {name}.parquet but assigned {ids.get(pid)!r}")


def check_decontaminated(train_parquet: Path, benchmarks: list[Path], ngram: int = 8) -> None:
    """Invariant 3: no Train statement shares a word n-gram with a benchmark statement."""
    hasher = TokenHasher()
    index = build_index([Path(b) for b in benchmarks], ngram, hasher)
    table = pq.read_table(train_parquet, columns=["problem_id", "statement"])
    for pid, text in zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True):
        hit = find_contamination(text, index, hasher)
        if hit is not None:
            raise InvariantError(f"{pid} shares '{hit.example}' with {hit.origin}")
