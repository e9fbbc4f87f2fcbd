"""`aletheia check-references`: the reference check the flows run, on a problems file.

Its own module, apart from `problems ingest` (whose help lists the source adapters and so loads
pyarrow): a dead judge engine is answered in one line before anything heavy loads."""

from __future__ import annotations

import json

import typer

from pipeline.common.stage_cli import Given, PathOption, StageCommand, add_stage_command
from pipeline.judge.engine_option import engine_options, sandbox_given


def _check_references(given: Given) -> None:
    from pipeline.judge.availability import probe_judge

    sandbox = sandbox_given(given)
    probe_judge(sandbox)  # a dead engine: one line before the problems load
    from pipeline.problems.reference_check import check_references

    stats = check_references(given.paths["problems"], given.paths["out"], sandbox=sandbox)
    typer.echo(json.dumps(stats, indent=2))


# Outside the build graph: the RLVR study runs the same check (pipeline/policy_eval/study.py).
CHECK_REFERENCES_COMMAND = StageCommand(
    name="check-references",
    help="Run every reference solution in the sandbox; quarantine problems whose reference fails.",
    inputs={
        "problems": PathOption(
            ("--problems", "-p"),
            "problems Parquet (from `problems ingest`)",
            exists=True,
            dir_okay=False,
        )
    },
    out=PathOption(("--out", "-o"), "folder for the verified set and the report"),
    extras=engine_options(config=False),
    run=_check_references,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, CHECK_REFERENCES_COMMAND)
