"""The zoo grid: one command selects a cell, the docs table is the grid, bad cells are one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.config import load_run_config
from pipeline.train.recipes import (
    Cell,
    RecipeError,
    cell_config,
    grid,
    grid_table,
    launch_command,
    parse_sets,
    recipe_spec,
    recipes,
)

REPO = Path(__file__).resolve().parents[2]


def test_docs_training_md_has_the_grid_with_the_released_model_first() -> None:
    doc = (REPO / "docs" / "training.md").read_text()
    assert grid_table() in doc, "regenerate it: python -m pipeline.train.recipes --table"
    assert grid()[0] == Cell("grpo-think", "7b", "4k", False)
    first_row = grid_table().splitlines()[2]
    assert first_row.startswith("| grpo-think-7b-4k |")


def test_every_cell_validates_and_reads_the_full_build() -> None:
    hubs = {load_run_config(p).hub_dir for p in sorted((REPO / "configs").glob("*.yaml"))}
    names = set()
    for cell in grid():
        cfg = cell_config(cell)
        assert cfg.data.dir in hubs, (cell.name, cfg.data.dir)
        assert cfg.name == cell.name and str(cfg.output_dir) == f"out/train/{cell.name}"
        names.add(cell.name)
    assert len(names) == len(grid())  # every cell has its own name and folder
    assert set(recipes()) == {"grpo-think", "grpo-instruct", "dpo-think", "raft-think",
                              "raft-instruct", "sft-think", "batchonline-grpo-think",
                              "star-think", "restem-think", "dpo-instruct", "star-instruct",
                              "restem-instruct", "genrm-think", "genrm-instruct"}  # fmt: skip


def test_layers_apply_in_order(tmp_path: Path) -> None:
    cell = Cell("grpo-think", "14b", "16k", True)
    cfg = cell_config(
        cell,
        data_dir=tmp_path,
        output_dir=tmp_path / "o",
        model="local/model",
        overrides=parse_sets(["optim.max_steps=7", "grpo.vllm.enabled=false", "data.limit=3"]),
    )
    assert cfg.grpo.max_completion_length == 16384  # budget layer
    assert cfg.optim.per_device_train_batch_size == 2  # LoRA layer over the size's 1
    assert (cfg.optim.max_steps, cfg.grpo.vllm.enabled, cfg.data.limit) == (7, False, 3)
    assert (cfg.data.dir, cfg.output_dir, cfg.model) == (tmp_path, tmp_path / "o", "local/model")
    assert cfg.grpo.vllm.gpu_memory_utilization == 0.55  # kept from the LoRA layer
    # The zoo file itself is not changed by resolving a cell.
    assert recipe_spec("grpo-think")["sizes"]["14b"]["optim"]["per_device_train_batch_size"] == 1


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (Cell("grpo-think", "7b", None, False), "needs --budget"),
        (Cell("grpo-think", "7b", "32k", False), "--budget 32k"),
        (Cell("dpo-think", "7b", "4k", False), "has one budget"),
        (Cell("sft-think", "1.5b", None, False), "has sizes 7b, 14b"),
        (Cell("dpo-think", "7b", None, True), "LoRA variant at no size"),
        (Cell("grpo-think", "1.5b", "4k", True), "LoRA variant at 7b, 14b"),
        (Cell("ppo", "7b", None, False), "unknown recipe 'ppo'"),
    ],
)
def test_a_cell_the_zoo_lacks_is_one_clear_error(cell: Cell, message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        cell_config(cell)


def test_parse_sets_reads_yaml_values() -> None:
    assert parse_sets(["a.b=1", "a.c=true", "d=[1, 2]", "e=x"]) == {
        "a": {"b": 1, "c": True}, "d": [1, 2], "e": "x"}  # fmt: skip
    with pytest.raises(RecipeError, match="expected KEY=VALUE"):
        parse_sets(["novalue"])


def test_launch_command_is_aletheias_stage_and_processes() -> None:
    cmd = launch_command(Cell("grpo-think", "7b", "4k", False))
    assert cmd == (
        "accelerate launch --config_file configs/accelerate/deepspeed_zero2.yaml --num_processes 4 "
        "-m aletheia train --recipe grpo-think --size 7b --budget 4k"
    )
    assert (REPO / "configs/accelerate/deepspeed_zero2.yaml").is_file()


def test_cli_show_prints_the_cell_and_its_launch(tmp_path: Path) -> None:
    from aletheia.cli import app

    res = CliRunner().invoke(
        app,
        ["train", "--recipe", "raft-think", "--size", "7b", "--data", str(tmp_path),
         "--set", "raft.episodes=2", "--show"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    body, _, launch = res.output.rpartition("# launch: ")
    cfg = yaml.safe_load(body)
    assert (cfg["method"], cfg["model"], cfg["raft"]["episodes"]) == (
        "raft", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 2)  # fmt: skip
    assert cfg["data"]["dir"] == str(tmp_path)
    assert "--num_processes 4" in launch and "--recipe raft-think --size 7b" in launch


def test_cli_needs_config_or_recipe() -> None:
    from aletheia.cli import app

    res = CliRunner().invoke(app, ["train", "--size", "7b"])
    assert res.exit_code != 0 and "exactly one of --config or --recipe" in res.output
    res = CliRunner().invoke(app, ["train", "--recipe", "grpo-think"])
    assert res.exit_code != 0 and "--recipe needs --size" in res.output
