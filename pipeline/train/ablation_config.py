"""The ablation's config: `AblationConfig` (one YAML file, `aletheia ablation -c`) and how each
cell's training is launched (`Launcher`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from pipeline.errors import UserError

ABLATION_RECIPES = ["grpo-think", "grpo-instruct", "dpo-think", "raft-think"]
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
        default_factory=lambda: list(ABLATION_RECIPES), description="The zoo recipes trained."
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
        default_factory=dict, description="TrainConfig fields per recipe, applied last."
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

    @classmethod
    def from_yaml(cls, path: str | Path) -> AblationConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise UserError(f"{path}: expected a mapping of AblationConfig fields")
        return cls.model_validate(data)

    def cell_dir(self, recipe: str) -> Path:
        return self.out_dir / "cells" / recipe
