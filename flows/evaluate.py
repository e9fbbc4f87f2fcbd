"""The evaluation after publish: the build graph's `evaluate` node (pipeline/evaluate/stage.py
EVALUATE), the run config's `evaluate:` section's model scored on the published folder's
evaluation configs, run by the same Prefect executor as every node (flows/build.py
`run_node`: one stage task, its progress watched, the marker deciding what runs). It
changes no published row: the report goes under `cfg.eval_dir`, outside the hub folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import get_run_logger

from pipeline import stages
from pipeline.config import RunConfig


def evaluate_published(cfg: RunConfig, results: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the `evaluate` node (the config has an `evaluate:` section) after publish; its
    result (outputs `report`, `markdown`). A rerun with the same model, published splits and
    knobs is a Cached task run: nothing ran. `results`: the build's node results so far."""
    from flows.build import run_node

    assert cfg.evaluate is not None and cfg.eval_dir is not None
    evaluated = run_node(stages.GRAPH["evaluate"], cfg, dict(results or {}))
    get_run_logger().info("evaluation report: %s", Path(evaluated["outputs"]["markdown"]).resolve())
    return evaluated
