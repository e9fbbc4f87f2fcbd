"""`aletheia train (--config FILE | --recipe R --size S [--budget B])`.

Declared (`TRAIN_COMMAND`, pipeline/common/stage_cli.py): its options are values here, its
body a few small steps. It checks what the user gave (the config's keys, the model path) before torch and
transformers are imported, so a mistake is one line within a second or two.
"""

from __future__ import annotations

import json
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
from pipeline.evaluate.cli import check_templates
from pipeline.judge.engine_option import ENGINE_OPTIONS

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


# The options that pick a zoo cell (configs/train/zoo/) instead of a config file.
CELL_FLAGS: dict[str, Extra] = {
    "recipe": option(
        str | None, "--recipe", help="a zoo recipe (configs/train/zoo/), e.g. grpo-think"
    ),
    "size": option(str | None, "--size", help="1.5b | 7b | 14b"),
    "budget": option(str | None, "--budget", help="grpo-think's budget: 4k | 8k | 16k"),
    "lora": option(
        bool, "--lora", default=False, help="the recipe's LoRA variant, where Aletheia has one"
    ),
    "snapshot": option(
        str | None,
        "--snapshot",
        help="another stored version of Aletheia's files for the recipe, e.g. grpo-think's "
        "4d57bde (docs/training.md)",
    ),
}
# The options over either (the file's keys or the cell's).
OVER_FLAGS: dict[str, Extra] = {
    "data": option(
        Path | None, "--data", help="published dataset folder (sets data.dir of either)"
    ),
    "model": option(
        str | None,
        "--model",
        help="base model to start from (default: the config's or the zoo cell's model)",
    ),
    "sets": option(
        list[str] | None,
        "--set",
        help="KEY=VALUE over the config or cell, e.g. optim.max_steps=10",
    ),
}
SHOW_FLAGS: dict[str, Extra] = {
    "show": option(
        bool,
        "--show",
        default=False,
        help="print the config (a cell's: and launch command); train nothing",
    ),
    "show_example": option(
        int | None,
        "--show-example",
        min=1,
        help="print the first N training examples as the trainer sees them (decoded prompt "
        "and loss tokens, counts, max_length cuts); loads the tokenizer only, trains nothing",
    ),
}
JUDGE_FLAGS = ("--engine", "engine"), ("--url", "url"), ("--token-file", "token_file")


def _from_file(given: Given, config: Path) -> Any:
    """The training config file with the options over it: they count over the file as over a
    cell (`--model X -c F` once trained F's model and said nothing of X)."""
    from pipeline.errors import read_mapping, validate
    from pipeline.train.config import TrainConfig
    from pipeline.train.recipes import merge, parse_sets

    x = given.extras
    zoo = [flag for flag in ("--size", "--budget", "--lora", "--snapshot") if x[flag[2:]]]
    if zoo:
        raise typer.BadParameter(f"{', '.join(zoo)}: picks a zoo cell, only with --recipe")
    out = given.paths["out"]
    over: dict = {"model": x["model"], "output_dir": out and str(out)}
    over = {key: v for key, v in over.items() if v is not None}
    over |= {"data": {"dir": str(x["data"])}} if x["data"] is not None else {}
    raw = merge(read_mapping(config, what="training config"), over)
    return validate(merge(raw, parse_sets(x["sets"] or [])), TrainConfig, config)


def _from_cell(given: Given) -> tuple[Any, Any]:
    """The zoo cell --recipe/--size/... picks, its config with the options over it."""
    from pipeline.train.recipes import Cell, cell_config, parse_sets

    x = given.extras
    if x["size"] is None:
        raise typer.BadParameter("--recipe needs --size (1.5b, 7b or 14b)")
    cell = Cell(x["recipe"], x["size"], x["budget"], x["lora"], x["snapshot"])  # type: ignore[arg-type]
    sets = parse_sets(x["sets"] or [])
    cfg = cell_config(
        cell, data_dir=x["data"], output_dir=given.paths["out"], model=x["model"], overrides=sets
    )
    return cfg, cell


def _show(cfg: Any, cell: Any) -> None:
    import yaml

    typer.echo(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    if cell is not None:
        from pipeline.train.recipes import launch_command

        typer.echo(f"# launch: {launch_command(cell)}")


def _with_judge(cfg: Any, given: Given) -> Any:
    """--engine/--url/--token-file over the RLVR rewards' sandbox; refused for a method that
    judges no program."""
    x = given.extras
    set_flags = [flag for flag, key in JUDGE_FLAGS if x[key]]
    if not set_flags:
        return cfg
    if cfg.method != "rlvr":
        verb = "judges" if len(set_flags) == 1 else "judge"
        raise typer.BadParameter(
            f"{' / '.join(set_flags)} {verb} RLVR rewards; method {cfg.method} judges no program"
        )
    sandbox = cfg.rlvr.sandbox.overridden(x["engine"], x["url"], x["token_file"])
    return cfg.model_copy(update={"rlvr": cfg.rlvr.model_copy(update={"sandbox": sandbox})})


def _check_inputs(cfg: Any, where: str, data_first: bool) -> None:
    """The model, the rows and the prompt templates, before the training libraries load;
    `data_first`: a missing demo folder says what to build before a missing model."""
    from pipeline.model_refs import require_model

    if data_first:
        _check_data(where, cfg.data.dir, cfg.data.config)
    require_model(cfg.model, f"{where}model")
    if not data_first:
        _check_data(where, cfg.data.dir, cfg.data.config)
    check_templates(f"{where}prompt.", cfg.prompt)


def _train(given: Given) -> None:
    x, config = given.extras, given.section_path
    if (config is None) == (x["recipe"] is None):
        raise typer.BadParameter("give exactly one of --config or --recipe (with --size)")
    if config is not None:
        cfg, cell, where = _from_file(given, config), None, f"{config}: "
    else:
        (cfg, cell), where = _from_cell(given), f"--recipe {x['recipe']} --size {x['size']}: "
    if x["show"]:
        _show(cfg, cell)
        return
    cfg = _with_judge(cfg, given)
    if x["show_example"] is not None:
        from pipeline.train.show_example import show_examples

        _check_inputs(cfg, where, data_first=True)
        typer.echo(show_examples(cfg, x["show_example"]))
        return
    _check_inputs(cfg, where, data_first=False)
    if cfg.method == "rlvr":  # the rewards' judge, reached before the model loads
        from pipeline.judge.availability import probe_judge

        probe_judge(cfg.rlvr.sandbox, languages=["python"])
    from pipeline.train.run import train

    typer.echo(json.dumps(train(cfg), indent=2, default=str))


TRAIN_COMMAND = StageCommand(
    name="train",
    help="Train a verifier (GRPO / DPO / SFT / RAFT) or a code policy (RLVR): a config file, "
    "or a zoo cell.",
    out=PathOption(("--out", "-o"), "output folder (default out/train/<cell>)", required=False),
    config=ConfigFile("pipeline.train.config:TrainConfig", "YAML in configs/train/"),
    extras={**CELL_FLAGS, **OVER_FLAGS, **SHOW_FLAGS, **ENGINE_OPTIONS},
    run=_train,
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, TRAIN_COMMAND)
