"""`train(config)`: the one entry point the CLI and the `train-verifier` flow call."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.train.common import last_checkpoint, save_final
from pipeline.train.config import TrainConfig
from pipeline.train.metrics_log import METRICS_FILE, JsonlMetricsCallback, read_metrics

if TYPE_CHECKING:
    from sandbox.engines import JudgeEngine

log = logging.getLogger(__name__)


def _builder(method: str, sandbox_client: JudgeEngine | None) -> Any:
    if method == "rlvr":
        from pipeline.train.rlvr import build_rlvr

        return lambda cfg, callbacks: build_rlvr(cfg, callbacks, sandbox_client)
    if method == "raft":
        from pipeline.train.raft import build_raft

        return build_raft
    if method in ("star", "restem"):
        from pipeline.train.self_training import build_restem, build_star

        return {"star": build_star, "restem": build_restem}[method]
    from pipeline.train import verifier

    return {"grpo": verifier.build_grpo, "dpo": verifier.build_dpo, "sft": verifier.build_sft}[
        method
    ]


def train(
    config: TrainConfig | str | Path,
    *,
    sandbox_client: JudgeEngine | None = None,
    callbacks: Sequence[Any] = (),
) -> dict[str, Any]:
    """Train one model as `config` says; returns a summary (also written as summary.json).

    Output folder: `checkpoints/` (TRL's periodic checkpoints), `final/` (weights or LoRA
    adapter + tokenizer), `merged/` (LoRA merged into the base, when asked), the
    metrics log `metrics.jsonl`, the resolved `config.json` and `summary.json` (for RLVR with
    `rlvr`: per-step generation and reward time, rollout pass@1, zero-variance groups and the
    warning when most groups had zero reward variance; pipeline.train.rlvr_report).
    RLVR judges with `sandbox_client` when given (else it opens the judge engine that
    `rlvr.sandbox` names, and closes it at the end). `callbacks`: more TrainerCallbacks.
    """
    cfg = config if isinstance(config, TrainConfig) else TrainConfig.from_yaml(config)
    out = cfg.output_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(cfg.model_dump_json(indent=2))
    metrics_path = out / METRICS_FILE
    if metrics_path.exists():  # a re-run starts a fresh log; checkpoints stay for resuming
        metrics_path.unlink()

    trainer = _builder(cfg.method, sandbox_client)(
        cfg, [JsonlMetricsCallback(metrics_path), *callbacks]
    )
    start = time.perf_counter()
    result = trainer.train(
        resume_from_checkpoint=last_checkpoint(out / "checkpoints") if cfg.resume else None
    )
    runtime = time.perf_counter() - start
    model_path = save_final(trainer, cfg)

    history = read_metrics(metrics_path)
    steps = [r for r in history if "loss" in r]
    summary: dict[str, Any] = {
        "name": cfg.name,
        "method": cfg.method,
        "lora": cfg.lora is not None,
        "output_dir": str(out),
        "model_path": str(model_path),
        "metrics_log": str(metrics_path),
        "global_step": trainer.state.global_step,
        "train_runtime_s": runtime,
        "train_loss": result.training_loss,
        "last_log": steps[-1] if steps else None,
    }
    if cfg.method != "rlvr":  # a verifier: which wording its prompts were in
        from pipeline.common.verifier_prompt import wording

        summary["prompt"] = wording(cfg.prompt.spec())
    if cfg.method in ("raft", "star", "restem"):  # episodes: what sampling and each cost
        from pipeline.train.raft import raft_summary
        from pipeline.train.self_training import as_raft

        summary["raft"] = raft_summary(as_raft(cfg))
    if cfg.method == "rlvr":  # per-step cost and learning signal; the zero-variance warning
        from pipeline.train.rlvr_report import rlvr_run_summary

        summary["rlvr"] = rlvr_run_summary(history, cfg.rlvr.zero_variance_warn_share)
        if summary["rlvr"]["warning"]:
            log.warning("%s: %s", cfg.name, summary["rlvr"]["warning"])
    summary["cost"] = training_cost(cfg, trainer, runtime, history, summary.get("raft"))
    if trainer.accelerator.is_main_process:
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    log.info(
        "trained %s (%s) for %d steps -> %s",
        cfg.name,
        cfg.method,
        summary["global_step"],
        model_path,
    )
    return summary


def training_cost(
    cfg: TrainConfig,
    trainer: Any,
    runtime_s: float,
    history: list[dict[str, Any]],
    raft: dict[str, Any] | None,
) -> dict[str, Any]:
    """What the run cost, for cost-vs-accuracy comparisons: wall time x processes (device-hours)
    and tokens (TRL's cumulative `num_tokens`: prompt + completion tokens trained on; RAFT adds
    the tokens it sampled and the time it spent sampling and on earlier episodes).

    A run resumed from a checkpoint counts from its restart: the time before the crash is lost.
    """
    import torch

    tokens = next((r["num_tokens"] for r in reversed(history) if r.get("num_tokens")), None)
    seconds = runtime_s
    if raft:
        seconds += raft["generation_s"] + raft["earlier_episodes_train_s"]
        tokens = (tokens or 0) + raft["generated_tokens"] + raft["earlier_episodes_tokens"]
    processes = int(getattr(trainer.accelerator, "num_processes", 1))
    steps = int(trainer.state.global_step)
    return {
        "device": "cpu" if cfg.optim.use_cpu or not torch.cuda.is_available() else "cuda",
        "processes": processes,
        "wall_s": seconds,
        "device_hours": seconds * processes / 3600.0,
        "steps": steps,
        "tokens": tokens,
        "tokens_per_step": (tokens / steps) if tokens and steps else None,
    }
