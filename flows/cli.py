"""`aletheia build-train` / `build-eval`: the flows run directly, without a Prefect server.

Prefect runs them against a temporary local API (no server to start); the same code runs
as deployments on a server via prefect.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="run config YAML (see configs/)")]


def register(app: typer.Typer) -> None:
    @app.command("build-train")
    def build_train(config: ConfigOpt = Path("configs/demo.yaml")) -> None:
        """Build every config (train, ..., adv) and the Hub folder, like the deployment does."""
        from flows.build import build_aletheia_train

        out = build_aletheia_train(str(config))
        typer.echo(json.dumps({k: out[k] for k in ("hub_dir", "work_dir", "rows")}, indent=2))

    @app.command("build-eval")
    def build_eval(config: ConfigOpt = Path("configs/demo.yaml")) -> None:
        """Build the eval configs only (heldout, strong, hard, adv)."""
        from flows.build import build_aletheia_eval

        out = build_aletheia_eval(str(config))
        typer.echo(json.dumps({k: out[k] for k in ("heldout", "strong", "hard", "adv")}, indent=2))
