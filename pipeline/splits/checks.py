"""SPLITS' preflight check: every benchmark file `splits.benchmarks` names is there and
reads as a benchmark (its first row, or its columns), before ingest runs, not after it.

An `mbpp[:LOCATION][#SPLIT]` entry names MBPP: a local file is checked like the others;
the Hub dataset is read when the split runs (a note here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.common.stage import CheckContext, Finding
from pipeline.errors import near_path

if TYPE_CHECKING:
    from pipeline.splits.stage import SplitCall


def benchmark_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a benchmark file (None: it can), reading one row or the schema."""
    from pipeline.splits.decontam import STATEMENT_COLUMNS

    if not path.is_file():
        return f"no benchmark file at {path}{near_path(path)}"
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except Exception as e:  # noqa: BLE001 - any unreadable file is this entry's problem
            return f"{path}: not a readable Parquet file ({e})"
        if not set(STATEMENT_COLUMNS) & set(names):
            return f"{path}: none of the columns {list(STATEMENT_COLUMNS)}"
        return None
    if not path.name.endswith((".jsonl", ".json", ".jsonl.gz")):
        return f"{path}: benchmark files are .parquet, .jsonl or .jsonl.gz"
    import gzip
    import json

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), None)
        if first is not None:
            json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{path}: its first line is not JSON ({e})"
    return None


def check_benchmarks(call: SplitCall, ctx: CheckContext) -> list[Finding]:
    """Each `splits.benchmarks` entry: a readable file, or MBPP (a local file, or the Hub)."""
    from pipeline.problems.adapters.mbpp import HUB_CONFIGS
    from pipeline.problems.sources import parse_spec

    out: list[Finding] = []
    for i, entry in enumerate(call.splits.benchmarks):
        key = f"splits.benchmarks[{i}]"
        path = Path(entry).expanduser()
        if entry.startswith("mbpp") and not path.exists():
            try:
                spec = parse_spec(entry)
            except ValueError as e:
                out.append(Finding("sources", f"{key}: {e}"))
                continue
            if spec.location is None or spec.location in HUB_CONFIGS:
                out.append(
                    Finding("sources", f"{key}: {entry}: MBPP from the Hub, read at split", False)
                )
                continue
            path = Path(spec.location).expanduser()
        problem = benchmark_file_problem(path)
        if problem is not None:
            out.append(Finding("sources", f"{key}: {problem}"))
    return out
