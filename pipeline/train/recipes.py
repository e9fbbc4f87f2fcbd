"""Aletheia's model zoo as a grid of training cells: recipe x size (x budget, x LoRA).

Each recipe is one file in `configs/train/zoo/<recipe>.yaml`: the TrainConfig fields every
cell shares (`config:`), then per size the base model and Aletheia's per-scale settings
(`sizes:` - batch, accumulation, vLLM colocate memory and tensor parallelism, the DeepSpeed
stage and process count it was launched with), and where it has them the LoRA variants
(`lora:`), reasoning budgets (`budgets:`) and other stored versions of Aletheia's files that
disagree with the default (`snapshots:`, picked with `--snapshot`). A cell is

    aletheia train --recipe grpo-think --size 7b --budget 4k --data DIR

which builds the TrainConfig from those layers (later wins): the recipe's `config`, the
snapshot's `config`, the size, the snapshot's size, the LoRA variant, the budget, then the
command's own `--data` / `--out` / `--model` / `--set`.
`python -m pipeline.train.recipes --table` prints the grid as docs/training.md shows it.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipeline.errors import UserError, describe
from pipeline.train.config import TrainConfig

ZOO_DIR = Path(__file__).resolve().parents[2] / "configs" / "train" / "zoo"
SIZES: tuple[str, ...] = ("1.5b", "7b", "14b")
ACCELERATE_CONFIGS = {"zero2": "configs/accelerate/deepspeed_zero2.yaml",
                      "zero3": "configs/accelerate/deepspeed_zero3.yaml",
                      "ddp": "configs/accelerate/multi_gpu_ddp.yaml"}  # fmt: skip
# The order of the grid: the released model's recipe first.
RECIPE_ORDER: tuple[str, ...] = (
    "grpo-think",
    "grpo-instruct",
    "dpo-think",
    "raft-think",
    "raft-instruct",
    "sft-think",
    "batchonline-grpo-think",
    "star-think",
    "restem-think",
    "dpo-instruct",
    "star-instruct",
    "restem-instruct",
    "genrm-think",
    "genrm-instruct",
)


class RecipeError(UserError):
    """A cell the zoo does not have, or a bad --set."""


@dataclass(frozen=True)
class Launch:
    deepspeed: str  # zero2 | zero3 | ddp
    num_processes: int
    source: str  # Aletheia's accelerate config it comes from

    @property
    def accelerate_config(self) -> str:
        return ACCELERATE_CONFIGS[self.deepspeed]


@dataclass(frozen=True)
class Cell:
    recipe: str
    size: str
    budget: str | None
    lora: bool
    snapshot: str | None = None  # another stored version of Aletheia's files (`snapshots:`)

    @property
    def name(self) -> str:
        parts = [self.recipe, self.size] + ([self.budget] if self.budget else [])
        parts += ["lora"] if self.lora else []
        return "-".join(parts + ([self.snapshot] if self.snapshot else []))


@cache
def _zoo_file(recipe: str) -> dict[str, Any]:
    path = ZOO_DIR / f"{recipe}.yaml"
    if not path.is_file():
        raise RecipeError(f"unknown recipe {recipe!r}; known: {', '.join(recipes())}")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or data.get("recipe") != recipe:
        raise RecipeError(f"{path}: expected a mapping with `recipe: {recipe}`")
    return data


def recipe_spec(recipe: str) -> dict[str, Any]:
    """The recipe's zoo file, parsed (a copy: callers may change it)."""
    return copy.deepcopy(_zoo_file(recipe))


def recipes() -> list[str]:
    found = sorted(p.stem for p in ZOO_DIR.glob("*.yaml"))
    return [r for r in RECIPE_ORDER if r in found] + [r for r in found if r not in RECIPE_ORDER]


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Nested dicts merged key by key; any other value in `over` replaces the base's."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _size_layer(spec: dict[str, Any], size: str) -> dict[str, Any]:
    recipe = spec["recipe"]
    sizes = spec.get("sizes") or {}
    if size not in sizes:
        raise RecipeError(
            f"--size {size}: recipe {recipe} has sizes {', '.join(sizes)} "
            "(Aletheia has no per-scale config for the others)"
        )
    return {k: v for k, v in sizes[size].items() if k not in ("source", "launch")}


def _lora_layer(spec: dict[str, Any], size: str, lora: bool) -> dict[str, Any]:
    if not lora:
        return {}
    variants = spec.get("lora") or {}
    if size not in variants:
        raise RecipeError(
            f"--lora: recipe {spec['recipe']} has a LoRA variant at "
            f"{', '.join(variants) or 'no size'}; Aletheia trains the others in full"
        )
    return {k: v for k, v in variants[size].items() if k != "source"}


def _snapshot_layers(
    spec: dict[str, Any], snapshot: str | None, size: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the snapshot's recipe-wide layer, its layer for `size`); empty without --snapshot."""
    if snapshot is None:
        return {}, {}
    snapshots = spec.get("snapshots") or {}
    if snapshot not in snapshots:
        have = "; ".join(f"{k} ({v.get('note', '')})" for k, v in snapshots.items()) or "none"
        raise RecipeError(
            f"--snapshot {snapshot}: recipe {spec['recipe']} has snapshots: {have} "
            "(the default follows the version docs/aletheia-conformance.md names)"
        )
    snap = snapshots[snapshot]
    sized = (snap.get("sizes") or {}).get(size, {})
    return snap.get("config") or {}, {k: v for k, v in sized.items() if k != "source"}


def _budget_layer(spec: dict[str, Any], budget: str | None) -> dict[str, Any]:
    budgets = spec.get("budgets") or {}
    if not budgets:
        if budget is not None:
            raise RecipeError(
                f"--budget: recipe {spec['recipe']} has one budget; --budget is for the "
                "GRPO-Think recipes"
            )
        return {}
    if budget is None:
        raise RecipeError(f"recipe {spec['recipe']} needs --budget ({', '.join(budgets)})")
    if budget not in budgets:
        raise RecipeError(f"--budget {budget}: recipe {spec['recipe']} has {', '.join(budgets)}")
    return {"grpo": {"max_completion_length": int(budgets[budget])}}


def parse_sets(pairs: list[str]) -> dict[str, Any]:
    """`key.sub=value` pairs (the value read as YAML) as one nested dict."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise RecipeError(f"--set {pair!r}: expected KEY=VALUE, e.g. optim.max_steps=10")
        node = out
        *parents, leaf = key.strip().split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise RecipeError(f"--set {pair!r}: {p} is already set to a value")
        node[leaf] = yaml.safe_load(raw)
    return out


def cell_dict(cell: Cell) -> dict[str, Any]:
    """The TrainConfig fields of a cell, before the command's own settings."""
    spec = _zoo_file(cell.recipe)
    size = _size_layer(spec, cell.size)
    snap_config, snap_size = _snapshot_layers(spec, cell.snapshot, cell.size)
    layers = [spec["config"], snap_config, size, snap_size,
              _lora_layer(spec, cell.size, cell.lora), _budget_layer(spec, cell.budget)]  # fmt: skip
    out: dict[str, Any] = {}
    for layer in layers:
        out = merge(out, layer)
    out["name"] = cell.name
    out["output_dir"] = f"out/train/{cell.name}"
    return out


def cell_config(
    cell: Cell,
    *,
    data_dir: str | Path | None = None,
    output_dir: str | Path | None = None,
    model: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> TrainConfig:
    """The cell's TrainConfig, with the command's data folder, output folder, model and --set."""
    fields = cell_dict(cell)
    if data_dir is not None:
        fields["data"]["dir"] = str(data_dir)
    if output_dir is not None:
        fields["output_dir"] = str(output_dir)
    if model is not None:
        fields["model"] = model
    fields = merge(fields, overrides or {})
    try:
        return TrainConfig.model_validate(fields)
    except ValidationError as e:
        raise RecipeError(f"cell {cell.name}: {describe(e, TrainConfig)}") from e


def launch(cell: Cell) -> Launch:
    size = _zoo_file(cell.recipe)["sizes"][cell.size]
    return Launch(**size["launch"])


def launch_command(cell: Cell, extra: str = "") -> str:
    """The accelerate command that runs the cell as Aletheia launched it (DeepSpeed stage, processes)."""
    lc = launch(cell)
    budget = f" --budget {cell.budget}" if cell.budget else ""
    lora = " --lora" if cell.lora else ""
    snapshot = f" --snapshot {cell.snapshot}" if cell.snapshot else ""
    return (
        f"accelerate launch --config_file {lc.accelerate_config} --num_processes {lc.num_processes} "
        f"-m aletheia train --recipe {cell.recipe} --size {cell.size}{budget}{lora}{snapshot}{extra}"
    )


def grid() -> list[Cell]:
    """Every cell of the zoo, the released model (GRPO-Think 7B 4k) first."""
    cells: list[Cell] = []
    for recipe in recipes():
        spec = _zoo_file(recipe)
        budgets = list(spec.get("budgets") or {}) or [None]
        for size in [s for s in SIZES if s in spec["sizes"]]:
            for budget in budgets:
                cells.append(Cell(recipe, size, budget, False))
            for budget in budgets if size in (spec.get("lora") or {}) else []:
                cells.append(Cell(recipe, size, budget, True))
    released = Cell("grpo-think", "7b", "4k", False)
    return sorted(cells, key=lambda c: c != released)  # stable: the rest keep their order


def _fmt_source(path: str) -> str:
    return f"`{path.removeprefix('src/configs/')}`"


def grid_table() -> str:
    """The grid as a Markdown table (docs/training.md; checked by tests/train/test_recipes.py)."""
    head = ("| cell | command | base model | batch x accum. | LoRA | DeepSpeed | Aletheia config |\n"
            "| --- | --- | --- | --- | --- | --- | --- |")  # fmt: skip
    lines = [head]
    for cell in grid():
        cfg = cell_config(cell)
        spec = _zoo_file(cell.recipe)
        src = spec["lora"][cell.size]["source"] if cell.lora else spec["sizes"][cell.size]["source"]
        lc = launch(cell)
        flags = f"--recipe {cell.recipe} --size {cell.size}"
        flags += (f" --budget {cell.budget}" if cell.budget else "") + (
            " --lora" if cell.lora else ""
        )
        lora = f"r {cfg.lora.r}, alpha {cfg.lora.alpha}" if cfg.lora else "full"
        lines.append(
            f"| {cell.name} | `{flags}` | `{cfg.model}` | "
            f"{cfg.optim.per_device_train_batch_size} x {cfg.optim.gradient_accumulation_steps} | "
            f"{lora} | {lc.deepspeed.replace('zero', 'ZeRO-')}, {lc.num_processes} GPUs | "
            f"{_fmt_source(src)} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # python -m pipeline.train.recipes --table
    if sys.argv[1:] != ["--table"]:
        sys.exit("usage: python -m pipeline.train.recipes --table")
    print(grid_table())
