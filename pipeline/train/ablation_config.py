"""The ablation's config: `AblationConfig` (one YAML file, `aletheia ablation -c`) and how each
cell's training is launched (`Launcher`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.errors import UserError

ABLATION_RECIPES = ["grpo-think", "grpo-instruct", "dpo-think", "raft-think"]
# The paper's whole grid at one size: the four above, GRPO-Think at the other budgets,
# BatchOnline-GRPO and the two self-training baselines (configs/ablation/{1.5b,7b,14b}.yaml).
PAPER_CELLS = ABLATION_RECIPES + [
    "grpo-think@8k",
    "grpo-think@16k",
    "batchonline-grpo-think",
    "star-think",
    "restem-think",
]
EVAL_SPLITS = ["heldout", "strong", "hard", "adv"]


class Launcher(BaseModel):
    """How a cell's training runs: in this process (CPU, one GPU), or in its own
    `accelerate launch` with the zoo cell's DeepSpeed stage and process count (multi-GPU)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["in_process", "accelerate"] = Field(
        "in_process",
        description="in_process: in this process; accelerate: `accelerate launch` per cell.",
    )
    config_file: str | None = Field(
        None,
        description="accelerate: the config file; None = the zoo cell's (e.g. "
        'configs/accelerate/deepspeed_zero2.yaml); "none" = no file, accelerate\'s defaults.',
    )
    num_processes: int | None = Field(
        default=None, ge=1, description="accelerate: the process count; None = the zoo cell's."
    )
    args: list[str] = Field(
        default_factory=list, description="More `accelerate launch` options, e.g. --cpu."
    )


class AblationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("aletheia-ablation", description="The ablation's name.")
    out_dir: Path = Field(description="The cells, the table and the Pareto plot go here.")
    data_dir: Path = Field(
        description="The published folder: train, dpo, heldout, strong, hard, adv."
    )
    size: Literal["1.5b", "7b", "14b"] = Field("7b", description="The zoo's model size.")
    budget: str = Field(
        "4k", description="The budget of the recipes that have several (GRPO-Think)."
    )
    recipes: list[str] = Field(
        default_factory=lambda: list(ABLATION_RECIPES),
        description="The cells trained: a zoo recipe (at `budget` where it has budgets) or "
        "`recipe@budget` (e.g. grpo-think@16k); each cell's folder is its name with `-` for "
        "`@`.",
    )
    models: dict[Literal["think", "instruct"], str] = Field(
        default_factory=dict,
        description="Base model per family (think | instruct) instead of the zoo's (demo: "
        "tiny local models).",
    )
    train: dict[str, Any] = Field(
        default_factory=dict, description="TrainConfig fields over every cell."
    )
    recipe_train: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="TrainConfig fields per recipe (every cell of it), then per cell "
        "(`recipe@budget`), applied last.",
    )
    evaluation: dict[str, Any] = Field(
        default_factory=dict, description="EvalConfig fields, the same for every cell."
    )
    eval_splits: list[str] = Field(
        default_factory=lambda: list(EVAL_SPLITS), description="The eval configs scored."
    )
    eval_split: str | None = Field(
        None,
        description="The published split of the eval configs (listwise `test` / `full`); "
        "None = `test` when the folder has several splits, else its only one.",
    )
    pareto_metric: Literal["top1_accuracy", "majority_accuracy", "kendall_tau_b", "ndcg"] = Field(
        "top1_accuracy", description="The accuracy axis of the cost-vs-accuracy plot."
    )
    launcher: Launcher = Field(
        default_factory=Launcher, description="How each cell's training runs."
    )
    note: str | None = Field(
        None,
        description="A line printed on the Pareto plot and under the table's title (the demo: "
        "its model is random, its scores chance).",
    )

    @model_validator(mode="after")
    def _cells_are_known(self) -> AblationConfig:
        seen: dict[tuple[str, str | None], str] = {}
        for entry in self.recipes:
            key = self.cell(entry)
            if key in seen:
                raise ValueError(f"recipes: {entry!r} is the same cell as {seen[key]!r}")
            seen[key] = entry
        known = set(self.recipes) | {recipe for recipe, _ in seen}
        for key in self.recipe_train:
            if key not in known:
                raise ValueError(
                    f"recipe_train: {key!r} is neither a cell nor the recipe of one "
                    f"({', '.join(self.recipes)})"
                )
        return self

    def cell(self, entry: str) -> tuple[str, str | None]:
        """(recipe, budget) of a `recipes` entry: `recipe@budget`, or the recipe at `budget`
        where it has budgets (None where it has one)."""
        from pipeline.train.recipes import recipe_spec

        recipe, sep, budget = entry.partition("@")
        budgets = recipe_spec(recipe).get("budgets") or {}
        if sep and not budgets:
            raise UserError(f"recipes: {entry!r}: recipe {recipe} has one budget; drop @{budget}")
        if not budgets:
            return recipe, None
        chosen = budget if sep else self.budget
        if chosen not in budgets:
            raise UserError(f"recipes: {entry!r}: recipe {recipe} has budgets {', '.join(budgets)}")
        return recipe, chosen

    @classmethod
    def from_yaml(cls, path: str | Path) -> AblationConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise UserError(f"{path}: expected a mapping of AblationConfig fields")
        return cls.model_validate(data)

    def cell_dir(self, entry: str) -> Path:
        return self.out_dir / "cells" / entry.replace("@", "-")
