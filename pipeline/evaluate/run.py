"""`evaluate(model, data_dir, out_dir)`: the entry point the CLI and the `evaluate-verifier` flow call."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.metrics import flip_rates, split_metrics
from pipeline.evaluate.report import write_report
from pipeline.evaluate.runner import sample_split, transformers_backend
from pipeline.sampling.backends.base import Backend
from pipeline.train.data import read_config

log = logging.getLogger(__name__)


def evaluate(
    model: str | Path,
    data_dir: str | Path,
    out_dir: str | Path,
    config: EvalConfig | dict[str, Any] | None = None,
    *,
    backend: Backend | None = None,
) -> dict[str, Any]:
    """Sample K responses per instance on each eval split, score them, write report.json + report.md.

    `backend` defaults to the transformers backend on `model`; pass any other Backend
    (an OpenAI-compatible server, offline vLLM) to evaluate a large model the same way.
    `config` may be a plain dict of EvalConfig fields (what a Prefect flow parameter carries).
    """
    cfg = config if isinstance(config, EvalConfig) else EvalConfig.model_validate(config or {})
    out = Path(out_dir)
    tables = {
        s: read_config(data_dir, s, cfg.limit) for s in cfg.splits
    }  # fail before loading a model
    own_backend = backend is None
    backend = backend or transformers_backend(model, cfg)
    judged = {}
    try:
        for split, table in tables.items():
            log.info(
                "evaluating %s on %s (%d instances, K=%d)", model, split, table.num_rows, cfg.k
            )
            judged[split] = sample_split(
                backend, table.to_pylist(), split, cfg, out / "responses" / f"{split}.jsonl"
            )
    finally:
        if own_backend:
            backend.close()
    report: dict[str, Any] = {
        "model": str(model),
        "data_dir": str(data_dir),
        "config": cfg.model_dump(),
        "splits": {split: split_metrics(items) for split, items in judged.items()},
    }
    if "adv" in judged and "heldout" in judged:
        report["flip"] = flip_rates(judged["adv"], judged["heldout"])
    json_path, md_path = write_report(report, out)
    report["files"] = {"json": str(json_path), "markdown": str(md_path)}
    return report
