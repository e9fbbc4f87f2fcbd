"""`aletheia problems ingest`: the same stage function the flows call. `problems split` lives
with its stage (pipeline/splits/cli.py); the app shell (aletheia/cli.py) hands it to `register`
to join the `problems` group. `check-references` is in reference_cli.py (light to load: it
answers a dead judge engine before pyarrow loads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.stage_cli import (
    Extra,
    FieldOption,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
)
from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import SourceError
from pipeline.problems.sources import ADAPTERS

console = Console(stderr=True)


# (column, the per-source stats key): rows = problems + quarantined + duplicates, per line
COLUMNS = (
    ("rows", "rows"),
    ("problems", "problems"),
    ("quarantined", "rows_quarantined"),
    ("duplicates", "duplicates"),
    ("solutions quarantined", "solutions_quarantined"),
)
ALWAYS = {"rows", "problems", "quarantined"}  # the others only where some source has them


def _ingest_table(stats: dict) -> Table:
    t = Table(
        title="problems ingest" + (" (cached: nothing re-run)" if stats.get("cached") else "")
    )
    per = list(stats["per_source"].values())
    shown = [(c, k) for c, k in COLUMNS if c in ALWAYS or any(s.get(k) for s in per)]
    skipped = {
        spec: ", ".join(f"{k}:{v}" for k, v in sorted(s["skipped_solutions_by_language"].items()))
        for spec, s in stats["per_source"].items()
    }
    extra = [("skipped solutions", skipped)] if any(skipped.values()) else []
    for c in ("source", *(c for c, _ in shown), *(c for c, _ in extra)):
        t.add_column(c, justify="left" if c == "source" else "right")
    for spec, s in stats["per_source"].items():
        t.add_row(spec, *(str(s.get(k, 0)) for _, k in shown), *(v[spec] or "-" for _, v in extra))
    totals = [f"[bold]{sum(s.get(k, 0) for s in per)}" for _, k in shown]
    t.add_row("[bold]total", *totals, *("" for _ in extra))
    return t


SHOWN_REASONS = 5


def _quarantine_lines(path: str) -> list[str]:
    """The first quarantine rows, one line each (the rest are in the table)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(path, columns=["source_row_id", "field", "reason"]).to_pylist()
    lines = [
        f"  {r['source_row_id']}" + (f" {r['field']}" if r["field"] else "") + f": {r['reason']}"
        for r in rows[:SHOWN_REASONS]
    ]
    if len(rows) > SHOWN_REASONS:
        lines.append(f"  ... and {len(rows) - SHOWN_REASONS} more")
    return lines


def _ingest(given: Given) -> None:
    from pipeline.problems.stage import ingest

    config = given.config(IngestConfig)
    config.include_generated_tests = not given.extras["no_generated_tests"]
    config.normalize.cut_sample_io = not given.extras["keep_samples"]
    out = given.paths["out"]
    stats = ingest(given.extras["source"], out, config, force=given.force)
    console.print(_ingest_table(stats))
    quarantine = stats["outputs"]["quarantine"]
    if stats["quarantined"]:
        console.print(f"quarantined ({quarantine}):", highlight=False)
        for line in _quarantine_lines(quarantine):
            console.print(line, highlight=False, markup=False)
    console.print(f"wrote {out} and {quarantine}")


INGEST_COMMAND = StageCommand(
    name="ingest",
    stage="ingest",
    help="Read problem sources into one Problem table; bad rows go to the quarantine table.",
    out=PathOption(("--out", "-o"), "problems Parquet to write"),
    extras={
        "source": Extra(
            Annotated[
                list[str],
                typer.Option(
                    "--source",
                    "-s",
                    help="KIND[:LOCATION]\\[#SPLIT], repeatable. KIND: "
                    + ", ".join(ADAPTERS)
                    + ". LOCATION: Hub id, folder, file or glob (parquet/jsonl).",
                ),
            ]
        ),
        "no_generated_tests": Extra(
            Annotated[
                bool,
                typer.Option(
                    "--no-generated-tests", help="code_contests: leave out its generated_tests"
                ),
            ],
            False,
        ),
        "keep_samples": Extra(
            Annotated[
                bool,
                typer.Option("--keep-samples", help="keep sample I/O sections in prompt_statement"),
            ],
            False,
        ),
    },
    fields=(
        FieldOption(IngestConfig, "max_tests_per_problem", ("--max-tests",)),
        FieldOption(IngestConfig, "max_solutions_per_language"),
        FieldOption(IngestConfig, "limit_per_source", ("--limit",)),
    ),
    force=True,
    run=_ingest,
    errors=(SourceError, ValueError),
)


def register(app: typer.Typer, *group_commands: Callable[[typer.Typer], None]) -> None:
    """Add the `problems` group (`ingest`, then each of `group_commands` registering its own
    subcommands into the group)."""
    problems = typer.Typer(
        help="Problems with tests: ingest sources, split into contamination-free sets.",
        no_args_is_help=True,
    )
    add_stage_command(problems, INGEST_COMMAND)
    for add in group_commands:
        add(problems)
    app.add_typer(problems, name="problems")
