"""The ingest stage: sources -> problems.parquet + problems.quarantine.parquet + a report.

    call = IngestCall(sources=["code_contests:/data/cc/*.parquet", "humaneval"])
    run_stage(INGEST, call, ingest_inputs(call), Path("problems.parquet"))

`INGEST` is the stage as a value (pipeline/common/stage.py), run by the one runner
(pipeline/common/runner.py): its primary output is the problems file, so its marker lives
in the hidden folder `.problems.stage/` beside it. A re-run with unchanged sources, source
files and config executes nothing. `ingest(...)` is the entry point of
`aletheia problems ingest` and the tests, a wrapper over the runner (the flows run INGEST
through flows/task.py).

Output rows are sorted by problem_id, so the same sources and config give the same
bytes whatever order the sources are listed in.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipeline.common.config import RunnerSection
from pipeline.common.parquet import write_parquet
from pipeline.common.runner import marker_dir, run_stage
from pipeline.common.stage import ShardContext, Stage, Stats
from pipeline.problems.adapters.base import AdapterContext
from pipeline.problems.checks import check_sources
from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import RowError, SourceError
from pipeline.problems.sources import ADAPTERS, load_source, parse_spec
from pipeline.problems.validate import (
    Invalid,
    RejectedSolution,
    build_problem,
    quarantine_row,
    raw_text,
)
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import models_to_table


class IngestCall(BaseModel):
    """What INGEST runs on, built at wiring time and never part of RunConfig: the source
    specs and the `ingest` section. `progress` (the terminal bars) has no effect on rows and
    stays out of the key (the stage's default `key`)."""

    model_config = ConfigDict(extra="forbid")

    # In the key as listed: the first copy of a duplicate problem is kept in this order.
    sources: list[str]
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    progress: bool = True


def _paths(out: Path) -> dict[str, Path]:
    """problems.parquet -> itself, its quarantine table and its report beside it."""
    out = Path(out)
    if not out.suffix:  # the runner reads a name without a suffix as a folder output
        raise ValueError(
            f"ingest writes one Parquet file: {out} needs a file name such as problems.parquet"
        )
    stem = out.name.removesuffix(".parquet")
    return {
        "problems": out,
        "quarantine": out.with_name(f"{stem}.quarantine.parquet"),
        "report": out.with_name(f"{stem}.report.json"),
    }


def _outputs(call: IngestCall, out: Path) -> dict[str, Path]:
    return _paths(out)  # named by the primary output alone


def output_paths(out: Path) -> dict[str, Path]:
    """problems.parquet -> its quarantine table, report and stage-marker folder beside it."""
    return {**_paths(out), "stage_dir": marker_dir(Path(out))}


def ingest_inputs(call: IngestCall) -> dict[str, list[Path]]:
    """INGEST's one input: the local files the sources read (their content enters the key).
    Every spec is parsed first, so a typo fails before anything is loaded or unmarked."""
    specs = [parse_spec(s) for s in call.sources]
    if not specs:
        raise ValueError("ingest needs at least one --source")
    return {"source_files": sorted({p for s in specs for p in s.local_paths()})}


def _reason_kind(reason: str) -> str:
    """'tests[3] is missing its expected output' -> 'tests[N] is missing its expected output'."""
    return re.sub(r"\d+(\.\d+)?", "N", reason)[:120]


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not enabled,
        transient=False,
    )


class ProblemCollector:
    """Accepted problems, held as Arrow batches (far smaller than Python objects at scale).

    The same problem twice (same source + source_id) is kept once (the first copy in
    --source order); later copies are quarantined with the reason.
    """

    BATCH = 1000

    def __init__(self) -> None:
        self._pending: list[Problem] = []
        self._tables: list[pa.Table] = []
        self.seen: set[str] = set()
        self.duplicates: list[Quarantine] = []

    def add(self, p: Problem) -> bool:
        if p.problem_id in self.seen:
            self.duplicates.append(
                Quarantine(
                    stage="ingest",
                    source=p.source,
                    source_row_id=p.source_id,
                    field="problem_id",
                    reason=f"duplicate problem_id {p.problem_id} (same source and source_id as an earlier row)",
                )
            )
            return False
        self.seen.add(p.problem_id)
        self._pending.append(p)
        if len(self._pending) >= self.BATCH:
            self._flush()
        return True

    def _flush(self) -> None:
        if self._pending:
            self._tables.append(models_to_table(self._pending, PROBLEM_SCHEMA))
            self._pending = []

    def table(self) -> pa.Table:
        """All problems, sorted by problem_id: the output order never depends on source order."""
        self._flush()
        table = pa.concat_tables(self._tables) if self._tables else PROBLEM_SCHEMA.empty_table()
        return table.take(pc.sort_indices(table, [("problem_id", "ascending")]))


def _ingest_source(
    spec_text: str, config: IngestConfig, progress: Progress, collector: ProblemCollector
) -> tuple[list[Quarantine], dict[str, Any]]:
    spec = parse_spec(spec_text)
    adapter = ADAPTERS[spec.kind]()
    split = spec.split or adapter.default_split or config.split
    ctx = AdapterContext(source=adapter.name, config=config, split=split)
    loaded = load_source(spec, adapter, split, config.datasets_cache_dir)
    if loaded.columns is not None:
        missing = [c for c in adapter.required_columns if c not in loaded.columns]
        if missing:
            raise SourceError(
                spec.text, f"missing column(s) {missing}; has {loaded.columns}", field=missing[0]
            )
    quarantined = [  # lines that were not JSON objects: one quarantine row each, the rest read on
        Quarantine(
            stage="ingest",
            source=adapter.name,
            source_row_id=m.row_id,
            field=None,
            reason=f"malformed JSON line {m.line} of {m.file}: {m.reason}",
            raw=m.raw[: config.quarantine_raw_chars],
        )
        for m in loaded.malformed
    ]
    kept = duplicates = 0
    rejected: list[RejectedSolution] = []
    solution_rows: list[Quarantine] = []
    modes: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    n_tests = 0
    rows = (
        len(loaded)
        if config.limit_per_source is None
        else min(len(loaded), config.limit_per_source)
    )
    task = progress.add_task(spec.text, total=rows + len(loaded.malformed))
    progress.advance(task, len(loaded.malformed))  # read already, each a quarantine row
    for index, row in enumerate(loaded):
        if index >= rows:  # ingest.limit_per_source: the first N rows, in the source's order
            break
        progress.advance(task)
        row_id = f"{split}/{index}"
        try:
            row_id = adapter.row_id(row, index, ctx)
            fields = adapter.convert(row, row_id, ctx)
            rejected.clear()
            problem = build_problem(adapter.name, row_id, fields, config, rejected)
            if len(problem.tests) < len(fields.get("tests") or []):
                ctx.notes["tests cut to max_tests_per_problem"] += 1
            if collector.add(problem):
                kept += 1
                modes[problem.test_mode] += 1
                n_tests += len(problem.tests)
                languages.update(s.language for s in problem.solutions)
                solution_rows += [  # each bad solution alone, its problem kept
                    Quarantine(
                        stage="ingest",
                        source=adapter.name,
                        source_row_id=row_id,
                        field=r.field,
                        reason=r.reason,
                        raw=raw_text({"solution": r.solution}, config.quarantine_raw_chars),
                    )
                    for r in rejected
                ]
            else:
                duplicates += 1
        except (RowError, Invalid) as e:
            quarantined.append(quarantine_row(adapter.name, row_id, e.field, e.reason, row, config))
        except (TypeError, ValueError, KeyError, AttributeError) as e:  # malformed nesting
            reason = f"undecodable row: {type(e).__name__}: {e}"
            quarantined.append(quarantine_row(adapter.name, row_id, None, reason, row, config))
    bad_rows = len(quarantined)
    quarantined += solution_rows
    stats = {
        "spec": spec.text,
        # every row read, a malformed line included: rows = problems + rows_quarantined +
        # duplicates (a solution quarantined alone leaves its problem counted as a problem)
        "rows": rows + len(loaded.malformed),
        "problems": kept,
        "rows_quarantined": bad_rows,
        "duplicates": duplicates,
        "solutions_quarantined": len(solution_rows),
        "quarantined": len(quarantined) + duplicates,  # its rows in the quarantine table
        "malformed_lines": len(loaded.malformed),
        "quarantine_reasons": dict(Counter(_reason_kind(q.reason) for q in quarantined)),
        "test_modes": dict(modes),
        "tests": n_tests,
        "solutions": dict(languages),
        "skipped_solutions_by_language": dict(ctx.skipped_solutions),
        "capped_solutions_by_language": dict(ctx.capped_solutions),
        "notes": dict(ctx.notes),
    }
    return quarantined, stats


def _run(ctx: ShardContext[IngestCall]) -> Stats:
    """Read every source, validate, quarantine bad rows, write the three outputs.

    Raises SourceError (naming source and field) when a whole source cannot be read;
    nothing is written in that case (every source is read before the first write), so a
    finished earlier output is never clobbered."""
    call = ctx.config
    paths = _paths(ctx.out)
    collector = ProblemCollector()
    quarantined: list[Quarantine] = []
    per_source: dict[str, Any] = {}
    with _progress(call.progress) as progress:
        for spec in [parse_spec(s) for s in call.sources]:
            q, stats = _ingest_source(spec.text, call.ingest, progress, collector)
            quarantined += q
            per_source[spec.text] = stats
    quarantined += collector.duplicates
    quarantined.sort(key=lambda q: (q.source, q.source_row_id, q.field or "", q.reason))
    table = collector.table()

    write_parquet(table, paths["problems"], PROBLEM_SCHEMA)
    write_parquet(
        models_to_table(quarantined, QUARANTINE_SCHEMA), paths["quarantine"], QUARANTINE_SCHEMA
    )
    stats = {
        "rows": sum(s["rows"] for s in per_source.values()),
        "problems": table.num_rows,
        "rows_quarantined": sum(s["rows_quarantined"] for s in per_source.values()),
        "solutions_quarantined": sum(s["solutions_quarantined"] for s in per_source.values()),
        "quarantined": len(quarantined),  # the quarantine table's rows
        "duplicates": len(collector.duplicates),
        "malformed_lines": sum(s["malformed_lines"] for s in per_source.values()),
        "per_source": per_source,
        "outputs": {k: str(v) for k, v in paths.items()},
    }
    paths["report"].write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n")
    return stats


def _plan_line(call: IngestCall, runner: RunnerSection) -> str:
    limit = call.ingest.limit_per_source
    return f"{', '.join(call.sources)}" + (f", at most {limit} per source" if limit else "")


INGEST: Stage[IngestCall] = Stage(
    name="ingest",
    version="1",
    config=IngestCall,
    check=check_sources,
    inputs=("source_files",),
    outputs=_outputs,
    run=_run,
    plan=_plan_line,
)


def ingest(
    sources: list[str],
    out: Path,
    config: IngestConfig | None = None,
    *,
    force: bool = False,
    show_progress: bool = True,
) -> dict[str, Any]:
    """INGEST through the runner; returns its stats with `cached` (the entry point of
    `aletheia problems ingest` and the tests). Raises as `_run` does, and ValueError on
    no sources or an unknown source kind before anything is read."""
    call = IngestCall(
        sources=list(sources), ingest=config or IngestConfig(), progress=show_progress
    )
    result = run_stage(INGEST, call, ingest_inputs(call), Path(out), force=force)
    return {**result.stats, "cached": result.cached}
