"""`aletheia train (--config FILE | --recipe R --size S [--budget B])` and `aletheia evaluate (--model PATH | --responses FILE) --data DIR --out DIR`.

Both check what the user gave (the config's keys, the model path) before torch and
transformers are imported, so a mistake is one line within a second or two.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipeline.judge.engine_option import EngineOpt


def _check_templates(where: str, section: object) -> None:
    """A prompt template with a wrong placeholder fails now, not after the model has loaded."""
    pairs = [("prompt_template", "user"), ("system_template", "system")]
    given = [(key, kind, getattr(section, key, None)) for key, kind in pairs]
    if not any(path for _, _, path in given):
        return
    from pipeline.errors import UserError
    from pipeline.preflight import template_problem

    for key, kind, path in given:
        if path and (problem := template_problem(f"{where}{key}", path, kind)):
            raise UserError(problem)


def _check_data(where: str, data_dir: Path, config: str) -> None:
    """The rows to train on exist (pipeline.common.hub_folder.config_path's places), checked
    before the training libraries load."""
    from pipeline.errors import UserError, near_path

    if not data_dir.is_dir():
        raise UserError(
            f"{where}data.dir: no such folder {data_dir}{near_path(data_dir)}; build the "
            "dataset first (aletheia build-train) or point data.dir at one"
        )
    if not any(p.exists() for p in (data_dir / config, data_dir / f"{config}.parquet")):
        from pipeline.errors import did_you_mean

        have = sorted(p.name.removesuffix(".parquet") for p in data_dir.iterdir())
        raise UserError(
            f"{where}data.config: no {config!r} under {data_dir} (neither {config}/ nor "
            f"{config}.parquet){did_you_mean(config, have) if have else '; the folder is empty'}"
        )


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_cmd(
        config: Annotated[
            Path | None,
            typer.Option("--config", "-c", dir_okay=False, help="YAML in configs/train/"),
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
            typer.Option("--out", "-o", help="output folder (default out/train/<cell>)"),
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
        engine: EngineOpt = None,
    ) -> None:
        """Train a verifier (GRPO / DPO / SFT / RAFT) or a code policy (RLVR): a config file, or a zoo cell."""
        from pipeline.errors import load_config
        from pipeline.model_refs import require_model
        from pipeline.train.config import TrainConfig

        if (config is None) == (recipe is None):
            raise typer.BadParameter("give exactly one of --config or --recipe (with --size)")
        if config is not None:
            where = f"{config}: "
            cfg = load_config(config, TrainConfig, what="training config")
        else:
            from pipeline.train.recipes import Cell, cell_config, launch_command, parse_sets

            if size is None:
                raise typer.BadParameter("--recipe needs --size (1.5b, 7b or 14b)")
            where = f"--recipe {recipe} --size {size}: "
            cell = Cell(recipe, size, budget, lora)  # type: ignore[arg-type]
            cfg = cell_config(
                cell, data_dir=data, output_dir=out, model=model, overrides=parse_sets(sets or [])
            )
            if show:
                import yaml

                typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
                typer.echo(f"# launch: {launch_command(cell)}")
                return
        if engine is not None:
            if cfg.method != "rlvr":
                raise typer.BadParameter(
                    f"--engine judges RLVR rewards; method {cfg.method} judges no program"
                )
            sandbox = cfg.rlvr.sandbox.with_engine(engine)
            cfg = cfg.model_copy(update={"rlvr": cfg.rlvr.model_copy(update={"sandbox": sandbox})})
        require_model(cfg.model, f"{where}model")
        _check_data(where, cfg.data.dir, cfg.data.config)
        _check_templates(f"{where}prompt.", cfg.prompt)
        from pipeline.train.run import train

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
            Path,
            typer.Option("--out", "-o", help="where report.json, report.md and responses.jsonl go"),
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
            typer.Option("--config", "-c", dir_okay=False, help="EvalConfig YAML"),
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
        from pipeline.errors import load_config
        from pipeline.evaluate.config import EvalConfig
        from pipeline.model_refs import require_model

        if (model is None) == (responses is None):
            raise typer.BadParameter("give exactly one of --model or --responses")
        cfg = load_config(config, EvalConfig, what="evaluation config") if config else EvalConfig()
        _check_templates(f"{config}: " if config else "", cfg)
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
        from pipeline.evaluate.run import evaluate

        report = evaluate(model, data, out, cfg, responses=responses)
        typer.echo(Path(report["files"]["markdown"]).read_text())
