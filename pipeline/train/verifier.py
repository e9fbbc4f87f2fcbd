"""Verifier trainers: GRPO-Think / GRPO-Instruct (on-policy), DPO-Think (offline), SFT.

GRPO-Think and GRPO-Instruct differ only in the prompt variant (`grpo.variant`: think
asks for reasoning inside <think>...</think> before the box; no_think for the box
alone) and in what the format reward checks; the reasoning budget is
`grpo.max_completion_length` (configs/train/grpo_think_{4k,8k,16k}.yaml).
"""

from __future__ import annotations

from typing import Any

from pipeline.train.common import base_trainer_args, peft_config, with_overrides
from pipeline.train.config import TrainConfig, VllmSettings
from pipeline.train.data import preference_rows, read_config, sft_rows, verifier_prompt_rows
from pipeline.train.rewards import make_reward_funcs


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
    return args


def build_grpo(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from trl import GRPOConfig, GRPOTrainer

    g = cfg.grpo
    table = read_config(cfg.data.dir, cfg.data.config, cfg.data.limit)
    dataset = verifier_prompt_rows(table, g.variant)
    names = list(g.rewards)
    reward_funcs = make_reward_funcs(
        names,
        variant=g.variant,
        budget=g.max_completion_length,
        overlong_buffer=g.buffer,
        format_penalty=g.format_penalty,
    )
    args = (
        base_trainer_args(cfg)
        | {
            "num_generations": g.num_generations,
            "max_completion_length": g.max_completion_length,
            "temperature": g.temperature,
            "top_p": g.top_p,
            "beta": g.beta,
            "loss_type": g.loss_type,
            "importance_sampling_level": g.importance_sampling_level,
            "epsilon": g.epsilon,
            "epsilon_high": g.epsilon_high if g.epsilon_high is not None else g.epsilon,
            "mask_truncated_completions": g.mask_truncated_completions,
            "scale_rewards": g.scale_rewards,
            "reward_weights": [g.rewards[n] for n in names],
        }
        | vllm_args(g.vllm)
    )
    return GRPOTrainer(
        model=cfg.model,
        reward_funcs=reward_funcs,
        args=GRPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )


def build_dpo(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from trl import DPOConfig, DPOTrainer

    d = cfg.dpo
    dataset = preference_rows(read_config(cfg.data.dir, cfg.data.config, cfg.data.limit))
    args = base_trainer_args(cfg) | {
        "beta": d.beta,
        "max_length": d.max_length,
        "loss_type": d.loss_type,
    }
    return DPOTrainer(
        model=cfg.model,
        args=DPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )


def build_sft(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    from trl import SFTConfig, SFTTrainer

    s = cfg.sft
    dataset = sft_rows(read_config(cfg.data.dir, cfg.data.config, cfg.data.limit))
    args = base_trainer_args(cfg) | {
        "max_length": s.max_length,
        "completion_only_loss": s.completion_only_loss,
    }
    return SFTTrainer(
        model=cfg.model,
        args=SFTConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )
