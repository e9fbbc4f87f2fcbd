"""`aletheia sample`: the same stage function the flows call."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.judge.cli import stderr_console as _console
from pipeline.judge.cli import summary_table


def register(app: typer.Typer) -> None:
    @app.command("sample")
    def sample_cmd(
        config: Annotated[Path, typer.Option("--config", "-c", help="pool YAML (configs/pools/)")],
        problems: Annotated[Path, typer.Option("--problems", "-p", help="problems Parquet")],
        out: Annotated[Path, typer.Option("--out", "-o", help="output folder")],
    ) -> None:
        """Generate candidates from a policy pool, references and mutants (resumable)."""
        from pipeline.errors import fail, load_config
        from pipeline.sampling.config import SampleConfig
        from pipeline.sampling.stage import CANDIDATES_FILE, sample

        try:
            cfg = load_config(config, SampleConfig, what="pool config")
        except ValueError as e:
            raise fail(e) from e
        stats = sample(cfg, problems, out)
        console = _console()
        console.print(summary_table("sample", stats["by_generator_language"], judged=False))
        for name, s in stats["sources"].items():
            console.print(
                f"  {name}: "
                + ", ".join(
                    f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in s.items()
                )
            )
        if not stats.get("complete", True):
            console.print("[yellow]some units failed to generate: run again to retry them[/yellow]")
        console.print(f"wrote {out / CANDIDATES_FILE} ({stats['candidates']} candidates)")
