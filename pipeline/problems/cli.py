"""`aletheia problems ingest | split`: the same stage functions the flows call."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

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


def _split_table(report: dict) -> Table:
    t = Table(
        title="problems split" + (" (cached: nothing re-run)" if report.get("cached") else "")
    )
    for c in ("source", "train", "heldout", "dropped"):
        t.add_column(c, justify="left" if c == "source" else "right")
    for src, c in report["per_source"].items():
        t.add_row(src, str(c.get("train", 0)), str(c.get("heldout", 0)), str(c.get("dropped", 0)))
    k = report["counts"]
    t.add_row(
        "[bold]total", f"[bold]{k['train']}", f"[bold]{k['heldout']}", f"[bold]{k['dropped']}"
    )
    return t


def register(app: typer.Typer) -> None:
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
        max_tests: Annotated[
            int | None, typer.Option(help="keep at most N tests per problem")
        ] = None,
        max_solutions_per_language: Annotated[
            int, typer.Option(help="reference solutions kept")
        ] = 10,
        limit: Annotated[
            int | None,
            typer.Option("--limit", min=1, help="read only the first N rows of each source"),
        ] = None,
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

    @problems.command("split")
    def split_cmd(
        problems_path: Annotated[Path, typer.Option("--problems", "-p", help="problems Parquet")],
        out: Annotated[Path, typer.Option("--out", "-o", help="output folder")],
        benchmark: Annotated[
            list[str] | None,
            typer.Option(
                help="benchmark statements: an `mbpp[:PATH]\\[#SPLIT]` spec, or parquet/jsonl "
                "with a statement, prompt, question_content, question or text column; repeatable"
            ),
        ] = None,
        heldout_fraction: Annotated[
            float, typer.Option(help="fraction of eligible clusters held out")
        ] = 0.1,
        eval_after: Annotated[
            dt.datetime | None,
            typer.Option(
                formats=["%Y-%m-%d"],
                help="heldout only from clusters whose problems are all dated after this date; "
                "earlier and undated problems go to train",
            ),
        ] = None,
        seed: Annotated[int, typer.Option()] = 0,
        threshold: Annotated[float, typer.Option(help="near-duplicate Jaccard threshold")] = 0.7,
        num_perm: Annotated[int, typer.Option(help="MinHash permutations")] = 128,
        ngram: Annotated[int, typer.Option(help="decontamination word n-gram size")] = 8,
        force: Annotated[
            bool, typer.Option("--force", help="re-run even if the cached output matches")
        ] = False,
    ) -> None:
        """Near-duplicate clusters, benchmark decontamination and split assignment by cluster."""
        from pipeline.splits.config import SplitConfig
        from pipeline.splits.decontam import BenchmarkError
        from pipeline.splits.stage import split_problems

        try:
            config = SplitConfig(
                seed=seed,
                heldout_fraction=heldout_fraction,
                threshold=threshold,
                num_perm=num_perm,
                decontam_ngram=ngram,
                benchmarks=benchmark or [],
                eval_after=eval_after.date() if eval_after else None,
            )
            report = split_problems(problems_path, out, config, force=force)
        except (BenchmarkError, ValueError, FileNotFoundError) as e:
            raise fail(e) from e
        console.print(_split_table(report))
        console.print(
            f"wrote {out}/{{train,heldout,train_questions,assignments,quarantine}}.parquet, report.json"
        )

    app.add_typer(problems, name="problems")
