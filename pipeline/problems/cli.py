"""`aletheia problems ingest`: the same stage function the flows call. `problems split` lives
with its stage (pipeline/splits/cli.py); the app shell (aletheia/cli.py) hands it to `register`
to join the `problems` group. `check-references` is in reference_cli.py (light to load: it
answers a dead judge engine before pyarrow loads)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.config_options import option_for
from pipeline.errors import fail
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


def register(app: typer.Typer, *group_commands: Callable[[typer.Typer], None]) -> None:
    """Add the `problems` group (`ingest`, then each of `group_commands` registering its own
    subcommands into the group)."""
    problems = typer.Typer(
        help="Problems with tests: ingest sources, split into contamination-free sets.",
        no_args_is_help=True,
    )

    @problems.command("ingest")
    def ingest_cmd(
        source: Annotated[
            list[str],
            typer.Option(
                "--source",
                "-s",
                help="KIND[:LOCATION]\\[#SPLIT], repeatable. KIND: "
                + ", ".join(ADAPTERS)
                + ". LOCATION: Hub id, folder, file or glob (parquet/jsonl).",
            ),
        ],
        out: Annotated[Path, typer.Option("--out", "-o", help="problems Parquet to write")],
        no_generated_tests: Annotated[
            bool,
            typer.Option(
                "--no-generated-tests", help="code_contests: leave out its generated_tests"
            ),
        ] = False,
        keep_samples: Annotated[
            bool,
            typer.Option("--keep-samples", help="keep sample I/O sections in prompt_statement"),
        ] = False,
        max_tests: int | None = option_for(IngestConfig, "max_tests_per_problem", "--max-tests"),
        max_solutions_per_language: int = option_for(IngestConfig, "max_solutions_per_language"),
        limit: int | None = option_for(IngestConfig, "limit_per_source", "--limit"),
        force: Annotated[
            bool, typer.Option("--force", help="re-run even if the cached output matches")
        ] = False,
    ) -> None:
        """Read problem sources into one Problem table; bad rows go to the quarantine table."""
        from pipeline.problems.stage import ingest

        config = IngestConfig(
            include_generated_tests=not no_generated_tests,
            max_tests_per_problem=max_tests,
            max_solutions_per_language=max_solutions_per_language,
            limit_per_source=limit,
        )
        config.normalize.cut_sample_io = not keep_samples
        try:
            stats = ingest(source, out, config, force=force)
        except (SourceError, ValueError) as e:
            raise fail(e) from e
        console.print(_ingest_table(stats))
        console.print(f"wrote {out} and {stats['outputs']['quarantine']}")

    for add in group_commands:
        add(problems)
    app.add_typer(problems, name="problems")
