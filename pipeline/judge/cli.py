"""`aletheia judge`: the judge stage the flows call, on a candidates file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.config_options import option_for
from pipeline.judge.config import JudgeConfig, SandboxSection
from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt


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


def register(app: typer.Typer) -> None:
    @app.command("judge")
    def judge_cmd(
        candidates: Annotated[Path, typer.Option("--candidates", help="candidates Parquet")],
        problems: Annotated[Path, typer.Option("--problems", "-p", help="problems Parquet")],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="judged candidates Parquet to write")
        ],
        chunk_size: int = option_for(JudgeConfig, "chunk_size"),
        time_limit_scale: float = option_for(JudgeConfig, "time_limit_scale"),
        pool_size: int | None = option_for(SandboxSection, "pool_size"),
        engine: EngineOpt = None,
        url: UrlOpt = None,
        token_file: TokenFileOpt = None,
    ) -> None:
        """Judge every candidate in the sandbox; distinct programs run once."""
        from pipeline.judge.availability import probe_judge

        cfg = JudgeConfig(chunk_size=chunk_size, time_limit_scale=time_limit_scale)
        sandbox = SandboxSection(pool_size=pool_size).overridden(engine, url, token_file)
        probe_judge(sandbox)  # a dead engine: one line now, not a traceback after the inputs load
        from pipeline.judge.stage import judge_candidates

        stats = judge_candidates(candidates, problems, out, cfg, sandbox=sandbox)
        console = stderr_console()
        console.print(summary_table("judge", stats["by_generator_language"], judged=True))
        console.print(
            f"not judged: {hist(stats['not_judged'])}; SE: {stats['se']}; "
            f"distinct programs: {stats['distinct_programs']}"
        )
        console.print(f"wrote {out} ({stats['judged_rows']} rows)")
