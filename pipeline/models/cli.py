"""`aletheia fit-policy`: fit (or reuse) one tiny local policy, as the build flow does."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipeline.common.stage_cli import (
    Extra,
    FieldOption,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
)
from pipeline.models.config import PolicyFit


def _fit_policy(given: Given) -> None:
    from pipeline.common.problem_splits import check_split

    problems, split = given.paths["problems"], given.extras["split"]
    check_split(problems, split)  # before torch loads: a mistake answers in a second
    from pipeline.models.policy import fit_on_problems, read_fit
    from pipeline.sampling.stage import load_problems

    chosen = [p for p in load_problems(problems) if split == "all" or p.source_split == split]
    spec = PolicyFit(dir=given.paths["out"], **given.fields[PolicyFit])
    path = fit_on_problems(chosen, spec)
    typer.echo(json.dumps({**read_fit(path), "split": split, "problems": len(chosen)}, indent=2))


# stage None: the build's FIT_POLICY takes its examples as data; this reads them from a file.
FIT_POLICY_COMMAND = StageCommand(
    name="fit-policy",
    help="Fit a tiny line-level policy on the problems' reference solutions (CPU, seconds).",
    inputs={
        "problems": PathOption(
            ("--problems", "-p"), "problems.parquet (`problems ingest`)", dir_okay=False
        )
    },
    out=PathOption(("--out", "-o"), "folder the model is written to (reused if fitted alike)"),
    extras={
        "split": Extra(
            Annotated[
                str,
                typer.Option(
                    "--split",
                    help="fit on the problems of this source_split only ('all': every problem), "
                    "so the other splits stay unseen for evaluate-policy",
                ),
            ],
            "train",
        )
    },
    fields=(
        FieldOption(PolicyFit, "name", kw={"default": "tiny-policy"}),
        FieldOption(PolicyFit, "include_wrong", ("--include-wrong",)),
        FieldOption(PolicyFit, "hidden_size"),
        FieldOption(PolicyFit, "steps"),
        # the command's own default: a faster fit than a run config's policies get
        FieldOption(PolicyFit, "learning_rate", kw={"default": 5e-3}),
        FieldOption(PolicyFit, "seed"),
    ),
    run=_fit_policy,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, FIT_POLICY_COMMAND)
