"""`train-verifier` and `evaluate-verifier`: the training stages as Prefect flows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import flow, task

from flows.quiet import quiet_libraries
from flows.task import RunSettings, file_ref, jsonable, retry_transient, run_task


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
    """Score a verifier on the eval configs (heldout, strong, hard, adv) of a published folder:
    the evaluation stage (EVALUATE) as one stage task, its marker deciding. `out_dir`: the
    demo's trained verifier's own folder by default, never the build's evaluation after
    publish (out/demo/eval, its marker naming the build: refused)."""
    from pipeline.evaluate.run import refuse_a_stage_folder, with_files
    from pipeline.evaluate.stage import EVALUATE, EvaluateCall, evaluate_inputs

    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    refuse_a_stage_folder(out_dir, "out_dir")
    call = EvaluateCall.model_validate((options or {}) | {"model": model, "hub_dir": data_dir})
    inputs = {name: file_ref(p) for name, p in evaluate_inputs(call).items()}
    out = Path(out_dir)
    done = run_task(EVALUATE, call, inputs, out, RunSettings.alone("evaluate-verifier", out))
    return with_files(json.loads(Path(done["outputs"]["report"]).read_text()), out)
