"""Evaluation settings (YAML-loadable like the training configs)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

EVAL_SPLITS: tuple[str, ...] = ("heldout", "strong", "hard", "adv")


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    splits: list[str] = Field(default_factory=lambda: list(EVAL_SPLITS))
    k: int = Field(default=8, ge=1)  # responses sampled per instance
    variant: Literal["think", "no_think"] = "think"
    temperature: float = 0.7
    top_p: float = 0.95
    max_new_tokens: int = Field(default=4096, ge=1)
    limit: int | None = Field(default=None, ge=1)  # first N instances per split (smoke runs)
    seed: int = 0
    batch_size: int = Field(default=8, ge=1)  # transformers backend: sequences decoded together
    device: str | None = None  # transformers backend: cuda / cpu (default: cuda when present)
    dtype: str | None = None

    @classmethod
    def from_yaml(cls, path: str | Path) -> EvalConfig:
        return cls.model_validate(yaml.safe_load(Path(path).read_text()) or {})
