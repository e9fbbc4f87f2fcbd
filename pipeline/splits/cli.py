"""`aletheia problems split`: near-duplicate clusters, decontamination and the split
assignment, the same stage function the flows call. The app shell adds it to the
`problems` group (pipeline/problems/cli.py)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.stage_cli import PROBLEMS, FieldOption, Given, StageCommand, add_stage_command
from pipeline.splits.config import SplitConfig

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


def _split(given: Given) -> None:
    from pipeline.splits.stage import split_problems

    out = given.paths["out"]
    config = given.config(SplitConfig)
    report = split_problems(given.paths["problems"], out, config, force=given.force)
    console.print(_split_table(report))
    console.print(
        f"wrote {out}/{{train,heldout,train_questions,assignments,quarantine}}.parquet, report.json"
    )


SPLIT_COMMAND = StageCommand(
    name="split",
    stage="splits",
    help="Near-duplicate clusters, benchmark decontamination and split assignment by cluster.",
    inputs={"problems": PROBLEMS},
    fields=(
        FieldOption(SplitConfig, "benchmarks", ("--benchmark",)),
        FieldOption(SplitConfig, "heldout_fraction"),
        FieldOption(SplitConfig, "eval_after"),
        FieldOption(SplitConfig, "seed", kw={"help": "Seed of the heldout draw."}),
        FieldOption(SplitConfig, "threshold"),
        FieldOption(SplitConfig, "num_perm"),
        FieldOption(SplitConfig, "decontam_ngram", ("--ngram",)),
    ),
    force=True,
    run=_split,
    # BenchmarkError is a ValueError (pipeline/splits/decontam.py)
    errors=(ValueError, FileNotFoundError),
)


def register(problems: typer.Typer) -> None:
    """Add `split` to the `problems` group."""
    add_stage_command(problems, SPLIT_COMMAND)
