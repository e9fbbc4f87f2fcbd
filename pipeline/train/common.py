"""Plumbing every trainer shares: TRL arguments from the config, LoRA, saving the result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.train.config import LoraSettings, TrainConfig


def base_trainer_args(cfg: TrainConfig) -> dict[str, Any]:
    """The TrainingArguments fields every TRL config takes: `cfg.optim`'s TRL fields as they
    are, and the ones whose default is the method's (Aletheia's method configs)."""
    args: dict[str, Any] = {
        "output_dir": str(cfg.output_dir / "checkpoints"),
        **cfg.optim.trl_args(),
        "learning_rate": cfg.optim_value("learning_rate"),
        "warmup_steps": cfg.optim_value("warmup_ratio"),  # a float in [0, 1): a ratio of all steps
        "lr_scheduler_type": cfg.optim_value("lr_scheduler_type"),
        "weight_decay": cfg.optim_value("weight_decay"),
        "save_strategy": "steps",
        "save_steps": cfg.optim_value("save_steps"),  # below 1: a fraction of the run's steps
        "report_to": [],
    }
    if (kwargs := cfg.optim_value("lr_scheduler_kwargs")) is not None:
        args["lr_scheduler_kwargs"] = kwargs
    if args.get("bf16", False) is None:
        del args["bf16"]  # None: TRL's default (on unless fp16)
    return args


def with_overrides(args: dict[str, Any], cfg: TrainConfig) -> dict[str, Any]:
    return {**args, **cfg.trainer_overrides}


def check_fills_a_batch(trainer: Any, cfg: TrainConfig) -> None:
    """With `dataloader_drop_last` (Aletheia's) a short last batch is left out, so fewer rows
    than one batch across the processes would train nothing: an error, not a silent no-op.
    GRPO batches count completions and its sampler has its own rule (TRL checks it)."""
    args = trainer.args
    if not args.dataloader_drop_last or hasattr(args, "num_generations"):
        return
    rows, batch = len(trainer.train_dataset), args.per_device_train_batch_size * args.world_size
    if rows < batch:
        from pipeline.errors import UserError

        raise UserError(
            f"{cfg.name}: {rows} training rows fill no batch of {batch} "
            f"(optim.per_device_train_batch_size x {args.world_size} processes) and "
            "optim.dataloader_drop_last leaves a short batch out; lower the batch size or set "
            "optim.dataloader_drop_last: false"
        )


def peft_config(lora: LoraSettings | None) -> Any:
    if lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        modules_to_save=lora.modules_to_save,
        task_type="CAUSAL_LM",
    )


def save_final(trainer: Any, cfg: TrainConfig) -> Path:
    """Write the final weights + tokenizer; with LoRA also a merged model (loadable without peft).

    Returns the folder a plain `AutoModelForCausalLM.from_pretrained` can load.
    """
    final = cfg.output_dir / "final"
    trainer.save_model(str(final))  # every rank: ZeRO-3 / FSDP gather the weights collectively
    main = trainer.accelerator.is_main_process
    tokenizer = trainer.processing_class
    if tokenizer is not None and main:
        tokenizer.save_pretrained(str(final))
    if cfg.lora is None or not cfg.lora.merge_on_save:
        return final
    merged_dir = cfg.output_dir / "merged"
    if not main:
        return merged_dir
    model = trainer.accelerator.unwrap_model(trainer.model)
    merged = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
    merged.save_pretrained(str(merged_dir))
    if tokenizer is not None:
        tokenizer.save_pretrained(str(merged_dir))
    return merged_dir


def last_checkpoint(folder: Path) -> str | None:
    """The newest complete TRL checkpoint in `folder`, to resume a run restarted after a crash."""
    if not folder.is_dir():
        return None
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder))
