"""`aletheia evaluate (--model PATH | --responses FILE) --data DIR --out DIR`.

Declared (`EVALUATE_COMMAND`, pipeline/common/stage_cli.py): its options are values here, its
body a few small steps. It checks what the user gave (the config's keys, the model path)
before torch and transformers are imported, so a mistake is one line within a second or two.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def check_templates(where: str, section: object) -> None:
    """A prompt template with a wrong placeholder, or a checkout of Aletheia that cannot give
    its prompts (`aletheia_src`), fails now, not after the model has loaded."""
    pairs = [
        ("prompt_template", "user"),
        ("system_template", "system"),
        ("aletheia_src", "aletheia"),
    ]
    given = [(key, kind, getattr(section, key, None)) for key, kind in pairs]
    if not any(path for _, _, path in given):
        return
    from pipeline.common.verifier_prompt import template_problem
    from pipeline.errors import UserError

    for key, kind, path in given:
        styles = (getattr(section, "style", "think"),)
        if path and (problem := template_problem(f"{where}{key}", path, kind, styles)):
            raise UserError(problem)


# The evaluation's settings: the run config's `evaluate:` section, or a file of them alone.
SETTINGS = ConfigFile(
    "pipeline.evaluate.config:EvalConfig",
    "YAML of the evaluation's settings alone (EvalConfig; or --config)",
    section="evaluate",
    what="evaluation config",
    note="its model unless --model or --responses",
)

# The flags over the settings (None: unset, the settings' value stands). Typer options rather
# than FieldOptions: the config module loads pyarrow, and `evaluate --help` needs none.
FIELD_FLAGS: dict[str, Extra] = {
    "k": option(int | None, "--k", help="responses per instance (overrides the config)"),
    "limit": option(int | None, "--limit", help="first N instances per split"),
    "split": option(
        str | None,
        "--split",
        help="which split of each eval config: test (default, Aletheia's) or full",
    ),
    "max_new_tokens": option(
        int | None, "--max-new-tokens", help="response budget (overrides the config)"
    ),
}
BACKEND_FLAG = option(
    str | None,
    "--backend",
    help="how to generate (overrides the config): transformers | vllm | a server URL "
    "(OpenAI-compatible, e.g. vLLM) | a YAML mapping such as "
    "'{type: openai, base_url: URL, concurrency: 64}'",
)


def _settings(given: Given) -> tuple[Any, Path | None]:
    """The evaluation's settings (EvalConfig) and the model they name, if any: the run
    config's `evaluate:` section (its model too), the section file, or the defaults."""
    from pipeline.errors import UserError

    path = given.run_config_path
    if path is None:
        return given.config(), None
    section = given.run_config().evaluate
    if section is None:
        raise UserError(
            f"--config {path}: the run config has no `evaluate:` section; add one, or give "
            "the settings alone as --stage-config"
        )
    return section.eval_config(), Path(section.model)  # the model the build's evaluation scores


def _overridden(cfg: Any, given: Given) -> Any:
    """The settings with the flags the user set over them; validated, so a wrong --split is a
    one-line error."""
    updates = {key: given.extras[key] for key in FIELD_FLAGS}
    updates = {key: v for key, v in updates.items() if v is not None}
    if given.extras["backend"] is not None:
        from pipeline.evaluate.config import backend_option

        try:
            updates["backend"] = backend_option(given.extras["backend"])
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--backend") from None
    return type(cfg).model_validate(cfg.model_dump() | updates) if updates else cfg


def _check_model(model: Path | None, cfg: Any, given: Given) -> None:
    """The model folder exists, or the server that serves it answers: before any split is
    read or file written, so a dead server is one line, not 86 s of retries, a traceback and
    a partial generations file."""
    from pipeline.model_refs import require_model, require_served

    if model is not None and cfg.backend.type == "transformers":  # a served name is no path
        require_model(model, "--model")
    served = getattr(cfg.backend, "base_url", None)
    if model is None or not served or cfg.backend.serve is not None:
        return
    if given.extras["backend"] is not None:
        key = "--backend"
    elif given.run_config_path:  # the run config's evaluate: section
        key = f"{given.run_config_path}: evaluate.backend.base_url"
    else:
        key = f"{given.section_path}: backend.base_url"
    require_served(key, served, str(model), cfg.backend.api_key_env)


def _run_evaluation(
    model: Path | None, data: Path, out: Path, cfg: Any, responses: Path | None, partial: bool
) -> None:
    """Score the verifier and print a few lines and where the report is (the whole report
    would scroll past)."""
    from pipeline.evaluate.report import summary
    from pipeline.evaluate.stage import EvaluateCall, run_evaluation

    given = {"model": model and str(model), "hub_dir": data, "responses": responses}
    call = EvaluateCall.model_validate(cfg.model_dump() | given | {"allow_partial": partial})
    report = run_evaluation(call, out)  # EVALUATE: its marker decides
    typer.echo(summary(report))


def _evaluate(given: Given) -> None:
    from pipeline.evaluate.run import refuse_a_stage_folder

    cfg, section_model = _settings(given)
    model, responses, out = given.paths["model"], given.paths["responses"], given.paths["out"]
    if model is None and responses is None:
        model = section_model
    if (model is None) == (responses is None):
        raise typer.BadParameter("give exactly one of --model or --responses")
    assert out is not None and given.paths["data"] is not None
    refuse_a_stage_folder(out)
    where = given.run_config_path or given.section_path
    check_templates(f"{where}: " if where else "", cfg)
    cfg = _overridden(cfg, given)
    _check_model(model, cfg, given)
    partial = given.extras["allow_partial"]
    _run_evaluation(model, given.paths["data"], out, cfg, responses, partial)


EVALUATE_COMMAND = StageCommand(
    name="evaluate",
    help="Evaluate a verifier on Heldout, Strong, Hard and Adv (Aletheia's protocol first); "
    "write report.json + report.md.",
    inputs={
        "data": PathOption(
            ("--data",), "dataset folder, a folder per config", exists=True, file_okay=False
        ),
        "model": PathOption(
            ("--model",),
            "model folder (merged LoRA or full weights); with --backend URL, the served name",
            required=False,
        ),
        "responses": PathOption(
            ("--responses",),
            "score responses generated elsewhere (JSONL/Parquet, docs/training.md) without a model",
            required=False,
            exists=True,
            dir_okay=False,
        ),
    },
    out=PathOption(
        ("--out", "-o"), "where report.json, report.md, responses.jsonl (+ .generation.json) go"
    ),
    config=SETTINGS,
    extras={
        "allow_partial": option(
            bool,
            "--allow-partial",
            default=False,
            help="with --responses: score a file that leaves rows of a split unanswered "
            "(refused otherwise; the report gives each split's coverage)",
        ),
        **FIELD_FLAGS,
        "backend": BACKEND_FLAG,
    },
    run=_evaluate,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, EVALUATE_COMMAND)
