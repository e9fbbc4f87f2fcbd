"""`aletheia evaluate-policy`, `compare-policy-reports`, `rlvr-study` and `problems-check-references`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipeline.judge.engine_option import EngineOpt


def register(app: typer.Typer) -> None:
    @app.command("evaluate-policy")
    def evaluate_policy_cmd(
        model: Annotated[str, typer.Option("--model", help="policy: local folder or hub id")],
        problems: Annotated[
            Path,
            typer.Option(
                "--problems",
                exists=True,
                dir_okay=False,
                help="problems.parquet (e.g. `aletheia problems ingest --source mbpp`)",
            ),
        ],
        out: Annotated[Path, typer.Option("--out", help="report folder")],
        split: Annotated[
            str, typer.Option("--split", help="source_split to evaluate on ('all': every problem)")
        ] = "test",
        samples: Annotated[
            int | None, typer.Option("--samples", help="completions per problem (n)")
        ] = None,
        k: Annotated[
            list[int] | None,
            typer.Option("--k", help="pass@k to report (repeatable; k <= samples)"),
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config",
                exists=True,
                dir_okay=False,
                help="PolicyEvalConfig YAML (sampling, backend, bootstrap)",
            ),
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", help="first N problems of the split")
        ] = None,
        name: Annotated[
            str | None, typer.Option("--name", help="the policy's name in reports")
        ] = None,
        sample_only: Annotated[
            bool,
            typer.Option(
                "--sample-only",
                help="sample into OUT/shards and stop (judge later, on a machine with a judge)",
            ),
        ] = False,
        engine: EngineOpt = None,
    ) -> None:
        """Sample, judge in the sandbox, report pass@k + length, Ruff and error-type diagnostics."""
        from pipeline.policy_eval.config import PolicyEvalConfig
        from pipeline.policy_eval.run import evaluate_policy

        given = {"model": model, "name": name, "samples": samples, "limit": limit, "k": k or None}
        base = (
            PolicyEvalConfig.from_yaml(config, model=model).model_dump()
            if config
            else {"model": model}
        )
        cfg = PolicyEvalConfig.model_validate(
            {
                **base,
                **{key: v for key, v in given.items() if v is not None},
                "split": None if split == "all" else split,
            }
        )
        cfg = cfg.model_copy(update={"sandbox": cfg.sandbox.with_engine(engine)})
        report = evaluate_policy(cfg, problems, out, sample_only=sample_only)
        if sample_only:
            typer.echo(json.dumps(report, indent=2, default=str))
            return
        typer.echo((out / "report.md").read_text())
        typer.echo(
            json.dumps({key: v for key, v in report["pass"].items() if key.startswith("pass@")})
        )

    @app.command("compare-policy-reports")
    def compare_cmd(
        reports: Annotated[
            list[Path], typer.Argument(help="report folders; the first is the baseline")
        ],
        out: Annotated[Path, typer.Option("--out", help="where comparison.json and .md go")] = Path(
            "."
        ),
        seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 0,
    ) -> None:
        """Policies side by side (pass@k, length, Ruff by severity, error types) with paired differences."""
        from pipeline.policy_eval.compare import write_comparison

        write_comparison(reports, out, seed=seed)
        typer.echo((out / "comparison.md").read_text())

    @app.command("rlvr-study")
    def rlvr_study_cmd(
        config: Annotated[
            Path,
            typer.Option(
                "--config", "-c", exists=True, dir_okay=False, help="study YAML in configs/rlvr/"
            ),
        ] = Path("configs/rlvr/demo.yaml"),
        engine: EngineOpt = None,
    ) -> None:
        """Base policy + RLVR per (reward, algorithm), each evaluated alike; one comparison table."""
        from flows.rlvr import rlvr_study

        out = rlvr_study(str(config), engine=engine)
        typer.echo(Path(out["out_dir"], "study.md").read_text())

    @app.command("check-references")
    def check_references_cmd(
        problems: Annotated[
            Path,
            typer.Option(
                "--problems",
                exists=True,
                dir_okay=False,
                help="problems Parquet (from `problems ingest`)",
            ),
        ],
        out: Annotated[
            Path, typer.Option("--out", help="folder for the verified set and the report")
        ],
        engine: EngineOpt = None,
    ) -> None:
        """Run every reference solution in the sandbox; quarantine problems whose reference fails."""
        from pipeline.judge.interface import SandboxSection
        from pipeline.problems.reference_check import check_references

        sandbox = SandboxSection(engine=engine or "docker")
        typer.echo(json.dumps(check_references(problems, out, sandbox=sandbox), indent=2))
