"""A short fingerprint of a Parquet table's rows: where two builds part.

The hash covers every row's values, column by column in the file's order, read back
through Arrow (not the file's bytes, so another Parquet writer or compression gives the
same fingerprint), minus the columns that record a measurement rather than a result:
the per-test CPU times and memory of a judged program differ on every run even when
every verdict is the same. Two builds whose fingerprints agree at a stage hold the same
rows there; the first stage whose fingerprints differ is where they parted.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

# Measurements, not results: left out of every fingerprint.
MEASURED_COLUMNS = frozenset({"test_times_s", "test_memory_kb"})
LENGTH = 12  # hex characters shown


def _canonical(value: Any) -> Any:
    """JSON-able and machine-independent: floats by their shortest repr, bytes as hex."""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def table_fingerprint(path: str | Path, batch_rows: int = 4096) -> dict[str, Any]:
    """{"rows": n, "hash": 12 hex chars} of a Parquet file's rows (MEASURED_COLUMNS left out)."""
    f = pq.ParquetFile(path)
    columns = [n for n in f.schema_arrow.names if n not in MEASURED_COLUMNS]
    h = hashlib.sha256(json.dumps(columns).encode())
    rows = 0
    for batch in f.iter_batches(batch_size=batch_rows, columns=columns):
        for row in batch.to_pylist():
            h.update(json.dumps([_canonical(row[c]) for c in columns]).encode())
            h.update(b"\n")
        rows += batch.num_rows
    return {"rows": rows, "hash": h.hexdigest()[:LENGTH]}


def fingerprints(outputs: dict[str, str | Path]) -> dict[str, dict[str, Any]]:
    """The fingerprint of each Parquet output that exists (name -> rows, hash)."""
    out = {}
    for name, path in outputs.items():
        p = Path(path)
        if p.suffix == ".parquet" and p.is_file():
            out[name] = table_fingerprint(p)
    return out
