"""What `evaluate-policy` samples and how it judges and summarises (one pydantic config)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.judge.interface import SandboxSection
from pipeline.sampling.config import BackendOptions, TransformersOptions


class BootstrapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resamples: int = Field(2000, ge=100, description="Bootstrap resamples.")
    confidence: float = Field(0.95, gt=0, lt=1, description="Confidence level of the intervals.")
    seed: int = Field(0, description="Seed of the resampling.")


class PolicyEvalConfig(BaseModel):
    """One policy on one split. The same settings for every policy of a study make them comparable."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="A local folder (a trained policy, LoRA merged) or a hub id.")
    name: str | None = Field(None, description="The name in reports; None = the model path.")
    backend: BackendOptions = Field(
        default_factory=TransformersOptions,
        description="How the policy generates (a policy source's backend options).",
    )
    split: str | None = Field(
        "test", description="Problems whose source_split is this; None = every problem."
    )
    limit: int | None = Field(
        None,
        ge=1,
        description="The first N problems of the split (by source_id), for quick runs.",
    )
    samples: int = Field(1, ge=1, description="Completions per problem (the n of pass@k).")
    k: list[int] = Field(
        default_factory=lambda: [1], description="The k of pass@k (each within 1..samples)."
    )
    temperature: float = Field(0.2, ge=0, description="Sampling temperature.")
    top_p: float = Field(0.95, gt=0, le=1, description="Nucleus sampling mass.")
    max_tokens: int = Field(512, ge=1, description="Most tokens per completion.")
    seed: int = Field(0, description="Sampling seed.")
    system_prompt: bool = Field(True, description="Send the system turn.")
    enable_thinking: bool | None = Field(
        False,
        description="Qwen3 chat templates think unless this is false; the paper's setting is "
        "off. None = pass nothing (e.g. a hosted API that rejects unknown request fields).",
    )
    lint_select: list[str] = Field(
        default_factory=lambda: ["E", "F", "W", "B"],
        description="Ruff rule prefixes counted, as RLVR's lint reward.",
    )
    time_limit_scale: float = Field(
        1.0, gt=0, description="Multiplies every time limit, as judge.time_limit_scale."
    )
    sandbox: SandboxSection = Field(
        default_factory=SandboxSection, description="The judge (engine, pool)."
    )
    bootstrap: BootstrapSettings = Field(
        default_factory=BootstrapSettings, description="Bootstrap confidence intervals."
    )
    progress: bool = Field(True, description="Show progress.")

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
