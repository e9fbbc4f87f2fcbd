"""The model sections of a run config: `PolicyFit` (a `policies:` entry: how one tiny policy is
fitted, pipeline/models/policy.py) and `TinyModelSection` (the demo's tiny random verifier)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pipeline.common.config import Section
from schemas.common import Language


class PolicyFit(BaseModel):
    """How to fit one tiny policy (a run config's `policies:` entry, or a test's)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The policy's name (its pool source's generator name).")
    dir: Path = Field(description="Where the model is written (and reused from).")
    languages: list[Language] = Field(
        default_factory=lambda: ["python", "cpp", "java"],
        description="Languages whose reference solutions it is fitted on.",
    )
    include_wrong: bool = Field(
        False, description="Also fit the wrong references: a noisier, weaker policy."
    )
    hidden_size: int = Field(64, ge=8, description="Model width.")
    num_layers: int = Field(2, ge=1, description="Transformer layers.")
    steps: int = Field(200, ge=1, description="Optimizer steps.")
    learning_rate: float = Field(3e-3, gt=0, description="AdamW learning rate.")
    batch_size: int = Field(32, ge=1, description="Sequences per step.")
    seed: int = Field(0, description="Seed of the weights and the batch order.")
    device: str = Field(
        "cpu",
        description='Where the fit runs: "cpu" (one thread: the same weights on any machine) '
        'or a torch device such as "cuda" (its float reductions differ, so it has its own key).',
    )


class TinyModelSection(Section):
    """A tiny random model built locally (no downloads): the demo's DPO verifier."""

    dir: Path = Field(
        Path(".cache/models/tiny-qwen2"),
        description="Where the model is built (reused when it holds a config.json).",
    )
    seed: int = Field(0, description="Seed of the random weights.")
