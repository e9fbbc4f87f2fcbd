"""The ingest stage: sources -> problems.parquet + problems.quarantine.parquet + a report.

`ingest(["code_contests:/data/cc/*.parquet", "humaneval"], Path("problems.parquet"), IngestConfig())`

Output rows are sorted by problem_id, so the same sources and config give the same
bytes whatever order the sources are listed in. A re-run with unchanged inputs and
config executes nothing (stage cache marker in a hidden folder beside the output).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipeline.common.parquet import write_parquet
from pipeline.common.stage import is_done, mark_done, read_stats, stage_key
from pipeline.problems.adapters.base import AdapterContext
from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import RowError, SourceError
from pipeline.problems.sources import ADAPTERS, load_source, parse_spec
from pipeline.problems.validate import Invalid, build_problem, quarantine_row
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import models_to_table

STAGE = "problems.ingest"
VERSION = "1"


def output_paths(out: Path) -> dict[str, Path]:
    """problems.parquet -> its quarantine table, report and stage-marker folder beside it."""
    stem = out.name.removesuffix(".parquet")
    return {
        "problems": out,
        "quarantine": out.with_name(f"{stem}.quarantine.parquet"),
        "report": out.with_name(f"{stem}.report.json"),
        "stage_dir": out.with_name(f".{stem}.stage"),
    }


def _reason_kind(reason: str) -> str:
    """'tests[3] is missing its expected output' -> 'tests[N] is missing its expected output'."""
    return re.sub(r"\d+(\.\d+)?", "N", reason)[:120]


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        disable=not enabled, transient=False,
    )


def _ingest_source(
    spec_text: str, config: IngestConfig, progress: Progress
) -> tuple[list[Problem], list[Quarantine], dict[str, Any]]:
    spec = parse_spec(spec_text)
    adapter = ADAPTERS[spec.kind]()
    split = spec.split or config.split
    ctx = AdapterContext(source=adapter.name, config=config, split=split)
    loaded = load_source(spec, adapter, split, config.datasets_cache_dir)
    if loaded.columns is not None:
        missing = [c for c in adapter.required_columns if c not in loaded.columns]
        if missing:
            raise SourceError(spec.text, f"missing column(s) {missing}; has {loaded.columns}", field=missing[0])
    problems: list[Problem] = []
    quarantined: list[Quarantine] = []
    task = progress.add_task(spec.text, total=len(loaded))
    for index, row in enumerate(loaded):
        progress.advance(task)
        row_id = f"{split}/{index}"
        try:
            row_id = adapter.row_id(row, index, ctx)
            fields = adapter.convert(row, row_id, ctx)
            problems.append(build_problem(adapter.name, row_id, fields, config))
        except (RowError, Invalid) as e:
            quarantined.append(quarantine_row(adapter.name, row_id, e.field, e.reason, row, config))
        except (TypeError, ValueError, KeyError, AttributeError) as e:  # malformed nesting
            reason = f"undecodable row: {type(e).__name__}: {e}"
            quarantined.append(quarantine_row(adapter.name, row_id, None, reason, row, config))
    stats = {
        "spec": spec.text,
        "rows": len(loaded),
        "problems": len(problems),
        "quarantined": len(quarantined),
        "quarantine_reasons": dict(Counter(_reason_kind(q.reason) for q in quarantined)),
        "test_modes": dict(Counter(p.test_mode for p in problems)),
        "tests": sum(len(p.tests) for p in problems),
        "solutions": dict(Counter(s.language for p in problems for s in p.solutions)),
        "skipped_solutions_by_language": dict(ctx.skipped_solutions),
        "capped_solutions_by_language": dict(ctx.capped_solutions),
        "notes": dict(ctx.notes),
    }
    return problems, quarantined, stats


def ingest(
    sources: list[str],
    out: Path,
    config: IngestConfig | None = None,
    *,
    force: bool = False,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Read every source, validate, quarantine bad rows, write Parquet; returns the stats dict.

    Raises SourceError (naming source and field) when a whole source cannot be read;
    nothing is written in that case, so a finished earlier output is never clobbered.
    """
    config = config or IngestConfig()
    out = Path(out)
    paths = output_paths(out)
    specs = [parse_spec(s) for s in sources]  # fail fast on a typo before loading anything
    if not specs:
        raise ValueError("ingest needs at least one --source")
    inputs = sorted({p for s in specs for p in s.local_paths()})
    key = stage_key(STAGE, VERSION, {"config": config.model_dump(mode="json"),
                                     "sources": sorted(s.text for s in specs)}, inputs)
    if not force and is_done(paths["stage_dir"], key) and paths["problems"].exists() and paths["quarantine"].exists():
        return {**read_stats(paths["stage_dir"]), "cached": True}

    problems: list[Problem] = []
    quarantined: list[Quarantine] = []
    per_source: dict[str, Any] = {}
    with _progress(show_progress) as progress:
        for spec in specs:
            p, q, stats = _ingest_source(spec.text, config, progress)
            problems += p
            quarantined += q
            per_source[spec.text] = stats

    # The same problem twice (same source + source_id) is kept once; the rest quarantined.
    unique: dict[str, Problem] = {}
    for p in problems:
        if p.problem_id in unique:
            quarantined.append(Quarantine(
                stage="ingest", source=p.source, source_row_id=p.source_id, field="problem_id",
                reason=f"duplicate problem_id {p.problem_id} (same source and source_id as an earlier row)",
            ))
        else:
            unique[p.problem_id] = p
    rows = [unique[k] for k in sorted(unique)]
    quarantined.sort(key=lambda q: (q.source, q.source_row_id, q.field or "", q.reason))

    write_parquet(models_to_table(rows, PROBLEM_SCHEMA), paths["problems"], PROBLEM_SCHEMA)
    write_parquet(models_to_table(quarantined, QUARANTINE_SCHEMA), paths["quarantine"], QUARANTINE_SCHEMA)
    stats = {
        "problems": len(rows),
        "quarantined": len(quarantined),
        "duplicates": len(problems) - len(rows),
        "per_source": per_source,
        "outputs": {k: str(v) for k, v in paths.items() if k != "stage_dir"},
    }
    paths["report"].write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n")
    mark_done(paths["stage_dir"], key, STAGE, stats)
    return {**stats, "cached": False}
