"""`aletheia evaluate-policy` and `compare-policy-reports`.

`evaluate-policy` is declared (`EVALUATE_POLICY_COMMAND`, pipeline/common/stage_cli.py): its
options are values here, its body a few small steps. Its flags that restate
`PolicyEvalConfig` fields are typer options rather than `FieldOption`s: the config module
loads pyarrow, and a dead judge engine must answer before it does.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.common.stage_cli import (
    ConfigFile,
    Extra,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
    option,
)
from pipeline.judge.engine_option import ENGINE_OPTIONS

# The flags that restate PolicyEvalConfig fields (None: unset, the file's value stands).
FIELD_FLAGS: dict[str, Extra] = {
    "samples": option(int | None, "--samples", min=1, help="completions per problem (n)"),
    "k": option(list[int] | None, "--k", help="pass@k to report (repeatable; k <= samples)"),
    "max_tokens": option(
        int | None,
        "--max-tokens",
        min=1,
        help="completion budget per sample (default 512, cut to what the model's context "
        "leaves after the longest prompt)",
    ),
    "temperature": option(float | None, "--temperature", min=0, help="sampling temperature"),
    "top_p": option(float | None, "--top-p", min=0, max=1, help="nucleus sampling mass"),
    "seed": option(int | None, "--seed", help="sampling seed"),
    "limit": option(int | None, "--limit", min=1, help="first N problems of the split"),
    "name": option(str | None, "--name", help="the policy's name in reports"),
}


def _problems_file(given: Given) -> Path:
    from pipeline.errors import UserError, near_path

    problems = given.paths["problems"]
    assert problems is not None
    if not problems.is_file():
        raise UserError(f"--problems: no such file {problems}{near_path(problems)}")
    return problems


def _sandbox(given: Given, raw: dict) -> Any:
    """The file's `sandbox:` section with --engine/--url/--token-file over it."""
    from pipeline.errors import validate
    from pipeline.judge.config import SandboxSection

    config = given.section_path
    where = f"{config}: sandbox" if config else "evaluate-policy options"
    sandbox = validate(raw.get("sandbox") or {}, SandboxSection, where)
    extras = given.extras
    return sandbox.overridden(extras["engine"], extras["url"], extras["token_file"])


def _policy_config(given: Given, raw: dict, sandbox: Any) -> Any:
    """The file's keys, the flags the user set over them, validated once. Only what the file
    and the flags set counts as set: an unset max_tokens may be cut to the model's context,
    a chosen one never is."""
    from pipeline.errors import validate
    from pipeline.policy_eval.config import PolicyEvalConfig

    split = given.extras["split"]
    flags = {key: given.extras[key] for key in FIELD_FLAGS}  # an unset --k: None or []
    merged = {**raw, **{key: v for key, v in flags.items() if v is not None and v != []}}
    merged.update(model=given.extras["model"], split=None if split == "all" else split)
    cfg = validate(merged, PolicyEvalConfig, given.section_path or "evaluate-policy options")
    return cfg.model_copy(update={"sandbox": sandbox})


def _report(done: Any, out: Path) -> None:
    if done.cached:
        typer.echo(f"{out}: the same policy, problems and settings: reused (nothing ran)")
    typer.echo((out / "report.md").read_text())
    passes = done.stats["pass"].items()
    typer.echo(json.dumps({key: v for key, v in passes if key.startswith("pass@")}))


def _evaluate_policy(given: Given) -> None:
    from pipeline.errors import read_mapping
    from pipeline.model_refs import require_model

    problems, out, config = _problems_file(given), given.paths["out"], given.section_path
    assert out is not None
    raw = read_mapping(config, what="policy evaluation config") if config else {}
    require_model(given.extras["model"], "--model")
    sandbox = _sandbox(given, raw)
    sample_only = given.extras["sample_only"]
    if not sample_only:  # the judge is reached first: before pyarrow, torch and sampling
        from pipeline.judge.availability import probe_judge

        probe_judge(sandbox, languages=["python"])
    from pipeline.common.problem_splits import check_split

    cfg = _policy_config(given, raw, sandbox)
    check_split(problems, cfg.split)  # before torch loads: a mistake answers in a second
    if sample_only:  # half a run: no report, so no marker (the stage below reuses it)
        from pipeline.policy_eval.run import evaluate_policy

        sampled = evaluate_policy(cfg, problems, out, sample_only=True)
        typer.echo(json.dumps(sampled, indent=2, default=str))
        return
    from pipeline.policy_eval.stage import run_policy_eval

    _report(run_policy_eval(cfg, problems, out), out)  # POLICY_EVAL: the marker decides


EVALUATE_POLICY_COMMAND = StageCommand(
    name="evaluate-policy",
    help="Sample, judge in the sandbox, report pass@k + length, Ruff and error-type diagnostics.",
    inputs={
        "problems": PathOption(
            ("--problems", "-p"),
            "problems.parquet (e.g. `aletheia problems ingest --source mbpp`)",
            dir_okay=False,
        ),
    },
    out=PathOption(("--out", "-o"), "report folder"),
    config=ConfigFile(
        "pipeline.policy_eval.config:PolicyEvalConfig",
        "PolicyEvalConfig YAML (sampling, backend, bootstrap); options override it",
        what="policy evaluation config",
    ),
    extras={
        "model": option(
            str, "--model", default=inspect.Parameter.empty, help="policy: local folder or hub id"
        ),
        "split": option(
            str,
            "--split",
            default="test",
            help="source_split to evaluate on ('all': every problem)",
        ),
        **FIELD_FLAGS,
        "sample_only": option(
            bool,
            "--sample-only",
            default=False,
            help="sample into OUT/shards and stop (judge later, on a machine with a judge)",
        ),
        **ENGINE_OPTIONS,
    },
    run=_evaluate_policy,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, EVALUATE_POLICY_COMMAND)

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
