"""Shards by problem: any shard can be redone alone, and merging is a stable concat.

A problem always lands in the same shard (a hash of its id), so re-running one shard
touches no other, and adding problems moves none of the old ones between shards of
the same count.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.common.parquet import write_parquet
from schemas.common import QUARANTINE_SCHEMA


def shard_of(problem_id: str, shards: int) -> int:
    return int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) % shards


def _write_if_changed(table: pa.Table, path: Path, schema: pa.Schema) -> Path:
    """Leave an identical existing file untouched (its mtime too), else write atomically."""
    if path.exists():
        try:
            if pq.read_table(path).cast(schema).equals(table.cast(schema)):
                return path
        except (pa.ArrowInvalid, OSError):
            pass
    return write_parquet(table, path, schema)


def write_shards(
    inputs: list[Path], shards: int, out_dir: Path, stem: str, schema: pa.Schema
) -> list[Path]:
    """Concatenate `inputs` and split the rows into `shards` files by problem_id."""
    table = pa.concat_tables([pq.read_table(p).select(schema.names).cast(schema) for p in inputs])
    ids = table.column("problem_id").to_pylist()
    which = pa.array([shard_of(pid, shards) for pid in ids], pa.int32())
    paths = []
    for i in range(shards):
        part = table.filter(pc.equal(which, i))
        paths.append(
            _write_if_changed(part, out_dir / f"{stem}-{i:04d}-of-{shards:04d}.parquet", schema)
        )
    return paths


def merge_shards(parts: list[Path], out: Path, schema: pa.Schema) -> Path:
    """Concat shard outputs, stably sorted by problem_id (same bytes whatever the shard count)."""
    table = pa.concat_tables([pq.read_table(p).select(schema.names).cast(schema) for p in parts])
    order = pc.sort_indices(table, [("problem_id", "ascending")])
    return _write_if_changed(table.take(order), out, schema)


def merge_quarantines(parts: list[Path], out: Path) -> int:
    """Concat the shards' quarantine files (each written only when it has rows) into `out`,
    sorted by (source, source_row_id); no rows: `out` is removed, not left stale. Returns
    the number of rows."""
    found = [p for p in parts if p.exists()]
    if not found:
        out.unlink(missing_ok=True)
        return 0
    table = pa.concat_tables(
        [pq.read_table(p).select(QUARANTINE_SCHEMA.names).cast(QUARANTINE_SCHEMA) for p in found]
    )
    order = pc.sort_indices(table, [("source", "ascending"), ("source_row_id", "ascending")])
    _write_if_changed(table.take(order), out, QUARANTINE_SCHEMA)
    return table.num_rows
