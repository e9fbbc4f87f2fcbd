"""`aletheia problems split`: near-duplicate clusters, decontamination and the split
assignment, the same stage function the flows call. The app shell adds it to the
`problems` group (pipeline/problems/cli.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.errors import fail

console = Console(stderr=True)


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


def register(problems: typer.Typer) -> None:
    """Add `split` to the `problems` group."""

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
