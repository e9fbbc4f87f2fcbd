"""`aletheia ablation --config FILE`: the ablation flow run directly (Prefect starts a temporary
local API), or `--plan` to list its cells and their state without training anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("ablation")
    def ablation_cmd(
        config: Annotated[
            Path,
            typer.Option(
                "--config",
                "-c",
                exists=True,
                dir_okay=False,
                help="ablation YAML in configs/ablation/",
            ),
        ] = Path("configs/ablation/demo.yaml"),
        plan: Annotated[
            bool,
            typer.Option("--plan", help="list each cell (base model, batch, state); train nothing"),
        ] = False,
    ) -> None:
        """Aletheia's ablation at one size: train GRPO-Think, GRPO-Instruct, DPO-Think, RAFT; evaluate each alike; one table + Pareto plot."""
        from pipeline.train.ablation import AblationConfig, read_cell, train_config

        cfg = AblationConfig.from_yaml(config)
        if plan:
            for recipe in cfg.recipes:
                t = train_config(cfg, recipe)
                o = t.optim
                typer.echo(
                    f"{t.name}: {t.method}, {t.model}, batch {o.per_device_train_batch_size} x "
                    f"{o.gradient_accumulation_steps}, {'LoRA' if t.lora else 'full'} -> "
                    f"{cfg.cell_dir(recipe)} [{read_cell(cfg, recipe)['status']}]"
                )
            return
        from flows.ablation import aletheia_ablation

        out = aletheia_ablation(str(config))
        typer.echo(Path(out["files"]["comparison.md"]).read_text())
