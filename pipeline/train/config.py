"""Training run configs (YAML in configs/train/, validated here).

One `TrainConfig` drives every method: `method` picks the trainer and the matching
section (`grpo`, `dpo`, `sft`, `rlvr`) holds its knobs. Anything TRL offers that is not
modelled here goes in `trainer_overrides` and is passed to the TRL config unchanged, so
a new TRL option never needs a code change to try.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

Method = Literal["grpo", "dpo", "sft", "rlvr"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSettings(_Section):
    """Where the rows come from: a published dataset folder (one Parquet folder per config)."""

    dir: Path
    config: str  # train | mixed | dpo | mixed_dpo | train_questions
    limit: int | None = Field(default=None, ge=1)  # first N rows (smoke runs)


class LoraSettings(_Section):
    r: int = Field(default=16, ge=1)
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] | str = "all-linear"
    merge_on_save: bool = True  # also write a merged full model, loadable without peft


class OptimSettings(_Section):
    learning_rate: float = 1e-6
    max_steps: int = -1  # -1: run num_train_epochs
    num_train_epochs: float = 1.0
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    warmup_ratio: float = 0.0
    lr_scheduler_type: str = "cosine"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    bf16: bool | None = None  # None: TRL default (bf16 on)
    gradient_checkpointing: bool = False
    logging_steps: int = 1
    save_steps: int = 500
    save_total_limit: int | None = 2
    seed: int = 0
    use_cpu: bool = False


class VllmSettings(_Section):
    """GRPO generation through a `trl vllm-serve` process in vLLM's own environment.

    Untested here: vLLM cannot be installed on the CI machine. See docs/training.md.
    """

    enabled: bool = False
    mode: Literal["server", "colocate"] = "server"
    server_base_url: str | None = None  # e.g. http://gpu-node:8000
    server_host: str = "0.0.0.0"
    server_port: int = 8000
    server_timeout_s: float = 240.0
    gpu_memory_utilization: float = 0.3  # colocate mode only


class GrpoSettings(_Section):
    variant: Literal["think", "no_think"] = "think"
    num_generations: int = Field(default=8, ge=2)
    max_completion_length: int = 4096  # the reasoning-token budget
    temperature: float = 1.0
    top_p: float = 1.0
    beta: float = 0.0  # KL coefficient (0: no reference model, as in DAPO / Dr. GRPO)
    loss_type: str = "dapo"
    importance_sampling_level: Literal["token", "sequence"] = "token"  # sequence = GSPO
    epsilon: float = 0.2
    epsilon_high: float | None = 0.28
    mask_truncated_completions: bool = False
    scale_rewards: str = "group"
    rewards: dict[str, float] = Field(
        default_factory=lambda: {"accuracy": 1.0, "format": 0.5, "overlong": 1.0}
    )  # reward name -> weight
    overlong_buffer: int | None = None  # default: a quarter of the budget
    format_penalty: float = 1.0
    vllm: VllmSettings = Field(default_factory=VllmSettings)

    @property
    def buffer(self) -> int:
        return self.overlong_buffer or max(1, self.max_completion_length // 4)


class DpoSettings(_Section):
    beta: float = 0.1
    max_length: int | None = 8192
    loss_type: list[str] = Field(default_factory=lambda: ["sigmoid"])


class SftSettings(_Section):
    max_length: int | None = 8192
    completion_only_loss: bool = True


class SandboxSettings(_Section):
    pool_size: int = 4
    batch_timeout_s: float = 300.0  # one reward batch; past it the batch gets no reward signal
    max_failed_batches: int = 3  # consecutive failed batches before training stops loudly


class RlvrSettings(_Section):
    """Code-policy RLVR: a policy writes a program; the sandbox runs it on the problem's tests."""

    algorithm: Literal["grpo", "gspo"] = "grpo"
    language: Literal["python"] = "python"  # lint + extraction are Python-specific here
    num_generations: int = Field(default=8, ge=2)
    max_completion_length: int = 2048
    temperature: float = 1.0
    beta: float = 0.0
    loss_type: str | None = None  # default: dapo for grpo, grpo for gspo (the GSPO paper's)
    epsilon: float = 0.2
    epsilon_high: float | None = None
    rewards: dict[str, float] = Field(default_factory=lambda: {"combined": 1.0})
    lint_select: list[str] = Field(default_factory=lambda: ["E", "F", "W", "B"])
    lint_per_violation: float = 0.1  # lint penalty per violation, capped at -1
    lint_weight: float = 0.2  # weight of the lint term inside `combined`
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    vllm: VllmSettings = Field(default_factory=VllmSettings)


class TrainConfig(_Section):
    name: str = "run"
    method: Method
    model: str  # local folder or hub id
    output_dir: Path
    data: DataSettings
    lora: LoraSettings | None = None  # None: full fine-tuning
    optim: OptimSettings = Field(default_factory=OptimSettings)
    grpo: GrpoSettings = Field(default_factory=GrpoSettings)
    dpo: DpoSettings = Field(default_factory=DpoSettings)
    sft: SftSettings = Field(default_factory=SftSettings)
    rlvr: RlvrSettings = Field(default_factory=RlvrSettings)
    resume: bool = True  # continue from the newest checkpoint in output_dir after a crash
    trainer_overrides: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _data_fits_method(self) -> TrainConfig:
        wants = {
            "grpo": ("train", "mixed"),
            "dpo": ("dpo", "mixed_dpo"),
            "sft": ("dpo", "mixed_dpo"),
            "rlvr": ("train_questions",),
        }[self.method]
        if self.data.config not in wants:
            raise ValueError(
                f"data.config: method {self.method} reads one of {wants}, got {self.data.config!r}"
            )
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        path = Path(path)
        raw = yaml.safe_load(path.read_text()) or {}
        try:
            return cls.model_validate(raw)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from e
