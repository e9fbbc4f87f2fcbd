"""Training run configs (YAML in configs/train/, validated here).

One `TrainConfig` drives every method: `method` picks the trainer and the matching
section (`grpo`, `dpo`, `sft`, `raft`, `rlvr`, ...) holds its knobs. TRL's knobs are not
declared here: `optim` takes any field of TRL's trainer configs' shared base (transformers'
`TrainingArguments`), a method's section any field its TRL config adds (`GRPOConfig`,
`DPOConfig`, `SFTConfig`), read from TRL's own dataclasses (pipeline.train.trl_fields.TrlSection), so a
new TRL option needs no code here. A section declares only our own settings, and lists
Aletheia's values for the TRL fields it sets (`trl_defaults`). `trainer_overrides` still
passes fields to the TRL config as is, checked against the method's TRL config class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from pipeline.common.answers import AnswerFormat
from pipeline.common.config import left_out_at_defaults
from pipeline.common.verifier_prompt import PromptSpec, check_one_wording
from pipeline.judge.config import SandboxSection
from pipeline.sampling.config import BackendOptions, TransformersOptions
from pipeline.train.rewards import aletheia_overlong_buffer
from pipeline.train.trl_fields import SHARED, TrlSection, trl_fields, unknown_field

Method = Literal["grpo", "dpo", "sft", "raft", "rlvr", "star", "restem"]


# The paper's three reward formulations, as this project's RLVR reward functions.
PAPER_REWARDS: dict[str, dict[str, float]] = {
    "unit_test": {"pass_fraction": 1.0},  # unit tests only
    "ruff": {"lint": 1.0},  # Ruff lint only
    "combined": {"combined": 1.0},  # tests, plus lint once every test passes
}


# The TRL config class each method's trainer is configured by.
TRL_CONFIG: dict[str, str] = {"grpo": "GRPOConfig", "rlvr": "GRPOConfig", "dpo": "DPOConfig",
                              "sft": "SFTConfig", "raft": "SFTConfig", "star": "SFTConfig",
                              "restem": "SFTConfig"}  # fmt: skip


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSettings(_Section):
    """Where the rows come from: a published dataset folder (one Parquet folder per config)."""

    dir: Path = Field(description="The published dataset folder (a build's hub/).")
    config: str = Field(
        description="The dataset config read: train | mixed | dpo | mixed_dpo | "
        "train_questions (as the method wants)."
    )
    split: str | None = Field(
        None, description="None = the config's default (`train`; `test` for an eval set)."
    )
    limit: int | None = Field(
        default=None, ge=1, description="Read the first N rows only (smoke runs)."
    )


class LoraSettings(_Section):
    r: int = Field(default=16, ge=1, description="LoRA rank.")
    alpha: int = Field(32, description="LoRA alpha (the update is scaled by alpha / r).")
    dropout: float = Field(0.05, description="Dropout on the LoRA layers.")
    target_modules: list[str] | str = Field(
        "all-linear", description="Modules that get adapters (peft's target_modules)."
    )
    merge_on_save: bool = Field(
        True, description="Also write a merged full model, loadable without peft."
    )
    modules_to_save: list[str] | None = Field(
        None,
        description="Modules trained in full beside the adapters (peft's modules_to_save, "
        "matched by name suffix), e.g. the RMSNorm gains [input_layernorm, "
        "post_attention_layernorm, norm]: LoRA on linear layers cannot scale the logits, "
        "which is how RLVR sharpens a small policy (docs/rlvr-study.md). None = none.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.modules_to_save is None:
            data.pop("modules_to_save", None)  # unset: every run's cache key as before
        return data


# Per-method optimiser defaults where a field is left out (None): Aletheia's method configs
# (src/configs/method/grpo.yaml, thinkdpo.yaml, sft.yaml, raft.yaml); rlvr keeps the project's own.
# save_steps below 1 is a fraction of the run's steps (transformers' rule): Aletheia saves every
# 10 % of a GRPO run and every 25 % of a DPO / SFT / RAFT one.
METHOD_OPTIM_DEFAULTS: dict[str, dict[str, Any]] = {
    "grpo": {"learning_rate": 1e-6, "lr_scheduler_type": "constant_with_warmup", "warmup_ratio": 0.05, "weight_decay": 0.01,
             "save_steps": 0.1},
    "dpo": {"learning_rate": 5e-7, "lr_scheduler_type": "constant_with_warmup", "warmup_ratio": 0.05, "weight_decay": 0.01,
            "save_steps": 0.25},
    "sft": {
        "learning_rate": 5e-5, "lr_scheduler_type": "cosine_with_min_lr",
        "lr_scheduler_kwargs": {"min_lr": 5e-6}, "warmup_ratio": 0.05, "weight_decay": 0.01, "save_steps": 0.25,
    },
    "raft": {
        "learning_rate": 5e-5, "lr_scheduler_type": "cosine_with_min_lr",
        "lr_scheduler_kwargs": {"min_lr": 5e-6}, "warmup_ratio": 0.05, "weight_decay": 0.01, "save_steps": 0.25,
    },
    "rlvr": {"learning_rate": 1e-6, "lr_scheduler_type": "cosine", "warmup_ratio": 0.0, "weight_decay": 0.0,
             "save_steps": 500},
    # src/configs/method/star.yaml and restem.yaml (06ce17a)
    "star": {
        "learning_rate": 5e-5, "lr_scheduler_type": "cosine_with_min_lr",
        "lr_scheduler_kwargs": {"min_lr": 5e-6}, "warmup_ratio": 0.05, "weight_decay": 0.01, "save_steps": 0.25,
    },
    "restem": {"learning_rate": 5e-5, "lr_scheduler_type": "constant_with_warmup", "warmup_ratio": 0.05, "weight_decay": 0.01, "save_steps": 0.25},
}  # fmt: skip


class OptimSettings(TrlSection):
    """Optimiser and schedule: any field of TRL's trainer configs' shared base (transformers'
    TrainingArguments), and the fields whose default is the method's (Aletheia's)."""

    section: ClassVar[str] = "optim"
    trl_config: ClassVar[str] = SHARED
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "max_steps": (-1, "-1 = run num_train_epochs"),
        "num_train_epochs": (1.0, ""),
        "per_device_train_batch_size": (8, ""),
        "gradient_accumulation_steps": (1, ""),
        "max_grad_norm": (1.0, ""),
        "bf16": (None, "None = TRL's default (on unless fp16)"),
        "gradient_checkpointing": (False, ""),
        "logging_steps": (1, "every step"),
        "save_total_limit": (2, "the oldest checkpoints go; None = all"),
        "seed": (42, "the data order's too; Aletheia's method configs: 42"),
        "dataloader_drop_last": (True, "Aletheia's training scripts leave a short last batch out"),
        "use_cpu": (False, ""),
    }

    learning_rate: float | None = Field(
        None, description="None = the method's default (Aletheia's method configs)."
    )
    warmup_ratio: float | None = Field(
        None,
        description="Share of the steps warming up (TRL's warmup_steps below 1); None = the "
        "method's default.",
    )
    lr_scheduler_type: str | None = Field(
        None, description="transformers' scheduler name; None = the method's default."
    )
    lr_scheduler_kwargs: dict[str, Any] | None = Field(
        None, description="The scheduler's options; None = the method's default."
    )
    weight_decay: float | None = Field(None, description="None = the method's default.")
    save_steps: float | None = Field(
        None,
        gt=0,
        description="Steps between checkpoints; below 1, a fraction of the run's steps. None = "
        "the method's default (Aletheia's: 0.1 for grpo, 0.25 for dpo, sft and raft; rlvr 500).",
    )


class VllmSettings(_Section):
    """GRPO generation through a `trl vllm-serve` process in vLLM's own environment.

    Untested here: vLLM cannot be installed on the CI machine. See docs/training.md.
    """

    enabled: bool = Field(False, description="Generate with vLLM (UNTESTED HERE).")
    mode: Literal["server", "colocate"] = Field(
        "server",
        description="server: a `trl vllm-serve` process; colocate: vLLM inside the trainer's "
        "processes.",
    )
    server_base_url: str | None = Field(
        None,
        description="server: the server's URL (e.g. http://gpu-node:8000); None = "
        "server_host and server_port.",
    )
    server_host: str = Field("0.0.0.0", description="server: the server's host.")
    server_port: int = Field(8000, description="server: the server's port.")
    server_timeout_s: float = Field(
        240.0, description="server: seconds to wait for the server to come up."
    )
    gpu_memory_utilization: float = Field(
        0.3, description="colocate: the share of GPU memory vLLM may take."
    )
    tensor_parallel_size: int = Field(
        default=1, ge=1, description="colocate: GPUs one vLLM model is split across."
    )


class PromptSettings(_Section):
    """The verifier prompt (pipeline.common.verifier_prompt): style and optional template files."""

    style: Literal["think", "instruct"] = Field(
        "think",
        description="think: R1-style, the answer turn pre-filled with <think>; instruct: a "
        "system turn asks for the boxed answer at once (no think tags).",
    )
    prompt_template: str | None = Field(
        None, description="A user-turn template file; None = our wording."
    )
    system_template: str | None = Field(
        None, description="instruct: the system-turn template file; None = our wording."
    )
    aletheia_src: str | None = Field(
        None,
        description="A checkout of Aletheia's code (or one of its prompt files, e.g. "
        "src/cerebrm_prompts.py): the prompt is then Aletheia's own wording, its constants "
        "read from src/prompts.py with `ast`, never run (pipeline/common/aletheia_prompts.py); "
        "excludes prompt_template / system_template. None = the project's wording.",
    )
    answer_format: AnswerFormat | None = Field(
        None,
        description="The box our prompt asks for and the only one the format reward accepts: "
        "`letter` (\\boxed{A}) or `bracketed` (\\boxed{[[A]]}, a release published with "
        "`publish.answer_format: bracketed`). None = the form of the rows' `chosen_answer`.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # Unset, left out: a cell's dump (the ablation's cache key) stays what it was.
        return left_out_at_defaults(handler(self), {"aletheia_src": None, "answer_format": None})

    @model_validator(mode="after")
    def _one_wording(self) -> PromptSettings:
        check_one_wording(
            self.aletheia_src, self.prompt_template, self.system_template, where="prompt."
        )
        return self

    def spec(self, answer_format: AnswerFormat = "letter") -> PromptSpec:
        """The prompt spec; `answer_format` is the rows' form, used unless the config sets one."""
        return PromptSpec(
            style=self.style,
            template=self.prompt_template,
            system_template=self.system_template,
            answer_format=self.answer_format or answer_format,
            aletheia_src=self.aletheia_src,
        )


class GrpoSettings(TrlSection):
    """Defaults: Aletheia's GRPO method config (src/configs/method/grpo.yaml, grpo_training.py).
    Takes any field GRPOConfig adds over TrainingArguments."""

    section: ClassVar[str] = "grpo"
    trl_config: ClassVar[str] = "GRPOConfig"
    trl_limits: ClassVar[dict[str, Any]] = {
        "num_generations": Annotated[int, Field(ge=2)],  # a group of one has no advantage
        "importance_sampling_level": Literal["token", "sequence"],
        "top_p": Annotated[float, Field(gt=0.0, le=1.0)],
    }
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "num_generations": (16, "responses sampled per prompt (the group)"),
        "max_completion_length": (4096, "the reasoning-token budget (Aletheia: 4k / 8k / 16k)"),
        "temperature": (1.0, ""),
        "top_p": (1.0, ""),
        "beta": (1e-3, "KL coefficient against the reference model"),
        "sync_ref_model": (True, 'Aletheia\'s "dynamic" KL: the reference re-synced'),
        "ref_model_sync_steps": (100, ""),
        "ref_model_mixup_alpha": (1.0, "1.0 = the reference becomes a copy"),
        "loss_type": ("dapo", ""),
        "importance_sampling_level": ("token", "token: GRPO; sequence: GSPO"),
        "epsilon": (0.2, ""),
        "epsilon_high": (0.28, "DAPO's clip-higher; None = epsilon"),
        "mask_truncated_completions": (True, ""),
        "scale_rewards": ("group", ""),
    }

    rewards: dict[str, float] = Field(
        default_factory=lambda: {"accuracy": 1.0, "format": 1.0, "overlong": 1.0},
        description="Reward name -> weight (Aletheia sums them unweighted).",
    )
    overlong_buffer: int | None = Field(
        None,
        description="Tokens before the budget where the overlong penalty starts; None = "
        "Aletheia's: 1024 up to a 4096 budget, else 2048.",
    )
    format_penalty: float = Field(
        1.0, description="The format reward of a malformed response is -this (Aletheia: 1)."
    )
    generate_every: int = Field(
        default=1,
        ge=1,
        description="Optimiser steps one generation round serves (Aletheia's `generate_every`: "
        "TRL's steps_per_generation = gradient_accumulation_steps x this); 1 = on-policy "
        "GRPO, 4 = BatchOnline-GRPO.",
    )
    vllm: VllmSettings = Field(default_factory=VllmSettings, description="Rollouts through vLLM.")

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


class DpoSettings(TrlSection):
    """Defaults: Aletheia's thinkdpo.yaml and the thinkdpo_training.py that reads its per-scale
    `precompute_ref_batch_size`: a fixed reference (the starting model), its log-probs computed
    once before training. The stored version of the script that re-syncs the reference
    (`sync_ref_model`, every 100 steps) is an option. The Instruct recipe, dpo_instruct.yaml,
    uses max_length 8192. Takes any field DPOConfig adds over TrainingArguments."""

    section: ClassVar[str] = "dpo"
    trl_config: ClassVar[str] = "DPOConfig"
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "beta": (0.1, ""),
        "max_length": (20480, "prompt + response; None = no cap"),
        "loss_type": (["sigmoid"], ""),
        "precompute_ref_log_probs": (True, "a fixed reference, its log-probs computed once"),
        "precompute_ref_batch_size": (None, "None = per_device_train_batch_size"),
        "sync_ref_model": (False, "needs precompute_ref_log_probs: false"),
        "ref_model_sync_steps": (100, ""),
        "ref_model_mixup_alpha": (1.0, ""),
    }

    @model_validator(mode="after")
    def _one_reference(self) -> DpoSettings:
        if self.sync_ref_model and self.precompute_ref_log_probs:
            raise ValueError(
                "dpo.sync_ref_model: a re-synced reference cannot use log-probs computed "
                "before training; set dpo.precompute_ref_log_probs: false with it"
            )
        return self


class SftSettings(TrlSection):
    """Defaults: Aletheia's sft.yaml (max_length 4096; loss on the response only). Takes any
    field SFTConfig adds over TrainingArguments."""

    section: ClassVar[str] = "sft"
    trl_config: ClassVar[str] = "SFTConfig"
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "max_length": (4096, "prompt + response; None = no cap"),
        "completion_only_loss": (True, "loss on the response only"),
    }
    dataset: str | None = Field(
        None,
        description="What SFT trains on: None = the chosen responses of `data.config` (dpo); "
        "else a Hub dataset id or a local folder (Aletheia: its cold-start curriculum) whose "
        "rows hold `messages` (a chat whose last turn is the assistant's) or `prompt` + "
        "`completion` (pipeline.train.sft_data).",
    )
    dataset_split: str = Field("train", description="`dataset`: the split read.")
    curriculum_column: str | None = Field(
        None,
        description="`dataset`: a column naming each row's curriculum stage; rows are then "
        "trained stage by stage in the stages' sorted order, shuffled (seeded) within a stage "
        "and never across (Aletheia's `currciulum_stage`); None = shuffled as usual.",
    )


class RaftSettings(TrlSection):
    """RAFT: on-policy rejection-sampling fine-tuning (Aletheia's configs/method/raft.yaml and
    raft_training.py). Each episode samples `num_generations` responses per prompt from the
    current model, keeps only those whose answer is the gold letter (no negatives), and
    fine-tunes on them (loss on the response); the next episode samples from the result.
    Takes any field SFTConfig adds over TrainingArguments, for the episodes' fine-tuning."""

    section: ClassVar[str] = "raft"
    trl_config: ClassVar[str] = "SFTConfig"
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "completion_only_loss": (True, "loss on the response only"),
    }

    num_generations: int = Field(default=16, ge=1, description="Responses sampled per prompt.")
    temperature: float = Field(1.0, description="Sampling temperature.")
    top_p: float = Field(1.0, description="Nucleus sampling mass.")
    max_length: int = Field(
        default=20480, ge=1, description="SFT sequence cap (prompt + response)."
    )
    max_completion_length: int | None = Field(
        default=None,
        ge=1,
        description="Response budget; None = max_length - 4096 (Aletheia keeps 4096 tokens "
        "for the prompt).",
    )
    keep_per_prompt: int = Field(
        default=1, ge=1, description="Correct responses kept per prompt, at random."
    )
    episodes: int = Field(
        default=1, ge=1, description="Episodes; each samples from the previous one's model."
    )
    prompts_per_episode: int | None = Field(
        default=None, ge=1, description="A seeded sample of the rows per episode; None = all."
    )
    constrain_answer: bool = Field(
        False,
        description="Ours (demo): responses must end in \\boxed{X} with X a valid letter the "
        "model picks.",
    )
    backend: BackendOptions = Field(
        default_factory=TransformersOptions, description="Who samples the responses."
    )

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


class RestemSettings(RaftSettings):
    """ReST-EM (Aletheia's configs/method/restem.yaml and restem_training.py): RAFT's loop -
    sample `num_generations` responses per prompt from the episode's model at temperature 1,
    keep correct ones, fine-tune the episode's model on them - with ReST-EM's settings: 16
    samples, up to 5 correct responses kept per prompt, 20480 tokens; lr constant after warmup
    (METHOD_OPTIM_DEFAULTS)."""

    section: ClassVar[str] = "restem"

    keep_per_prompt: int = Field(
        default=5,
        ge=1,
        description="Correct responses kept per prompt, at random (Aletheia's "
        "max_samples_to_keep).",
    )


class StarSettings(RaftSettings):
    """STaR (Aletheia's configs/method/star.yaml and star_training.py): per episode one response
    per prompt from the episode's model (temperature 0.6); for the prompts it got wrong, one more
    from a prompt that states the gold answer (rationalisation); the correct responses of both,
    each under the plain prompt, fine-tune the base model (not the episode's: STaR restarts
    from the base every episode)."""

    section: ClassVar[str] = "star"

    num_generations: int = Field(default=1, ge=1, description="Responses sampled per prompt.")
    temperature: float = Field(0.6, description="Sampling temperature (Aletheia's STaR: 0.6).")
    max_length: int = Field(
        default=12288, ge=1, description="SFT sequence cap (prompt + response)."
    )
    rationalize: bool = Field(
        True,
        description="Ask again, with the gold answer as a hint, where the plain prompt got "
        "it wrong; a correct hinted response is trained on under the plain prompt.",
    )
    hint: str = Field(
        "Hint: The correct answer is {answer}",
        description="The hint line added after the candidates; `{answer}` is the row's "
        "`chosen_answer` as stored (`A`, or `[[A]]` in a bracketed release).",
    )
    train_from: Literal["base", "previous"] = Field(
        "base",
        description="base: every episode fine-tunes `model` (STaR); previous: the episode's own "
        "model (as RAFT).",
    )


class SandboxSettings(SandboxSection):
    """The judge RLVR rewards come from: a run config's `sandbox:` section (engine, pool, image,
    http url) plus what training needs of it."""

    pool_size: int | None = Field(
        4, ge=1, description="docker / process: programs run at once; None = CPUs."
    )
    batch_timeout_s: float = Field(
        300.0,
        description="Seconds one reward batch may take; past it the batch gets no reward signal.",
    )
    max_failed_batches: int = Field(
        3, description="Consecutive failed batches before training stops loudly."
    )
    time_limit_scale: float = Field(
        1.0, gt=0, description="Multiplies every time limit, as judge.time_limit_scale."
    )
    stop_at_timeout: bool = Field(
        True,
        description="After a test runs out of time, run none of the program's later tests "
        "(they count as failed): a looping program costs one time limit, not one per test. "
        "Its verdict (TLE) and all_pass are unchanged; pass_fraction can be lower than the "
        "judge stage's.",
    )


class VerifierRewardSettings(_Section):
    """A code verifier as an RLVR reward, as Aletheia's codegen GRPO (src/codegen_grpotrainer.py,
    configs/method/codegen_grpo.yaml): per group, one rollout drawn at random is the reference,
    every other rollout is shown to the verifier beside it in both orders (`votes` times each),
    and a rollout picked in every one of them earns +1, any other -1, the reference 0
    (pipeline.train.verifier_reward). The reward is `verifier` in `rlvr.rewards`."""

    model: str = Field(
        description="The verifier: a local folder or hub id (transformers), or the served "
        "model's name (openai)."
    )
    backend: BackendOptions = Field(
        default_factory=TransformersOptions,
        description="Who writes the verdicts: transformers (the verifier in this process) or "
        "openai (an OpenAI-compatible server, e.g. `vllm serve`; Aletheia's setup).",
    )
    prompt: PromptSettings = Field(
        default_factory=PromptSettings,
        description="The verifier prompt (two candidates, A and B), as the verifier was trained.",
    )
    votes: int = Field(
        default=1,
        ge=1,
        description="Verdicts per order (Aletheia's `voting`): a rollout earns +1 only when it "
        "wins all 2 x votes.",
    )
    temperature: float = Field(0.6, ge=0, description="The verifier's sampling temperature.")
    top_p: float = Field(1.0, gt=0, le=1, description="The verifier's nucleus sampling mass.")
    max_tokens: int = Field(default=4096, ge=1, description="Most tokens per verdict.")
    advantage: Literal["auto", "brpo", "group"] = Field(
        "auto",
        description="brpo: Aletheia's (BRPO) - each rollout's advantage is its verifier reward "
        "as it is, and a group whose rewards lean too far one way (|sum| / group > "
        "`brpo_filter_threshold`) is left out; needs the verifier to be the only reward with a "
        "weight. group: the weighted rewards summed and normalised per group as for any "
        "reward (TRL's). auto: brpo when the verifier is the only weighted reward, else group.",
    )
    brpo_filter_threshold: float = Field(
        0.6, ge=0, le=1, description="brpo: Aletheia's tau_filter."
    )
    constrain_answer: bool = Field(
        False,
        description="Ours: the verdict must end in \\boxed{A} or \\boxed{B}, the verifier "
        "choosing which (transformers backend; for untrained demo verifiers).",
    )
    chat_template_kwargs: dict[str, Any] | None = Field(
        None, description="Extra chat-template variables for the verifier's prompts."
    )
    seed: int = Field(0, description="Seeds the reference draws and the verdicts' sampling.")


class RlvrSettings(TrlSection):
    """Code-policy RLVR: a policy writes a program; the sandbox runs it on the problem's tests.
    Takes any field GRPOConfig adds over TrainingArguments."""

    section: ClassVar[str] = "rlvr"
    trl_config: ClassVar[str] = "GRPOConfig"
    trl_limits: ClassVar[dict[str, Any]] = GrpoSettings.trl_limits
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {
        "num_generations": (8, "programs sampled per problem (the group)"),
        "max_completion_length": (2048, "most tokens per program"),
        "temperature": (1.0, ""),
        "top_p": (1.0, ""),
        "beta": (0.0, "no KL term"),
        "epsilon": (0.2, ""),
        "epsilon_high": (None, "None = epsilon"),
    }

    algorithm: Literal["grpo", "gspo"] = Field(
        "grpo", description="grpo: token-level ratios; gspo: sequence-level (GSPO)."
    )
    language: Literal["python"] = Field(
        "python", description="The programs' language (lint and extraction are Python's here)."
    )
    loss_type: str | None = Field(
        None, description="None = dapo for grpo, grpo for gspo (the GSPO paper's)."
    )
    rewards: dict[str, float] = Field(
        default_factory=lambda: {"combined": 1.0},
        description="Reward name -> weight (pass_fraction, lint, combined, ...).",
    )
    enable_thinking: bool | None = Field(
        False,
        description="Qwen3 chat templates think unless told not to; off is this project's "
        "choice, not a setting taken from the paper. None = pass nothing (templates without "
        "the switch ignore it either way).",
    )
    lint_select: list[str] = Field(
        default_factory=lambda: ["E", "F", "W", "B"],
        description="Ruff rule prefixes the lint reward counts.",
    )
    lint_per_violation: float = Field(0.1, description="Lint penalty per violation, capped at -1.")
    lint_weight: float = Field(0.2, description="Weight of the lint term inside `combined`.")
    sandbox: SandboxSettings = Field(
        default_factory=SandboxSettings, description="The judge the rewards come from."
    )
    overlap_judging: bool = Field(
        True,
        description="Start judging a step's rollouts as soon as they are decoded, beside the "
        "trainer's work on them, instead of when TRL asks for the rewards (the same rewards).",
    )
    generate_ahead: bool = Field(
        False,
        description="Write the next step's rollouts while this step's are judged, so the judging "
        "hides behind generation; each step then trains on rollouts written one update earlier, "
        "the ratio taken against the policy that wrote them (off-policy by one step). Needs one "
        "process, no vLLM, steps_per_generation, num_iterations and gradient accumulation 1.",
    )
    vllm: VllmSettings = Field(default_factory=VllmSettings, description="Rollouts through vLLM.")
    zero_variance_warn_share: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Warn when more than this share of groups has one reward for every "
        "rollout (zero advantage: such a group teaches nothing).",
    )
    verifier: VerifierRewardSettings | None = Field(
        None,
        description="The code verifier behind the `verifier` reward (with weight 0: judged "
        "beside the tests for the diagnostic only). None = no verifier.",
    )

    @model_validator(mode="after")
    def _verifier_fits(self) -> RlvrSettings:
        if ("verifier" in self.rewards) != (self.verifier is not None):
            raise ValueError(
                "rlvr.rewards names `verifier` without an rlvr.verifier section"
                if self.verifier is None
                else "rlvr.verifier is set but rlvr.rewards has no `verifier` reward (give it "
                "weight 0 to judge with the verifier for the diagnostic only)"
            )
        if self.verifier is not None and self.verifier.advantage == "brpo":
            others = [n for n, w in self.rewards.items() if n != "verifier" and w != 0]
            if others or not self.rewards["verifier"]:
                raise ValueError(
                    "rlvr.verifier.advantage brpo: the verifier must be the only reward with a "
                    f"weight (rlvr.rewards has {self.rewards}); use advantage group or auto"
                )
        return self

    @property
    def brpo(self) -> bool:
        """Whether advantages are the verifier's BRPO ones (VerifierRewardSettings.advantage)."""
        v = self.verifier
        if v is None or v.advantage == "group":
            return False
        alone = bool(self.rewards["verifier"]) and all(
            w == 0 for n, w in self.rewards.items() if n != "verifier"
        )
        return v.advantage == "brpo" or alone

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            # Off, the dump (every run's cache key) stays what it was before the setting existed.
            if not self.generate_ahead:
                data.pop("generate_ahead", None)
            if self.verifier is None:
                data.pop("verifier", None)
        return data


class TrainConfig(_Section):
    name: str = Field("run", description="The run's name (in its logs and run summary).")
    method: Method = Field(
        description="The trainer: grpo, dpo, sft, raft, star, restem (verifiers) or rlvr (a code "
        "policy)."
    )
    model: str = Field(description="The model to train: a local folder or hub id.")
    output_dir: Path = Field(description="Checkpoints and the final model go here.")
    data: DataSettings = Field(description="Where the rows come from.")
    lora: LoraSettings | None = Field(None, description="LoRA adapters; None = full fine-tuning.")
    prompt: PromptSettings = Field(
        default_factory=PromptSettings,
        description="The verifier prompt (verifier methods: grpo, dpo, sft, raft).",
    )
    optim: OptimSettings = Field(
        default_factory=OptimSettings, description="Optimiser and schedule."
    )
    grpo: GrpoSettings = Field(default_factory=GrpoSettings, description="method grpo.")
    dpo: DpoSettings = Field(default_factory=DpoSettings, description="method dpo.")
    sft: SftSettings = Field(default_factory=SftSettings, description="method sft.")
    raft: RaftSettings = Field(default_factory=RaftSettings, description="method raft.")
    star: StarSettings = Field(default_factory=StarSettings, description="method star.")
    restem: RestemSettings = Field(default_factory=RestemSettings, description="method restem.")
    rlvr: RlvrSettings = Field(default_factory=RlvrSettings, description="method rlvr.")
    resume: bool = Field(
        True, description="Continue from the newest checkpoint in output_dir after a crash."
    )
    trainer_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="Fields passed to the method's TRL config as they are, over the sections' "
        "(checked against the TRL config's fields; a section takes its TRL fields too).",
    )

    @model_validator(mode="after")
    def _overrides_are_trl_fields(self) -> TrainConfig:
        cls = TRL_CONFIG[self.method]
        fields = trl_fields(cls)
        for key in self.trainer_overrides:
            if key not in fields:
                raise ValueError(unknown_field(key, "trainer_overrides", fields, cls))
        return self

    @model_validator(mode="after")
    def _data_fits_method(self) -> TrainConfig:
        wants = {
            "grpo": ("train", "mixed"),
            "dpo": ("dpo", "mixed_dpo"),
            "sft": ("dpo", "mixed_dpo"),
            "raft": ("train", "mixed"),
            "rlvr": ("train_questions",),
            "star": ("train", "mixed"),
            "restem": ("train", "mixed"),
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
