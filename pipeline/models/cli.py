"""`aletheia fit-policy`: fit (or reuse) one tiny local policy, as the build flow does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("fit-policy")
    def fit_policy_cmd(
        problems: Annotated[Path, typer.Option(help="problems.parquet (from `problems ingest`)")],
        out: Annotated[
            Path, typer.Option(help="folder the model is written to (reused if fitted alike)")
        ],
        name: Annotated[str, typer.Option(help="the policy's name")] = "tiny-policy",
        include_wrong: Annotated[bool, typer.Option(help="also fit the wrong references")] = False,
        hidden_size: int = 64,
        steps: int = 200,
        learning_rate: float = 5e-3,
        seed: int = 0,
    ) -> None:
        """Fit a tiny line-level policy on the problems' reference solutions (CPU, seconds)."""
        from pipeline.models.policy import PolicyFit, fit_on_problems, read_fit
        from pipeline.sampling.stage import load_problems

        spec = PolicyFit(
            name=name,
            dir=out,
            include_wrong=include_wrong,
            hidden_size=hidden_size,
            steps=steps,
            learning_rate=learning_rate,
            seed=seed,
        )
        path = fit_on_problems(load_problems(problems), spec)
        typer.echo(json.dumps(read_fit(path), indent=2))
