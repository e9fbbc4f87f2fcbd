"""Evaluation settings (YAML-loadable like the training configs). Defaults: Aletheia's protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

EVAL_SPLITS: tuple[str, ...] = ("heldout", "strong", "hard", "adv")


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    splits: list[str] = Field(default_factory=lambda: list(EVAL_SPLITS))
    # Which split of each evaluation config is scored: `test` (Aletheia's: up to 250 rows
    # per list size and language) or `full` (every row).
    split: Literal["test", "full"] = "test"
    k: int = Field(default=8, ge=1)  # listwise responses per instance: top-1 reads the first
    style: Literal["think", "instruct"] = (
        "think"  # the verifier prompt (pipeline.common.verifier_prompt)
    )
    prompt_template: str | None = None  # user-turn template file; our wording when None
    system_template: str | None = None  # instruct system-turn template file
    pairwise: bool = True  # round-robin pair prompts for lists of 3+ (Aletheia's ranking metrics)
    temperature: float = 0.6  # Aletheia's evaluation sampling
    top_p: float = 0.95
    max_new_tokens: int = Field(default=16384, ge=1)  # Aletheia's default budget
    limit: int | None = Field(default=None, ge=1)  # first N instances per split (smoke runs)
    seed: int = 0
    # A split whose share of invalid answers (listwise responses, or pair verdicts) is above
    # this is flagged in the report: its accuracy is mostly "no answer" and its ranking
    # metrics rest on few lists.
    invalid_flag_above: float = Field(default=0.5, ge=0.0, le=1.0)
    batch_size: int = Field(default=8, ge=1)  # transformers backend: sequences decoded together
    device: str | None = None  # transformers backend: cuda / cpu (default: cuda when present)
    dtype: str | None = None
    progress: bool = True  # a progress bar per split while responses are generated

    @model_validator(mode="before")
    @classmethod
    def _moved_variant(cls, data: Any) -> Any:
        if isinstance(data, dict) and "variant" in data:
            raise ValueError("variant is now style (think | instruct; no_think is now instruct)")
        return data

    @classmethod
    def from_yaml(cls, path: str | Path) -> EvalConfig:
        return cls.model_validate(yaml.safe_load(Path(path).read_text()) or {})
