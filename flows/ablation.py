"""`aletheia-ablation`: Aletheia's ablation at one size as a flow (pipeline.train.ablation).

Per recipe a train task and an evaluate task (named after the cell in the UI), then the
comparison. Each cell is resumable by itself: a finished cell is read back, never trained
again; a failed cell is recorded, the others go on, and the flow ends failed naming it, so
the next run redoes that cell alone.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task

from flows.quiet import quiet_libraries
from flows.task import jsonable, retry_transient


@task(
    name="ablation-train",
    tags=["gpu"],
    retries=1,
    retry_delay_seconds=60,
    retry_condition_fn=retry_transient,
)
def train_cell_task(ablation: dict[str, Any], recipe: str) -> dict[str, Any]:
    """Resumable by itself: a finished cell is read back; a restarted one resumes its checkpoint."""
    from pipeline.train.ablation import train_cell
    from pipeline.train.ablation_config import AblationConfig

    return jsonable(train_cell(AblationConfig.model_validate(ablation), recipe))


@task(name="ablation-evaluate", tags=["gpu"])
def evaluate_cell_task(ablation: dict[str, Any], recipe: str) -> dict[str, Any]:
    from pipeline.train.ablation import evaluate_cell
    from pipeline.train.ablation_config import AblationConfig

    return jsonable(evaluate_cell(AblationConfig.model_validate(ablation), recipe))


@task(name="ablation-compare")
def compare_task(ablation: dict[str, Any], failed: dict[str, str]) -> dict[str, Any]:
    from pipeline.train.ablation_config import AblationConfig
    from pipeline.train.ablation_report import write_comparison

    return jsonable(write_comparison(AblationConfig.model_validate(ablation), failed))


def _error(state: Any) -> str:
    try:
        state.result()
    except Exception as e:  # noqa: BLE001 - the task's own exception, re-raised by result()
        return f"{type(e).__name__}: {e}"
    return "failed"


@flow(name="aletheia-ablation")
def aletheia_ablation(ablation_config: str = "configs/ablation/demo.yaml") -> dict[str, Any]:
    """Train the config's cells at one size (GRPO-Think at its budgets, GRPO-Instruct, DPO-Think,
    RAFT, BatchOnline-GRPO, STaR, ReST-EM), evaluate every checkpoint on Heldout, Strong, Hard
    and Adv alike, and write one comparison table and a Pareto plot."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    log = get_run_logger()
    from pipeline.train.ablation_config import AblationConfig

    cfg = AblationConfig.from_yaml(ablation_config)
    ablation = cfg.model_dump(mode="json")
    failed: dict[str, str] = {}
    for recipe in cfg.recipes:
        trained = train_cell_task.with_options(task_run_name=f"train-{recipe}")(
            ablation, recipe, return_state=True
        )
        if not trained.is_completed():
            failed[recipe] = _error(trained)
            log.warning(
                "cell %s: training failed (%s); the other cells go on", recipe, failed[recipe]
            )
            continue
        scored = evaluate_cell_task.with_options(task_run_name=f"evaluate-{recipe}")(
            ablation, recipe, return_state=True
        )
        if not scored.is_completed():
            failed[recipe] = _error(scored)
            log.warning("cell %s: evaluation failed (%s)", recipe, failed[recipe])
    result = compare_task(ablation, failed)
    files = result["files"]
    log.info("comparison: %s; Pareto plot: %s", files["comparison.md"], files["pareto.png"])
    if failed:
        raise RuntimeError(
            f"ablation cells failed: {', '.join(f'{r} ({e})' for r, e in failed.items())}; "
            "the finished cells are kept: run the ablation again to redo only these"
        )
    return {"out_dir": str(cfg.out_dir), "rows": len(result["rows"]), "files": result["files"]}
