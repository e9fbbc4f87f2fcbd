"""What `evaluate-policy` samples and how it judges and summarises (one pydantic config)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.judge.interface import SandboxSection
from pipeline.sampling.config import BackendOptions, TransformersOptions


class BootstrapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resamples: int = Field(2000, ge=100)
    confidence: float = Field(0.95, gt=0, lt=1)
    seed: int = 0


class PolicyEvalConfig(BaseModel):
    """One policy on one split. The same settings for every policy of a study make them comparable."""

    model_config = ConfigDict(extra="forbid")

    model: str  # local folder (a trained policy, LoRA merged) or hub id
    name: str | None = None  # the name in reports (default: the model path)
    backend: BackendOptions = Field(default_factory=TransformersOptions)
    split: str | None = "test"  # problems whose source_split is this; None: every problem
    limit: int | None = Field(
        None, ge=1
    )  # first N problems of the split (by source_id), for quick runs
    samples: int = Field(1, ge=1)  # completions per problem (n of pass@k)
    k: list[int] = Field(default_factory=lambda: [1])
    temperature: float = Field(0.2, ge=0)
    top_p: float = Field(0.95, gt=0, le=1)
    max_tokens: int = Field(512, ge=1)
    seed: int = 0
    system_prompt: bool = True
    # Qwen3 chat templates think unless `enable_thinking` is false; the paper's setting is off.
    # None: pass nothing (e.g. a hosted API that rejects unknown request fields).
    enable_thinking: bool | None = False
    lint_select: list[str] = Field(
        default_factory=lambda: ["E", "F", "W", "B"]
    )  # as RLVR's lint reward
    time_limit_scale: float = Field(1.0, gt=0)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)  # the judge (engine, pool)
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    progress: bool = True

    @model_validator(mode="after")
    def _k_fits(self) -> PolicyEvalConfig:
        bad = [k for k in self.k if not 1 <= k <= self.samples]
        if bad:
            raise ValueError(f"k={bad}: every k must be within 1..samples={self.samples}")
        return self

    @property
    def display_name(self) -> str:
        return self.name or self.model

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: object) -> PolicyEvalConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping")  # noqa: TRY004 - bad content
        return cls.model_validate({**data, **{k: v for k, v in overrides.items() if v is not None}})
