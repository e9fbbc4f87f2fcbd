"""Shards by problem: any shard can be redone alone, and merging is a stable concat.

A problem always lands in the same shard (a hash of its id), so re-running one shard
touches no other, and adding problems moves none of the old ones between shards of
the same count. Used by the runner's shard plan and merge and by the flows' fan-outs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
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


def _read_all(paths: Sequence[Path], schema: pa.Schema) -> pa.Table:
    return pa.concat_tables([pq.read_table(p).select(schema.names).cast(schema) for p in paths])


def write_shards(
    inputs: Sequence[Path], shards: int, out_dir: Path, stem: str, schema: pa.Schema
) -> list[Path]:
    """Concatenate `inputs` and split the rows into `shards` files by problem_id."""
    table = _read_all(inputs, schema)
    which = pa.array([shard_of(p, shards) for p in table.column("problem_id").to_pylist()])
    return [
        _write_if_changed(
            table.filter(pc.equal(which, i)),
            out_dir / f"{stem}-{i:04d}-of-{shards:04d}.parquet",
            schema,
        )
        for i in range(shards)
    ]


def merge_shards(parts: Sequence[Path], out: Path, schema: pa.Schema) -> Path:
    """Concat shard outputs (in the order given), stably sorted by problem_id."""
    table = _read_all(parts, schema)
    return _write_if_changed(
        table.take(pc.sort_indices(table, [("problem_id", "ascending")])), out, schema
    )


def merge_quarantines(parts: Sequence[Path], out: Path) -> int:
    """Concat the parts' quarantines (each written only with rows), sorted by (source,
    source_row_id); none: `out` is removed, not left stale. Returns the number of rows."""
    found = [p for p in parts if p.exists()]
    if not found:
        out.unlink(missing_ok=True)
        return 0
    table = _read_all(found, QUARANTINE_SCHEMA)
    order = pc.sort_indices(table, [("source", "ascending"), ("source_row_id", "ascending")])
    _write_if_changed(table.take(order), out, QUARANTINE_SCHEMA)
    return table.num_rows
