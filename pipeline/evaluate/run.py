"""`evaluate(...)`: the entry point the CLI and the `evaluate-verifier` flow call.

Two ways in: sample responses from a model (a backend), or score a responses file written
elsewhere (`responses=`, no model loaded). Both end in the same scoring and report.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import wording
from pipeline.evaluate.checkpoint import GenerationLog
from pipeline.evaluate.checkpoint import discard as discard_partial
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.metrics import Judged, flip_rates
from pipeline.evaluate.per_instance import instance_rows, write_instance_table
from pipeline.evaluate.provenance import (
    ProvenanceError,
    generated_with,
    provenance_path,
    read_provenance,
    write_provenance,
)
from pipeline.evaluate.report import answer_rule_record, write_report
from pipeline.evaluate.responses import (
    ResponseRow,
    ResponsesError,
    group_responses,
    read_responses,
    write_responses,
)
from pipeline.evaluate.runner import open_backend, prompt_spec, sample_splits
from pipeline.evaluate.score import score_split
from pipeline.sampling.backends.base import Backend

log = logging.getLogger(__name__)

# What a scoring run decides on its own; the rest of EvalConfig is about generating.
SCORING_FIELDS = ("split", "invalid_flag_above", "answer_rule")


def evaluate(
    model: str | Path | None,
    data_dir: str | Path,
    out_dir: str | Path,
    config: EvalConfig | dict[str, Any] | None = None,
    *,
    backend: Backend | None = None,
    responses: str | Path | None = None,
) -> dict[str, Any]:
    """Score a verifier on the eval configs (`config.split` of each: `test` by default, or
    `full`); write report.json, report.md, responses.jsonl, the per-instance table
    instances.parquet and a self-consistency plot per split.

    Without `responses`: sample from `backend` (default: the one `config.backend` names, opened
    on `model`: the transformers backend, an OpenAI-compatible server such as vLLM or SGLang,
    or offline vLLM workers; or pass an open `Backend`). With `responses` (a file
    in the format of pipeline/evaluate/responses.py): score it against `data_dir` without a
    model; its splits are the ones scored, and its generation settings are read from the
    `<stem>.generation.json` beside it (pipeline/evaluate/provenance.py; "unknown" where it
    gives none), not from `config`. `config` may be a plain dict of EvalConfig fields.
    Generations are kept as they finish (pipeline/evaluate/checkpoint.py): a run started again
    on the same `out_dir` after a crash generates only what is missing.
    """
    cfg = config if isinstance(config, EvalConfig) else EvalConfig.model_validate(config or {})
    out = Path(out_dir)
    if responses is not None:
        rows = read_responses(responses)
        try:
            settings = read_provenance(responses)
        except ProvenanceError as exc:
            raise ResponsesError(str(exc)) from None
        instances = {}
        for split in dict.fromkeys(r.split for r in rows):
            try:
                instances[split] = read_config(data_dir, split, split=cfg.split).to_pylist()
            except ValueError as exc:  # an unknown config name: the file's fault
                raise ResponsesError(f"{responses}: field split: {exc}") from exc
    else:
        # Read every split before loading a model, so a missing one fails at once.
        instances = {
            s: read_config(data_dir, s, cfg.limit, cfg.split).to_pylist() for s in cfg.splits
        }
        rows = _sample(model, instances, cfg, backend, out)
        settings = generated_with(
            str(model) if model is not None else backend.name,  # type: ignore[union-attr]
            cfg,
            cfg.backend.model_dump(mode="json") if backend is None else {"name": backend.name},
        )
    write_responses(rows, out / "responses.jsonl")
    # The settings travel with the responses, so re-scoring this file knows them too.
    write_provenance(out / "responses.jsonl", settings)
    discard_partial(out)
    warnings: list[str] = []
    grouped = group_responses(rows, instances, warnings)
    for w in warnings:
        log.warning("%s", w)
    report: dict[str, Any] = {
        "model": str(model) if model is not None else None,
        "responses": str(responses) if responses is not None else None,
        "data_dir": str(data_dir),
        # What the scored responses were generated with: this run's settings, or (scoring a
        # file) the ones recorded beside it.
        "generated_with": settings,
        "answer_rule": answer_rule_record(cfg.answer_rule),
        # Which wording the prompts used (ours, the user's templates or Aletheia's own); a
        # scored file's prompts are the ones its `.generation.json` names.
        "prompt": settings.get("prompt_wording")
        if responses is not None
        else wording(prompt_spec(cfg)),
        # A model run: the whole EvalConfig; scoring a file: only what scoring used.
        "config": cfg.model_dump()
        if responses is None
        else cfg.model_dump(include=set(SCORING_FIELDS)),
        "splits": {},
        "warnings": warnings,
    }
    judged: dict[str, list[Judged]] = {}
    per_instance: list[dict[str, Any]] = []
    for split in instances:
        if split not in grouped:
            continue
        report["splits"][split], judged[split] = score_split(
            instances[split], grouped[split], cfg.invalid_flag_above, cfg.answer_rule
        )
        per_instance += instance_rows(split, instances[split], grouped[split], cfg.answer_rule)
    if "adv" in judged and "heldout" in judged:
        report["flip"] = flip_rates(judged["adv"], judged["heldout"])
    report["flags"] = [
        f"{split}: {flag}" for split, m in report["splits"].items() for flag in m["flags"]
    ]
    for flag in report["flags"]:
        log.warning("%s", flag)
    table_path = write_instance_table(per_instance, out)
    json_path, md_path = write_report(report, out)
    report["files"] = {
        "json": str(json_path),
        "markdown": str(md_path),
        "responses": str(out / "responses.jsonl"),
        "generated_with": str(provenance_path(out / "responses.jsonl")),
        "instances": str(table_path),
        "sc_plots": {s: str(out / f) for s, f in report["sc_plots"].items()},
    }
    return report


def _sample(
    model: str | Path | None,
    instances: dict[str, list[dict[str, Any]]],
    cfg: EvalConfig,
    backend: Backend | None,
    out: Path,
) -> list[ResponseRow]:
    if model is None and backend is None:
        raise ValueError("evaluate: give a model, a backend or a responses file")
    own_backend = backend is None
    backend = backend or open_backend(model, cfg)  # type: ignore[arg-type]
    for split, table in instances.items():
        log.info("evaluating %s on %s (%d instances, K=%d)", model, split, len(table), cfg.k)
    partial = GenerationLog(out, str(model) if model is not None else backend.name)
    try:
        return sample_splits(backend, instances, cfg, partial)
    finally:
        partial.close()
        if own_backend:
            backend.close()
