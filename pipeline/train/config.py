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

from pipeline.common.verifier_prompt import PromptSpec
from pipeline.judge.interface import SandboxSection
from pipeline.sampling.config import BackendOptions, TransformersOptions
from pipeline.train.rewards import aletheia_overlong_buffer

Method = Literal["grpo", "dpo", "sft", "raft", "rlvr"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSettings(_Section):
    """Where the rows come from: a published dataset folder (one Parquet folder per config)."""

    dir: Path
    config: str  # train | mixed | dpo | mixed_dpo | train_questions
    split: str | None = None  # None: the config's default (`train`; `test` for an eval set)
    limit: int | None = Field(default=None, ge=1)  # first N rows (smoke runs)


class LoraSettings(_Section):
    r: int = Field(default=16, ge=1)
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] | str = "all-linear"
    merge_on_save: bool = True  # also write a merged full model, loadable without peft


# Per-method optimiser defaults where a field is left out (None): Aletheia's method configs
# (src/configs/method/grpo.yaml, thinkdpo.yaml, sft.yaml, raft.yaml); rlvr keeps the project's own.
METHOD_OPTIM_DEFAULTS: dict[str, dict[str, Any]] = {
    "grpo": {"learning_rate": 1e-6, "lr_scheduler_type": "constant_with_warmup", "warmup_ratio": 0.05, "weight_decay": 0.01},
    "dpo": {"learning_rate": 5e-7, "lr_scheduler_type": "constant_with_warmup", "warmup_ratio": 0.05, "weight_decay": 0.01},
    "sft": {
        "learning_rate": 5e-5, "lr_scheduler_type": "cosine_with_min_lr",
        "lr_scheduler_kwargs": {"min_lr": 5e-6}, "warmup_ratio": 0.05, "weight_decay": 0.01,
    },
    "raft": {
        "learning_rate": 5e-5, "lr_scheduler_type": "cosine_with_min_lr",
        "lr_scheduler_kwargs": {"min_lr": 5e-6}, "warmup_ratio": 0.05, "weight_decay": 0.01,
    },
    "rlvr": {"learning_rate": 1e-6, "lr_scheduler_type": "cosine", "warmup_ratio": 0.0, "weight_decay": 0.0},
}  # fmt: skip


class OptimSettings(_Section):
    learning_rate: float | None = None  # None: the method's default (METHOD_OPTIM_DEFAULTS)
    max_steps: int = -1  # -1: run num_train_epochs
    num_train_epochs: float = 1.0
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    warmup_ratio: float | None = None
    lr_scheduler_type: str | None = None
    lr_scheduler_kwargs: dict[str, Any] | None = None
    weight_decay: float | None = None
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
    tensor_parallel_size: int = Field(default=1, ge=1)  # colocate mode only


class PromptSettings(_Section):
    """The verifier prompt (pipeline.common.verifier_prompt): style and optional template files."""

    style: Literal["think", "instruct"] = "think"
    prompt_template: str | None = None  # user-turn template file; our wording when None
    system_template: str | None = None  # instruct system-turn template file

    def spec(self) -> PromptSpec:
        return PromptSpec(
            style=self.style, template=self.prompt_template, system_template=self.system_template
        )


class GrpoSettings(_Section):
    """Defaults: Aletheia's GRPO method config (src/configs/method/grpo.yaml, grpo_training.py)."""

    num_generations: int = Field(default=16, ge=2)
    max_completion_length: int = 4096  # the reasoning-token budget (Aletheia: 4k / 8k / 16k)
    temperature: float = 1.0
    top_p: float = 1.0
    beta: float = 1e-3  # KL coefficient against a reference model ...
    sync_ref_model: bool = True  # ... that is re-synced to the policy (Aletheia's "dynamic" KL)
    ref_model_sync_steps: int = Field(default=100, ge=1)
    ref_model_mixup_alpha: float = 1.0  # 1.0: the reference becomes a copy of the policy
    loss_type: str = "dapo"
    importance_sampling_level: Literal["token", "sequence"] = "token"  # sequence = GSPO
    epsilon: float = 0.2
    epsilon_high: float | None = 0.28
    mask_truncated_completions: bool = True
    scale_rewards: str = "group"
    rewards: dict[str, float] = Field(
        default_factory=lambda: {"accuracy": 1.0, "format": 1.0, "overlong": 1.0}
    )  # reward name -> weight (Aletheia sums them unweighted)
    overlong_buffer: int | None = None  # default: Aletheia's, 1024 up to a 4096 budget, else 2048
    format_penalty: float = 1.0
    vllm: VllmSettings = Field(default_factory=VllmSettings)

    @model_validator(mode="before")
    @classmethod
    def _moved_variant(cls, data: Any) -> Any:
        if isinstance(data, dict) and "variant" in data:
            raise ValueError(
                "grpo.variant moved to prompt.style (think | instruct; no_think is now instruct)"
            )
        return data

    @property
    def buffer(self) -> int:
        if self.overlong_buffer is not None:
            return self.overlong_buffer
        return min(aletheia_overlong_buffer(self.max_completion_length), self.max_completion_length)


class DpoSettings(_Section):
    """Defaults: Aletheia's thinkdpo.yaml (the Instruct recipe, dpo_instruct.yaml, uses
    max_length 8192 and no reference sync)."""

    beta: float = 0.1
    max_length: int | None = 20480
    loss_type: list[str] = Field(default_factory=lambda: ["sigmoid"])
    sync_ref_model: bool = True
    ref_model_sync_steps: int = Field(default=100, ge=1)
    ref_model_mixup_alpha: float = 1.0


class SftSettings(_Section):
    """Defaults: Aletheia's sft.yaml (max_length 4096; loss on the response only)."""

    max_length: int | None = 4096
    completion_only_loss: bool = True


class RaftSettings(_Section):
    """RAFT: on-policy rejection-sampling fine-tuning (Aletheia's configs/method/raft.yaml and
    raft_training.py). Each episode samples `num_generations` responses per prompt from the
    current model, keeps only those whose answer is the gold letter (no negatives), and
    fine-tunes on them (loss on the response); the next episode samples from the result."""

    num_generations: int = Field(default=16, ge=1)  # responses sampled per prompt
    temperature: float = 1.0
    top_p: float = 1.0
    max_length: int = Field(default=20480, ge=1)  # SFT sequence cap (prompt + response)
    # Response budget; None: max_length - 4096 (Aletheia keeps 4096 tokens for the prompt).
    max_completion_length: int | None = Field(default=None, ge=1)
    keep_per_prompt: int = Field(default=1, ge=1)  # correct responses kept per prompt, at random
    episodes: int = Field(default=1, ge=1)  # each samples from the previous episode's model
    prompts_per_episode: int | None = Field(default=None, ge=1)  # a seeded sample of the rows
    completion_only_loss: bool = True
    # Our option (demo): responses must end in \boxed{X} with X a valid letter the model picks.
    constrain_answer: bool = False
    backend: BackendOptions = Field(default_factory=TransformersOptions)  # who samples

    @property
    def budget(self) -> int:
        if self.max_completion_length is not None:
            return self.max_completion_length
        if self.max_length <= 4096:
            raise ValueError(
                f"raft.max_length {self.max_length} leaves no response budget after Aletheia's "
                "4096 prompt tokens; set raft.max_completion_length"
            )
        return self.max_length - 4096


class SandboxSettings(SandboxSection):
    """The judge RLVR rewards come from: a run config's `sandbox:` section (engine, pool, image,
    http url) plus what training needs of it."""

    pool_size: int | None = Field(4, ge=1)
    batch_timeout_s: float = 300.0  # one reward batch; past it the batch gets no reward signal
    max_failed_batches: int = 3  # consecutive failed batches before training stops loudly
    time_limit_scale: float = Field(1.0, gt=0)  # as the judge stage's judge.time_limit_scale


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
    # Qwen3 chat templates think unless told not to; the paper's setting is off. None: pass
    # nothing (templates without the switch ignore it either way).
    enable_thinking: bool | None = False
    lint_select: list[str] = Field(default_factory=lambda: ["E", "F", "W", "B"])
    lint_per_violation: float = 0.1  # lint penalty per violation, capped at -1
    lint_weight: float = 0.2  # weight of the lint term inside `combined`
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    vllm: VllmSettings = Field(default_factory=VllmSettings)
    # Warn (log and run summary) when more than this share of GRPO groups has one reward for
    # every rollout: such a group has zero advantage and teaches nothing.
    zero_variance_warn_share: float = Field(0.5, ge=0.0, le=1.0)


class TrainConfig(_Section):
    name: str = "run"
    method: Method
    model: str  # local folder or hub id
    output_dir: Path
    data: DataSettings
    lora: LoraSettings | None = None  # None: full fine-tuning
    prompt: PromptSettings = Field(
        default_factory=PromptSettings
    )  # verifier methods (grpo, dpo, sft)
    optim: OptimSettings = Field(default_factory=OptimSettings)
    grpo: GrpoSettings = Field(default_factory=GrpoSettings)
    dpo: DpoSettings = Field(default_factory=DpoSettings)
    sft: SftSettings = Field(default_factory=SftSettings)
    raft: RaftSettings = Field(default_factory=RaftSettings)
    rlvr: RlvrSettings = Field(default_factory=RlvrSettings)
    resume: bool = True  # continue from the newest checkpoint in output_dir after a crash
    trainer_overrides: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _data_fits_method(self) -> TrainConfig:
        wants = {
            "grpo": ("train", "mixed"),
            "dpo": ("dpo", "mixed_dpo"),
            "sft": ("dpo", "mixed_dpo"),
            "raft": ("train", "mixed"),
            "rlvr": ("train_questions",),
        }[self.method]
        if self.data.config not in wants:
            raise ValueError(
                f"data.config: method {self.method} reads one of {wants}, got {self.data.config!r}"
            )
        return self

    @model_validator(mode="after")
    def _ref_sync_fits(self) -> TrainConfig:
        # TRL re-syncs only a full reference model: not under LoRA, and not without a KL term.
        sync = {"grpo": self.grpo.sync_ref_model, "dpo": self.dpo.sync_ref_model}.get(
            self.method, False
        )
        if sync and self.lora is not None:
            raise ValueError(
                f"{self.method}.sync_ref_model: TRL cannot re-sync the reference model of a LoRA run; "
                f"set {self.method}.sync_ref_model: false or lora: null"
            )
        if self.method == "grpo" and self.grpo.sync_ref_model and self.grpo.beta == 0.0:
            raise ValueError(
                "grpo.sync_ref_model: with beta 0 there is no reference model to sync; set it false"
            )
        return self

    def optim_value(self, name: str) -> Any:
        """An optimiser field: the config's value, else the method's default."""
        value = getattr(self.optim, name)
        return METHOD_OPTIM_DEFAULTS[self.method].get(name) if value is None else value

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        path = Path(path)
        raw = yaml.safe_load(path.read_text()) or {}
        try:
            return cls.model_validate(raw)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from e
