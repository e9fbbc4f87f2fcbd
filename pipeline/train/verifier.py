"""Verifier trainers: GRPO-Think / GRPO-Instruct (on-policy), DPO-Think (offline), SFT.

GRPO-Think and GRPO-Instruct differ only in the prompt style (`prompt.style`: think
continues an assistant `<think>\n` prefill; instruct has a system turn asking for an
analysis and the box) and in what the format reward checks; the reasoning budget is
`grpo.max_completion_length` (configs/train/grpo_think_{4k,8k,16k}.yaml). Defaults are
Aletheia's method configs (docs/training.md, docs/aletheia-conformance.md).
"""

from __future__ import annotations

import logging
from typing import Any

from pipeline.common.answers import column_answer_format
from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import PromptSpec
from pipeline.train.common import (
    base_trainer_args,
    check_fills_a_batch,
    peft_config,
    with_overrides,
)
from pipeline.train.config import TrainConfig, VllmSettings
from pipeline.train.data import preference_rows, rows_of_style, sft_rows, verifier_prompt_rows
from pipeline.train.rewards import make_reward_funcs

log = logging.getLogger(__name__)


def vllm_args(v: VllmSettings) -> dict[str, Any]:
    """GRPOConfig fields for vLLM generation. Untested here (no vLLM on this machine)."""
    if not v.enabled:
        return {"use_vllm": False}
    args: dict[str, Any] = {"use_vllm": True, "vllm_mode": v.mode}
    if v.mode == "server":
        args |= {
            "vllm_server_host": v.server_host,
            "vllm_server_port": v.server_port,
            "vllm_server_timeout": v.server_timeout_s,
        }
        if v.server_base_url:
            args["vllm_server_base_url"] = v.server_base_url
    else:
        args["vllm_gpu_memory_utilization"] = v.gpu_memory_utilization
        args["vllm_tensor_parallel_size"] = v.tensor_parallel_size
    return args


def trl_trainer(
    trainer_cls: Any,
    config_cls: Any,
    cfg: TrainConfig,
    args: dict[str, Any],
    dataset: Any,
    callbacks: list[Any],
    **extra: Any,
) -> Any:
    """The one shape every verifier trainer shares: TRL config from args + overrides, LoRA, data."""
    trainer = trainer_cls(
        model=cfg.model,
        args=config_cls(**with_overrides(base_trainer_args(cfg) | args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
        **extra,
    )
    check_fills_a_batch(trainer, cfg)
    return trainer


def sequence_trainer(
    trainer_cls: Any,
    config_cls: Any,
    cfg: TrainConfig,
    args: dict[str, Any],
    dataset: Any,
    callbacks: list[Any],
) -> Any:
    """A DPO or SFT trainer on conversational rows, rendered to text by the project
    (pipeline.train.sequences: the reasoning kept whatever the chat template does), with the
    training tokenizer (pipeline.train.tokenizer: a pad that is not EOS)."""
    from pipeline.train.sequences import as_text
    from pipeline.train.tokenizer import training_tokenizer

    tok = training_tokenizer(cfg.model, with_overrides(args, cfg).get("pad_token"))
    log.info("%s: %s", cfg.name, tok.describe())
    dataset = as_text(dataset, tok.tokenizer)
    return trl_trainer(trainer_cls, config_cls, cfg, args, dataset, callbacks,
                       processing_class=tok.tokenizer)  # fmt: skip


def _rows(cfg: TrainConfig) -> Any:
    return read_config(cfg.data.dir, cfg.data.config, cfg.data.limit, cfg.data.split)


def rows_and_spec(cfg: TrainConfig) -> tuple[Any, PromptSpec]:
    """The rows and the prompt spec, asking for the box form the rows' `chosen_answer` is
    published in (`publish.answer_format`) unless `prompt.answer_format` names one."""
    rows = _rows(cfg)
    form = column_answer_format(rows.column("chosen_answer").to_pylist())
    return rows, cfg.prompt.spec(form)


def clip_high(args: dict[str, Any]) -> dict[str, Any]:
    """`epsilon_high` None is `epsilon` (passed as the value, TRL's rule made explicit)."""
    if "epsilon_high" in args and args["epsilon_high"] is None:
        return args | {"epsilon_high": args.get("epsilon", 0.2)}
    return args


def grpo_args(cfg: TrainConfig) -> dict[str, Any]:
    """GRPOConfig fields from the config (besides the shared TrainingArguments ones): the
    section's TRL fields, and what our own settings make of them."""
    g = cfg.grpo
    return (
        clip_high(g.trl_args())
        | {
            "reward_weights": list(g.rewards.values()),
            # Aletheia's cerebrm_rl.py: one generation round serves `generate_every` optimiser
            # steps (BatchOnline-GRPO); 1 is TRL's default, on-policy.
            "steps_per_generation": cfg.optim.gradient_accumulation_steps * g.generate_every,
        }
        | vllm_args(g.vllm)
    )


def build_grpo(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    g = cfg.grpo
    tokenizer = AutoTokenizer.from_pretrained(cfg.model)  # renders prefilled prompts (data.py)
    names = list(g.rewards)
    args = grpo_args(cfg)
    rows, spec = rows_and_spec(cfg)
    reward_funcs = make_reward_funcs(
        names,
        style=cfg.prompt.style,
        budget=g.max_completion_length,
        overlong_buffer=g.buffer,
        format_penalty=g.format_penalty,
        answer_format=spec.answer_format,  # the form the prompt asks for, and only that one
    )
    dataset = verifier_prompt_rows(rows, spec, tokenizer)
    return trl_trainer(GRPOTrainer, GRPOConfig, cfg, args, dataset, callbacks,
                    reward_funcs=reward_funcs, processing_class=tokenizer)  # fmt: skip


def dpo_args(cfg: TrainConfig) -> dict[str, Any]:
    return cfg.dpo.trl_args()


def build_dpo(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from trl import DPOConfig, DPOTrainer

    args = dpo_args(cfg)
    rows, spec = rows_and_spec(cfg)
    dataset = preference_rows(rows_of_style(rows, cfg.prompt.style), spec)
    return sequence_trainer(DPOTrainer, DPOConfig, cfg, args, dataset, callbacks)


def sft_args(cfg: TrainConfig) -> dict[str, Any]:
    args = cfg.sft.trl_args()
    if cfg.sft.dataset is not None and cfg.sft.curriculum_column is not None:
        args["train_sampling_strategy"] = "sequential"  # the rows come in curriculum order
    return args


def build_sft(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from trl import SFTConfig, SFTTrainer

    args = sft_args(cfg)
    if cfg.sft.dataset is not None:  # Aletheia's: its own (cold-start curriculum) dataset
        from pipeline.train.sft_data import external_sft_rows

        dataset = external_sft_rows(cfg)
    else:
        rows, spec = rows_and_spec(cfg)
        dataset = sft_rows(rows_of_style(rows, cfg.prompt.style), spec)
    return sequence_trainer(SFTTrainer, SFTConfig, cfg, args, dataset, callbacks)
