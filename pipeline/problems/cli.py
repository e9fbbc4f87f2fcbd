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


def _ingest_table(stats: dict) -> Table:
    t = Table(
        title="problems ingest" + (" (cached: nothing re-run)" if stats.get("cached") else "")
    )
    for c in ("source", "rows", "problems", "quarantined", "skipped solutions"):
        t.add_column(c, justify="left" if c == "source" else "right")
    for spec, s in stats["per_source"].items():
        skipped = (
            ", ".join(f"{k}:{v}" for k, v in sorted(s["skipped_solutions_by_language"].items()))
            or "-"
        )
        t.add_row(spec, str(s["rows"]), str(s["problems"]), str(s["quarantined"]), skipped)
    t.add_row("[bold]total", "", f"[bold]{stats['problems']}", f"[bold]{stats['quarantined']}", "")
    return t


def _ingest(given: Given) -> None:
    from pipeline.problems.stage import ingest

    config = given.config(IngestConfig)
    config.include_generated_tests = not given.extras["no_generated_tests"]
    config.normalize.cut_sample_io = not given.extras["keep_samples"]
    out = given.paths["out"]
    stats = ingest(given.extras["source"], out, config, force=given.force)
    console.print(_ingest_table(stats))
    console.print(f"wrote {out} and {stats['outputs']['quarantine']}")


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
