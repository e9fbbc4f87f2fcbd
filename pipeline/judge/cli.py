"""`aletheia judge`: the judge stage the flows call, on a candidates file."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.stage_cli import (
    PROBLEMS,
    FieldOption,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
)
from pipeline.judge.config import JudgeConfig, SandboxSection
from pipeline.judge.engine_option import engine_options, sandbox_given


def stderr_console() -> Console:
    return Console(stderr=True)  # made per command: it picks up the current stderr and COLUMNS


def hist(d: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in d.items() if v) or "-"


def summary_table(title: str, groups: dict[str, dict[str, Any]], *, judged: bool) -> Table:
    """Per model x language: count, extraction failures, tokens; after judging, verdicts, pass rates."""
    t = Table(title=title)
    cols = ["generator", "language", "count", "extraction failures", "prompt tok", "completion tok"]
    if judged:
        cols += ["not judged", "verdicts", "pass rates"]
    for c in cols:
        t.add_column(
            c,
            justify="left" if c in ("generator", "language", "verdicts", "pass rates") else "right",
        )
    for key, g in groups.items():
        generator, _, language = key.partition(" | ")
        row = [
            generator,
            language,
            str(g.get("count", 0)),
            str(g.get("extraction_failures", 0)),
            str(g.get("prompt_tokens", 0)),
            str(g.get("completion_tokens", 0)),
        ]
        if judged:
            row += [
                str(sum(g.get("not_judged", {}).values())),
                hist(g.get("verdicts", {})),
                hist(g.get("pass_rates", {})),
            ]
        t.add_row(*row)
    return t


def _judge(given: Given) -> None:
    from pipeline.judge.availability import probe_judge

    cfg = given.config(JudgeConfig)
    sandbox = sandbox_given(given)
    probe_judge(sandbox)  # a dead engine: one line now, not a traceback after the inputs load
    from pipeline.judge.stage import judge_candidates

    out = given.paths["out"]
    stats = judge_candidates(
        given.paths["candidates"], given.paths["problems"], out, cfg, sandbox=sandbox
    )
    console = stderr_console()
    console.print(summary_table("judge", stats["by_generator_language"], judged=True))
    console.print(
        f"not judged: {hist(stats['not_judged'])}; SE: {stats['se']}; "
        f"distinct programs: {stats['distinct_programs']}"
    )
    console.print(f"wrote {out} ({stats['judged_rows']} rows)")


JUDGE_COMMAND = StageCommand(
    name="judge",
    stage="judge",
    help="Judge every candidate in the sandbox; distinct programs run once.",
    inputs={
        "candidates": PathOption(("--candidates",), "candidates Parquet"),
        "problems": PROBLEMS,
    },
    out=PathOption(("--out", "-o"), "judged candidates Parquet to write"),
    fields=(
        FieldOption(JudgeConfig, "chunk_size"),
        FieldOption(JudgeConfig, "time_limit_scale"),
        FieldOption(SandboxSection, "pool_size"),
    ),
    extras=engine_options(config=False),
    run=_judge,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, JUDGE_COMMAND)
