"""`aletheia check-references`: the reference check the flows run, on a problems file.

Its own module, apart from `problems ingest` (whose help lists the source adapters and so loads
pyarrow): a dead judge engine is answered in one line before anything heavy loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt


def register(app: typer.Typer) -> None:
    @app.command("check-references")
    def check_references_cmd(
        problems: Annotated[
            Path,
            typer.Option(
                "--problems",
                "-p",
                exists=True,
                dir_okay=False,
                help="problems Parquet (from `problems ingest`)",
            ),
        ],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="folder for the verified set and the report")
        ],
        engine: EngineOpt = None,
        url: UrlOpt = None,
        token_file: TokenFileOpt = None,
    ) -> None:
        """Run every reference solution in the sandbox; quarantine problems whose reference fails."""
        from pipeline.judge.availability import probe_judge
        from pipeline.judge.config import SandboxSection

        sandbox = SandboxSection().overridden(engine, url, token_file)
        probe_judge(sandbox)  # a dead engine: one line before the problems load
        from pipeline.problems.reference_check import check_references

        typer.echo(json.dumps(check_references(problems, out, sandbox=sandbox), indent=2))
