"""`aletheia train (--config FILE | --recipe R --size S [--budget B])`.

It checks what the user gave (the config's keys, the model path) before torch and
transformers are imported, so a mistake is one line within a second or two.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipeline.evaluate.cli import check_templates
from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt

CONFIGS_DIR = Path(__file__).resolve().parents[2] / "configs"


def build_hint(data_dir: Path, configs_dir: Path = CONFIGS_DIR) -> str:
    """How to build the missing Hub folder `data_dir`: the run config in `configs_dir` whose
    `out_dir`/hub it is (the demo's: configs/demo.yaml), else the generic command."""
    import yaml

    want = data_dir.expanduser().resolve()
    for path in sorted(configs_dir.glob("*.yaml")):
        try:
            out = (yaml.safe_load(path.read_text()) or {}).get("out_dir")
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if isinstance(out, str) and (Path(out).expanduser().resolve() / "hub") == want:
            return f"build it first (aletheia build-train --config configs/{path.name})"
    return "build the dataset first (aletheia build-train) or point data.dir at one"


def _check_data(where: str, data_dir: Path, config: str) -> None:
    """The rows to train on exist (pipeline.common.hub_folder.config_path's places), checked
    before the training libraries load."""
    from pipeline.errors import UserError, near_path

    if not data_dir.is_dir():
        raise UserError(
            f"{where}data.dir: no such folder {data_dir}{near_path(data_dir)}; "
            f"{build_hint(data_dir)}"
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
        snapshot: Annotated[
            str | None,
            typer.Option(
                "--snapshot",
                help="another stored version of Aletheia's files for the recipe, e.g. "
                "grpo-think's 4d57bde (docs/training.md)",
            ),
        ] = None,
        data: Annotated[
            Path | None,
            typer.Option("--data", help="published dataset folder (sets data.dir of either)"),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="output folder (default out/train/<cell>)"),
        ] = None,
        model: Annotated[
            str | None,
            typer.Option(
                "--model",
                help="base model to start from (default: the config's or the zoo cell's model)",
            ),
        ] = None,
        sets: Annotated[
            list[str] | None,
            typer.Option(
                "--set", help="KEY=VALUE over the config or cell, e.g. optim.max_steps=10"
            ),
        ] = None,
        show: Annotated[
            bool,
            typer.Option(
                "--show", help="print the config (a cell's: and launch command); train nothing"
            ),
        ] = False,
        show_example: Annotated[
            int | None,
            typer.Option(
                "--show-example",
                min=1,
                help="print the first N training examples as the trainer sees them (decoded "
                "prompt and loss tokens, counts, max_length cuts); loads the tokenizer only, "
                "trains nothing",
            ),
        ] = None,
        engine: EngineOpt = None,
        url: UrlOpt = None,
        token_file: TokenFileOpt = None,
    ) -> None:
        """Train a verifier (GRPO / DPO / SFT / RAFT) or a code policy (RLVR): a config file, or a zoo cell."""
        from pipeline.errors import read_mapping, validate
        from pipeline.model_refs import require_model
        from pipeline.train.config import TrainConfig
        from pipeline.train.recipes import Cell, cell_config, launch_command, merge, parse_sets

        if (config is None) == (recipe is None):
            raise typer.BadParameter("give exactly one of --config or --recipe (with --size)")
        if config is not None:
            zoo = [f for f, v in (("--size", size), ("--budget", budget), ("--lora", lora),
                                  ("--snapshot", snapshot)) if v]  # fmt: skip
            if zoo:
                raise typer.BadParameter(f"{', '.join(zoo)}: picks a zoo cell, only with --recipe")
            where = f"{config}: "
            # The options count over the file as over a cell: `--model X -c F` once trained
            # F's model and said nothing of X.
            given: dict = {"model": model, "output_dir": out and str(out)}
            given = {key: v for key, v in given.items() if v is not None}
            given |= {"data": {"dir": str(data)}} if data is not None else {}
            raw = merge(read_mapping(config, what="training config"), given)
            cfg = validate(merge(raw, parse_sets(sets or [])), TrainConfig, config)
            if show:
                import yaml

                typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
                return
        else:
            if size is None:
                raise typer.BadParameter("--recipe needs --size (1.5b, 7b or 14b)")
            where = f"--recipe {recipe} --size {size}: "
            cell = Cell(recipe, size, budget, lora, snapshot)  # type: ignore[arg-type]
            cfg = cell_config(
                cell, data_dir=data, output_dir=out, model=model, overrides=parse_sets(sets or [])
            )
            if show:
                import yaml

                typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
                typer.echo(f"# launch: {launch_command(cell)}")
                return
        given = [
            f for f, v in (("--engine", engine), ("--url", url), ("--token-file", token_file)) if v
        ]
        if given and cfg.method != "rlvr":
            verb = "judges" if len(given) == 1 else "judge"
            raise typer.BadParameter(
                f"{' / '.join(given)} {verb} RLVR rewards; method {cfg.method} judges no program"
            )
        if given:
            sandbox = cfg.rlvr.sandbox.overridden(engine, url, token_file)
            cfg = cfg.model_copy(update={"rlvr": cfg.rlvr.model_copy(update={"sandbox": sandbox})})
        if show_example is not None:  # the data first: a missing demo folder says what to build
            _check_data(where, cfg.data.dir, cfg.data.config)
            require_model(cfg.model, f"{where}model")
            check_templates(f"{where}prompt.", cfg.prompt)
            from pipeline.train.show_example import show_examples

            typer.echo(show_examples(cfg, show_example))
            return
        require_model(cfg.model, f"{where}model")
        _check_data(where, cfg.data.dir, cfg.data.config)
        check_templates(f"{where}prompt.", cfg.prompt)
        if cfg.method == "rlvr":  # the rewards' judge, reached before the model loads
            from pipeline.judge.availability import probe_judge

            probe_judge(cfg.rlvr.sandbox, languages=["python"])
        from pipeline.train.run import train

        summary = train(cfg)
        typer.echo(json.dumps(summary, indent=2, default=str))
