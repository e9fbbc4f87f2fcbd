"""`aletheia evaluate (--model PATH | --responses FILE) --data DIR --out DIR`.

It checks what the user gave (the config's keys, the model path) before torch and
transformers are imported, so a mistake is one line within a second or two.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.common.stage_cli import ConfigFile


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
    "YAML of the evaluation's settings alone",
    section="evaluate",
    what="evaluation config",
)


def _run_section(path: Path) -> Any:
    """The `evaluate:` section of the run config at `path`, read as the build reads it."""
    from pipeline.common.stage_cli import read_run_config
    from pipeline.errors import UserError

    section = read_run_config(SETTINGS, path).evaluate
    if section is None:
        raise UserError(
            f"--config {path}: the run config has no `evaluate:` section; add one, or give "
            "the settings alone as --stage-config"
        )
    return section


def register(app: typer.Typer) -> None:
    @app.command("evaluate")
    def evaluate_cmd(
        data: Annotated[
            Path,
            typer.Option(
                "--data", exists=True, file_okay=False, help="dataset folder, a folder per config"
            ),
        ],
        out: Annotated[
            Path,
            typer.Option(
                "--out",
                "-o",
                help="where report.json, report.md, responses.jsonl (+ .generation.json) go",
            ),
        ],
        model: Annotated[
            Path | None,
            typer.Option(
                "--model",
                help="model folder (merged LoRA or full weights); with --backend URL, the served name",
            ),
        ] = None,
        responses: Annotated[
            Path | None,
            typer.Option(
                "--responses",
                exists=True,
                dir_okay=False,
                help="score responses generated elsewhere (JSONL/Parquet, docs/training.md) without a model",
            ),
        ] = None,
        allow_partial: Annotated[
            bool,
            typer.Option(
                "--allow-partial",
                help="with --responses: score a file that leaves rows of a split unanswered "
                "(refused otherwise; the report gives each split's coverage)",
            ),
        ] = False,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config",
                "-c",
                dir_okay=False,
                help="run config YAML (configs/demo.yaml): its `evaluate:` section, as the "
                "build's evaluation after publish reads it (its model unless --model or "
                "--responses)",
            ),
        ] = None,
        stage_config: Annotated[
            Path | None,
            typer.Option(
                "--stage-config",
                dir_okay=False,
                help="YAML of the evaluation's settings alone (EvalConfig; or --config)",
            ),
        ] = None,
        k: Annotated[
            int | None, typer.Option("--k", help="responses per instance (overrides the config)")
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", help="first N instances per split")
        ] = None,
        split: Annotated[
            str | None,
            typer.Option(
                "--split",
                help="which split of each eval config: test (default, Aletheia's) or full",
            ),
        ] = None,
        max_new_tokens: Annotated[
            int | None,
            typer.Option("--max-new-tokens", help="response budget (overrides the config)"),
        ] = None,
        backend: Annotated[
            str | None,
            typer.Option(
                "--backend",
                help="how to generate (overrides the config): transformers | vllm | a server URL "
                "(OpenAI-compatible, e.g. vLLM) | a YAML mapping such as "
                "'{type: openai, base_url: URL, concurrency: 64}'",
            ),
        ] = None,
    ) -> None:
        """Evaluate a verifier on Heldout, Strong, Hard and Adv (Aletheia's protocol first); write report.json + report.md."""
        from pipeline.evaluate.config import EvalConfig
        from pipeline.evaluate.run import refuse_a_stage_folder
        from pipeline.model_refs import require_model

        if config and stage_config:
            raise typer.BadParameter("give --config or --stage-config, not both")
        if config:
            section = _run_section(config)
            cfg = section.eval_config()
            if model is None and responses is None:
                model = Path(section.model)  # the model the build's evaluation scores
        elif stage_config:
            from pipeline.common.stage_cli import read_section_file

            cfg = read_section_file(SETTINGS, stage_config)
        else:
            cfg = EvalConfig()
        if (model is None) == (responses is None):
            raise typer.BadParameter("give exactly one of --model or --responses")
        refuse_a_stage_folder(out)
        where = config or stage_config
        check_templates(f"{where}: " if where else "", cfg)
        given = (("k", k), ("limit", limit), ("max_new_tokens", max_new_tokens), ("split", split))
        updates = {key: v for key, v in given if v is not None}
        if backend is not None:
            from pipeline.evaluate.config import backend_option

            try:
                updates["backend"] = backend_option(backend)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--backend") from None
        if updates:  # validated, so a wrong --split is a one-line error
            cfg = EvalConfig.model_validate(cfg.model_dump() | updates)
        if model is not None and cfg.backend.type == "transformers":  # a served name is no path
            require_model(model, "--model")
        served = getattr(cfg.backend, "base_url", None)
        if model is not None and served and cfg.backend.serve is None:
            from pipeline.model_refs import require_served

            # Before any split is read or file written: a dead server is one line, not 86 s
            # of retries, a traceback and a partial generations file.
            if backend is not None:
                key = "--backend"
            elif config:  # the run config's evaluate: section
                key = f"{config}: evaluate.backend.base_url"
            else:
                key = f"{stage_config}: backend.base_url"
            require_served(key, served, str(model), cfg.backend.api_key_env)
        from pipeline.evaluate.report import summary
        from pipeline.evaluate.stage import EvaluateCall, run_evaluation

        given = {"model": model and str(model), "hub_dir": data, "responses": responses}
        call = EvaluateCall.model_validate(
            cfg.model_dump() | given | {"allow_partial": allow_partial}
        )
        report = run_evaluation(call, out)  # EVALUATE: its marker decides
        # A few lines and where the report is: the whole report would scroll past.
        typer.echo(summary(report))
