"""`train-verifier` and `evaluate-verifier`: the training stages as Prefect flows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task

from flows.quiet import quiet_libraries
from flows.task import jsonable, retry_transient


@task(
    name="train",
    tags=["gpu"],
    retries=1,
    retry_delay_seconds=60,
    retry_condition_fn=retry_transient,
)
def train_task(train_config: str) -> dict[str, Any]:
    """Resumable by itself: a restarted run continues from the newest TRL checkpoint."""
    from pipeline.train.run import train

    return jsonable(train(train_config))


@task(name="evaluate", tags=["gpu"])
def evaluate_task(
    model: str, data_dir: str, out_dir: str, options: dict[str, Any]
) -> dict[str, Any]:
    from pipeline.evaluate import evaluate  # the evaluation stage's entry point

    return jsonable(evaluate(model, Path(data_dir), Path(out_dir), options))


@flow(name="train-verifier")
def train_verifier(train_config: str = "configs/train/demo-dpo.yaml") -> dict[str, Any]:
    """Train a verifier (GRPO / DPO / SFT) or an RLVR policy from a TrainConfig YAML."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    return train_task(train_config)


@flow(name="evaluate-verifier")
def evaluate_verifier(
    model: str,
    data_dir: str = "out/demo/hub",
    out_dir: str = "out/demo/train/dpo/eval",
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score a verifier on the eval configs (heldout, strong, hard, adv) of a published folder.
    `out_dir`: the demo's trained verifier's own folder by default, never the build's
    evaluation after publish (out/demo/eval, a stage's folder: refused)."""
    from pipeline.evaluate.run import refuse_a_stage_folder

    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    refuse_a_stage_folder(out_dir, "out_dir")
    return evaluate_task(model, data_dir, out_dir, options or {})
