"""`aletheia train (--config FILE | --recipe R --size S [--budget B])` and `aletheia evaluate (--model PATH | --responses FILE) --data DIR --out DIR`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(
        config: Annotated[
            Path | None,
            typer.Option(
                "--config", "-c", exists=True, dir_okay=False, help="YAML in configs/train/"
            ),
        ] = None,
        recipe: Annotated[
            str | None,
            typer.Option("--recipe", help="a zoo recipe (configs/train/zoo/), e.g. grpo-think"),
        ] = None,
        size: Annotated[str | None, typer.Option("--size", help="1.5b | 7b | 14b")] = None,
        budget: Annotated[
            str | None, typer.Option("--budget", help="grpo-think's budget: 4k | 8k | 16k")
        ] = None,
        lora: Annotated[
            bool, typer.Option("--lora", help="the recipe's LoRA variant, where Aletheia has one")
        ] = False,
        data: Annotated[
            Path | None, typer.Option("--data", help="published dataset folder (with --recipe)")
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="output folder (default out/train/<cell>)"),
        ] = None,
        model: Annotated[
            str | None,
            typer.Option(
                "--model", help="base model to start from (default: the zoo cell's model)"
            ),
        ] = None,
        sets: Annotated[
            list[str] | None,
            typer.Option("--set", help="KEY=VALUE over the cell's config, e.g. optim.max_steps=10"),
        ] = None,
        show: Annotated[
            bool,
            typer.Option(
                "--show", help="print the cell's config and launch command; train nothing"
            ),
        ] = False,
    ) -> None:
        """Train a verifier (GRPO / DPO / SFT / RAFT) or a code policy (RLVR): a config file, or a zoo cell."""
        from pipeline.train import train

        if (config is None) == (recipe is None):
            raise typer.BadParameter("give exactly one of --config or --recipe (with --size)")
        if config is not None:
            summary = train(config)
        else:
            from pipeline.train.recipes import Cell, cell_config, launch_command, parse_sets

            if size is None:
                raise typer.BadParameter("--recipe needs --size (1.5b, 7b or 14b)")
            cell = Cell(recipe, size, budget, lora)  # type: ignore[arg-type]
            cfg = cell_config(
                cell, data_dir=data, output_dir=out, model=model, overrides=parse_sets(sets or [])
            )
            if show:
                import yaml

                typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
                typer.echo(f"# launch: {launch_command(cell)}")
                return
            summary = train(cfg)
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
            Path | None, typer.Option("--model", help="model folder (merged LoRA or full weights)")
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
    ) -> None:
        """Evaluate a verifier on Heldout, Strong, Hard and Adv (Aletheia's protocol first); write report.json + report.md."""
        from pipeline.evaluate import EvalConfig, evaluate

        if (model is None) == (responses is None):
            raise typer.BadParameter("give exactly one of --model or --responses")

        cfg = EvalConfig.from_yaml(config) if config else EvalConfig()
        given = (("k", k), ("limit", limit), ("max_new_tokens", max_new_tokens))
        updates = {key: v for key, v in given if v is not None}
        cfg = cfg.model_copy(update=updates) if updates else cfg
        report = evaluate(model, data, out, cfg, responses=responses)
        typer.echo(Path(report["files"]["markdown"]).read_text())
