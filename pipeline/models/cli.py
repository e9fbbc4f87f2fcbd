"""`aletheia fit-policy`: fit (or reuse) one tiny local policy, as the build flow does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("fit-policy")
    def fit_policy_cmd(
        problems: Annotated[
            Path,
            typer.Option(
                "--problems", "-p", dir_okay=False, help="problems.parquet (`problems ingest`)"
            ),
        ],
        out: Annotated[
            Path,
            typer.Option(
                "--out", "-o", help="folder the model is written to (reused if fitted alike)"
            ),
        ],
        split: Annotated[
            str,
            typer.Option(
                "--split",
                help="fit on the problems of this source_split only ('all': every problem), "
                "so the other splits stay unseen for evaluate-policy",
            ),
        ] = "train",
        name: Annotated[str, typer.Option(help="the policy's name")] = "tiny-policy",
        include_wrong: Annotated[
            bool, typer.Option("--include-wrong", help="also fit the wrong references")
        ] = False,
        hidden_size: int = 64,
        steps: int = 200,
        learning_rate: float = 5e-3,
        seed: int = 0,
    ) -> None:
        """Fit a tiny line-level policy on the problems' reference solutions (CPU, seconds)."""
        from pipeline.common.problem_splits import check_split

        check_split(problems, split)  # before torch loads: a mistake answers in a second
        from pipeline.models.config import PolicyFit
        from pipeline.models.policy import fit_on_problems, read_fit
        from pipeline.sampling.stage import load_problems

        chosen = [p for p in load_problems(problems) if split == "all" or p.source_split == split]
        spec = PolicyFit(
            name=name,
            dir=out,
            include_wrong=include_wrong,
            hidden_size=hidden_size,
            steps=steps,
            learning_rate=learning_rate,
            seed=seed,
        )
        path = fit_on_problems(chosen, spec)
        typer.echo(
            json.dumps({**read_fit(path), "split": split, "problems": len(chosen)}, indent=2)
        )
