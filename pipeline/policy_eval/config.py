"""What `evaluate-policy` samples and how it judges and summarises (`PolicyEvalConfig`), and the
RLVR study that trains and evaluates policies (`StudyConfig`, `rlvr-study`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.judge.config import SandboxSection
from pipeline.sampling.config import BackendOptions, TransformersOptions
from pipeline.train.config import PAPER_REWARDS


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
        description="Qwen3 chat templates think unless this is false; off is this project's "
        "choice, not a setting taken from the paper. None = pass nothing (e.g. a hosted API "
        "that rejects unknown request fields).",
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


class StudyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("rlvr-study", description="The study's name.")
    out_dir: Path = Field(description="work/, the runs, the table and the curves go here.")
    sources: list[str] = Field(
        default_factory=lambda: ["mbpp"],
        description="Problem specs (pipeline.problems.sources).",
    )
    check_references: bool = Field(
        True, description="Quarantine problems whose reference fails its own tests."
    )
    sandbox: SandboxSection = Field(
        default_factory=SandboxSection,
        description="The judge of the whole study: the reference check, the rewards (under "
        "train.rlvr.sandbox's own keys) and every evaluation (under evaluation.sandbox's).",
    )
    train_split: str = Field("train", description="The source split RLVR trains on.")
    eval_split: str = Field("test", description="The source split every policy is evaluated on.")
    train_limit: int | None = Field(
        None, ge=1, description="The first N train problems only (smoke runs)."
    )
    base_model: str | None = Field(
        None, description="A path or hub id; None = fit `fit_policy` on the train split."
    )
    fit_policy: dict[str, Any] | None = Field(
        None, description="PolicyFit fields (pipeline.models.policy) except name and dir."
    )
    evaluation: dict[str, Any] = Field(
        default_factory=dict,
        description="PolicyEvalConfig fields except model, name and split.",
    )
    train: dict[str, Any] = Field(
        default_factory=dict,
        description="TrainConfig fields; method, model, data and output_dir are set here.",
    )
    rewards: dict[str, dict[str, float]] = Field(
        default_factory=lambda: dict(PAPER_REWARDS),
        description="Reward formulation name -> RLVR rewards (name -> weight); default: the "
        "paper's three.",
    )
    algorithms: list[Literal["grpo", "gspo"]] = Field(
        default_factory=lambda: ["grpo", "gspo"],
        description="One trained policy per (reward, algorithm).",
    )
    enable_thinking: bool = Field(
        False,
        description="Qwen3 chat templates think unless told not to: off is this project's "
        "choice, not a setting taken from the paper, for training rollouts and evaluation "
        "alike (templates without the switch ignore it).",
    )
    algorithm_rlvr: dict[str, dict[str, Any]] = Field(
        default_factory=lambda: {"gspo": {"epsilon": 3e-4, "epsilon_high": 4e-4}},
        description="Per-algorithm `rlvr` settings on top of train.rlvr (GSPO wants far "
        "smaller clip ranges).",
    )
    verifier: dict[str, Any] | None = Field(
        None,
        description="The code verifier of the runs whose rewards name `verifier` "
        "(VerifierRewardSettings fields, train.rlvr.verifier); `model` null or left out: a "
        "tiny randomly initialised verifier built under work/ (pipeline.models.tiny, the "
        "demo's).",
    )

    @model_validator(mode="after")
    def _verifier_for_its_rewards(self) -> StudyConfig:
        named = [f for f, rewards in self.rewards.items() if "verifier" in rewards]
        if named and self.verifier is None:
            raise ValueError(
                f"rewards {named} name the `verifier` reward: give the study a `verifier` "
                "section (its model, or null for a tiny random one)"
            )
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> StudyConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping")  # noqa: TRY004 - bad content
        return cls.model_validate(data)

    def runs(self) -> list[tuple[str, str]]:
        return [(r, a) for r in self.rewards for a in self.algorithms]

    @property
    def work(self) -> Path:
        return self.out_dir / "work"
