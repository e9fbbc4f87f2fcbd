"""`aletheia train --config FILE` and `aletheia evaluate (--model PATH | --responses FILE) --data DIR --out DIR`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(
        config: Annotated[
            Path,
            typer.Option(
                "--config", "-c", exists=True, dir_okay=False, help="YAML in configs/train/"
            ),
        ],
    ) -> None:
        """Train a verifier (GRPO / DPO / SFT) or a code policy (RLVR) as the config says."""
        from pipeline.train import train

        summary = train(config)
        typer.echo(json.dumps(summary, indent=2, default=str))

    @app.command("evaluate")
    def evaluate_cmd(
        data: Annotated[
            Path,
            typer.Option(
                "--data", exists=True, file_okay=False, help="dataset folder, a folder per config"
            ),
        ],
        out: Annotated[
            Path, typer.Option("--out", help="where report.json, report.md and responses.jsonl go")
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
        config: Annotated[
            Path | None,
            typer.Option("--config", "-c", exists=True, dir_okay=False, help="EvalConfig YAML"),
        ] = None,
        k: Annotated[
            int | None, typer.Option("--k", help="responses per instance (overrides the config)")
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", help="first N instances per split")
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
        from pipeline.evaluate import EvalConfig, evaluate

        if (model is None) == (responses is None):
            raise typer.BadParameter("give exactly one of --model or --responses")

        cfg = EvalConfig.from_yaml(config) if config else EvalConfig()
        given = (("k", k), ("limit", limit), ("max_new_tokens", max_new_tokens))
        updates = {key: v for key, v in given if v is not None}
        if backend is not None:
            from pipeline.evaluate.config import backend_option

            try:
                updates["backend"] = backend_option(backend)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--backend") from None
        cfg = cfg.model_copy(update=updates) if updates else cfg
        report = evaluate(model, data, out, cfg, responses=responses)
        typer.echo(Path(report["files"]["markdown"]).read_text())
