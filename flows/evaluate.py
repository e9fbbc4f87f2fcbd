"""The evaluation after publish: the run config's `evaluate:` section's model scored on the
published folder's evaluation configs (not a dataset stage: it changes no published row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import get_run_logger, task

from flows.progress import progress_file, reporting, watch
from flows.task import RunSettings, code_digest, configured, result
from pipeline.common.hashing import sha256_files
from pipeline.common.hub_folder import split_files
from pipeline.config import RunConfig
from pipeline.models.cpu import resolve_model_classes


@task(name="evaluate-published", tags=["cpu"])
def evaluate_published_task(
    model: str,
    model_digest: str,
    hub_dir: str,
    hub_digest: str,
    config: dict,
    out_dir: str,
    code: str,
) -> dict:
    """Evaluate a verifier on a published folder's evaluation configs. Cached by the model's
    and the published splits' digests; a run cut short resumes from its finished
    generations (pipeline/evaluate/checkpoint.py)."""
    from pipeline.evaluate import evaluate
    from pipeline.models.cpu import pin_cpu_kernels

    pin_cpu_kernels()  # local models: the same floats on any x86 machine
    resolve_model_classes()
    out = Path(out_dir)
    with reporting(progress_file(out)):
        report = evaluate(model, Path(hub_dir), out, config)
    return result(
        "evaluate",
        {"report": Path(report["files"]["json"]), "markdown": Path(report["files"]["markdown"])},
        {"flags": report["flags"]},
    )


def evaluate_published(cfg: RunConfig) -> dict[str, Any]:
    """The run config's `evaluate:` section: its model scored on the published folder's
    evaluation configs, the report under `cfg.eval_dir` (outside the hub folder)."""
    section, hub = cfg.evaluate, cfg.hub_dir
    assert section is not None and cfg.eval_dir is not None
    knobs = section.eval_config().model_copy(update={"progress": False})  # lines, not a bar
    files = [f for name in knobs.splits for f in split_files(hub, name, knobs.split)]
    model = Path(section.model)
    # A local model folder by content (the demo's tiny verifier); a hub id by its name.
    weights = sorted(p for p in model.iterdir() if p.is_file()) if model.is_dir() else []
    out, s = cfg.eval_dir, RunSettings.of(cfg)
    with watch(s.progress, "evaluate", [progress_file(out)]):
        evaluated = configured(evaluate_published_task, s, [out / "report.json"])(
            section.model,
            sha256_files(weights)[:16] if weights else section.model,
            str(hub),
            sha256_files(files)[:16],
            knobs.model_dump(mode="json"),
            str(out),
            code_digest("pipeline.evaluate", "pipeline.sampling"),
        )
    get_run_logger().info("evaluation report: %s", Path(evaluated["outputs"]["markdown"]).resolve())
    return evaluated
