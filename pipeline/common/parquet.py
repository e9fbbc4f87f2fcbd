"""Deterministic, atomic Parquet I/O through explicit schemas.

Same table in, same bytes out (invariant 5): fixed compression, fixed row-group
size, no wall-clock metadata. Writes go to a temporary file first and are renamed
into place, so a crash never leaves a half-written file that looks finished.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.common.perms import as_if_created
from schemas.tables import validate_table

ROW_GROUP_SIZE = 50_000


def write_parquet(table: pa.Table, path: str | Path, schema: pa.Schema | None = None) -> Path:
    """Validate `table` against `schema` (when given) and write it atomically to `path`."""
    path = Path(path)
    if schema is not None:
        table = validate_table(table, schema, name=path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            row_group_size=ROW_GROUP_SIZE,
            write_statistics=True,
            store_schema=True,
        )
        as_if_created(tmp)  # mkstemp made it 0600; readers under other uids need the umask's mode
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def read_parquet(path: str | Path, schema: pa.Schema | None = None) -> pa.Table:
    """Read a Parquet file (or folder of them), optionally checked against `schema`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no Parquet file at {path}")
    table = pq.read_table(path)
    return validate_table(table, schema, name=path.name) if schema is not None else table
