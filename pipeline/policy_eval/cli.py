"""`aletheia evaluate-policy` and `compare-policy-reports`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt


def register(app: typer.Typer) -> None:
    @app.command("evaluate-policy")
    def evaluate_policy_cmd(
        model: Annotated[str, typer.Option("--model", help="policy: local folder or hub id")],
        problems: Annotated[
            Path,
            typer.Option(
                "--problems",
                "-p",
                dir_okay=False,
                help="problems.parquet (e.g. `aletheia problems ingest --source mbpp`)",
            ),
        ],
        out: Annotated[Path, typer.Option("--out", "-o", help="report folder")],
        split: Annotated[
            str, typer.Option("--split", help="source_split to evaluate on ('all': every problem)")
        ] = "test",
        samples: Annotated[
            int | None, typer.Option("--samples", min=1, help="completions per problem (n)")
        ] = None,
        k: Annotated[
            list[int] | None,
            typer.Option("--k", help="pass@k to report (repeatable; k <= samples)"),
        ] = None,
        max_tokens: Annotated[
            int | None,
            typer.Option(
                "--max-tokens",
                min=1,
                help="completion budget per sample (default 512, cut to what the model's "
                "context leaves after the longest prompt)",
            ),
        ] = None,
        temperature: Annotated[
            float | None, typer.Option("--temperature", min=0, help="sampling temperature")
        ] = None,
        top_p: Annotated[
            float | None, typer.Option("--top-p", min=0, max=1, help="nucleus sampling mass")
        ] = None,
        seed: Annotated[int | None, typer.Option("--seed", help="sampling seed")] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config",
                "-c",
                dir_okay=False,
                help="PolicyEvalConfig YAML (sampling, backend, bootstrap); options override it",
            ),
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", min=1, help="first N problems of the split")
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
        url: UrlOpt = None,
        token_file: TokenFileOpt = None,
    ) -> None:
        """Sample, judge in the sandbox, report pass@k + length, Ruff and error-type diagnostics."""
        from pipeline.errors import UserError, near_path, read_mapping, validate
        from pipeline.judge.config import SandboxSection
        from pipeline.model_refs import require_model

        if not problems.is_file():
            raise UserError(f"--problems: no such file {problems}{near_path(problems)}")
        given = {
            "name": name,
            "samples": samples,
            "limit": limit,
            "k": k or None,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "seed": seed,
        }
        # Only what the file and the options set counts as set: an unset max_tokens may be
        # cut to the model's context, a chosen one never is.
        raw = read_mapping(config, what="policy evaluation config") if config else {}
        require_model(model, "--model")
        where = f"{config}: sandbox" if config else "evaluate-policy options"
        sandbox = validate(raw.get("sandbox") or {}, SandboxSection, where)
        sandbox = sandbox.overridden(engine, url, token_file)
        if not sample_only:  # the judge is reached first: before pyarrow, torch and sampling
            from pipeline.judge.availability import probe_judge

            probe_judge(sandbox, languages=["python"])
        from pipeline.common.problem_splits import check_split
        from pipeline.policy_eval.config import PolicyEvalConfig

        merged = {**raw, **{key: v for key, v in given.items() if v is not None}}
        merged.update(model=model, split=None if split == "all" else split)
        cfg = validate(merged, PolicyEvalConfig, config or "evaluate-policy options")
        check_split(problems, cfg.split)  # before torch loads: a mistake answers in a second
        cfg = cfg.model_copy(update={"sandbox": sandbox})
        if sample_only:  # half a run: no report, so no marker (the stage below reuses it)
            from pipeline.policy_eval.run import evaluate_policy

            sampled = evaluate_policy(cfg, problems, out, sample_only=True)
            typer.echo(json.dumps(sampled, indent=2, default=str))
            return
        from pipeline.policy_eval.stage import run_policy_eval

        done = run_policy_eval(cfg, problems, out)  # POLICY_EVAL: the marker decides
        report = done.stats
        if done.cached:
            typer.echo(f"{out}: the same policy, problems and settings: reused (nothing ran)")
        typer.echo((out / "report.md").read_text())
        typer.echo(
            json.dumps({key: v for key, v in report["pass"].items() if key.startswith("pass@")})
        )

    @app.command("compare-policy-reports")
    def compare_cmd(
        reports: Annotated[
            list[Path], typer.Argument(help="report folders; the first is the baseline")
        ],
        out: Annotated[
            Path, typer.Option("--out", "-o", help="where comparison.json and .md go")
        ] = Path("."),
        seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 0,
    ) -> None:
        """Policies side by side (pass@k, length, Ruff by severity, error types) with paired differences."""
        from pipeline.policy_eval.compare import write_comparison

        write_comparison(reports, out, seed=seed)
        typer.echo((out / "comparison.md").read_text())
