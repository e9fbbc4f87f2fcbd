"""`evaluate(...)`: the entry point the CLI and the `evaluate-verifier` flow call.

Two ways in: sample responses from a model (a backend), or score a responses file written
elsewhere (`responses=`, no model loaded). Both end in the same scoring and report.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import wording
from pipeline.evaluate.checkpoint import GenerationLog
from pipeline.evaluate.checkpoint import discard as discard_partial
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.metrics import Judged, flip_rates
from pipeline.evaluate.per_instance import INSTANCES_FILE, instance_rows, write_instance_table
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
    allow_partial: bool = False,
) -> dict[str, Any]:
    """Score a verifier on the eval configs (`config.split` of each: `test` by default, or
    `full`); write report.json, report.md, responses.jsonl, the per-instance table
    instances.parquet, and a self-consistency plot and a reliability diagram per split.

    Without `responses`: sample from `backend` (default: the one `config.backend` names, opened
    on `model`: the transformers backend, an OpenAI-compatible server such as vLLM or SGLang,
    or offline vLLM workers; or pass an open `Backend`). With `responses` (a file
    in the format of pipeline/evaluate/responses.py): score it against `data_dir` without a
    model; its splits are the ones scored, and its generation settings are read from the
    `<stem>.generation.json` beside it (pipeline/evaluate/provenance.py; "unknown" where it
    gives none), not from `config`. `config` may be a plain dict of EvalConfig fields.
    Generations are kept as they finish (pipeline/evaluate/checkpoint.py): a run started again
    on the same `out_dir` after a crash generates only what is missing.

    The report's `coverage` says, per split, how many of its rows were answered. A responses
    file that leaves rows of a split it answers unanswered is refused (ResponsesError,
    nothing written): its metrics would read as the split's. `allow_partial` scores it, the
    partial coverage said in the report and its summary.
    """
    cfg = config if isinstance(config, EvalConfig) else EvalConfig.model_validate(config or {})
    out = Path(out_dir)
    warnings: list[str] = []
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
        totals = {split: len(table) for split, table in instances.items()}
        # checked before anything is written: a refused file leaves no report behind
        grouped = group_responses(rows, instances, warnings)
        short = partial_coverage(coverage(grouped, totals))
        if short and not (allow_partial or _limited_run(settings, grouped, totals)):
            raise ResponsesError(
                f"{responses} answers {short} ({cfg.split} split): its metrics would be over "
                "those rows alone; answer every row, or score them with --allow-partial "
                "(the report then says the coverage)"
            )
    else:
        # Read every split before loading a model, so a missing one fails at once.
        whole = {s: read_config(data_dir, s, None, cfg.split) for s in cfg.splits}
        totals = {s: table.num_rows for s, table in whole.items()}
        instances = {s: table.slice(0, cfg.limit or None).to_pylist() for s, table in whole.items()}
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
    if responses is None:
        grouped = group_responses(rows, instances, warnings)
    covered = coverage(grouped, totals)
    if short := partial_coverage(covered):
        log.warning("partial coverage: the responses answer %s", short)
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
        # per split: the rows answered (a listwise response) of the rows the split has
        "coverage": covered,
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
    write_instance_table(per_instance, out)
    write_report(report, out)
    return with_files(report, out)


def with_files(report: dict[str, Any], out: Path) -> dict[str, Any]:
    """A report (as report.json holds it) with where each of its files is under `out`."""
    files = {
        "json": str(out / "report.json"),
        "markdown": str(out / "report.md"),
        "responses": str(out / "responses.jsonl"),
        "generated_with": str(provenance_path(out / "responses.jsonl")),
        "instances": str(out / INSTANCES_FILE),
        "sc_plots": {s: str(out / f) for s, f in report["sc_plots"].items()},
        "reliability_plots": {s: str(out / f) for s, f in report["reliability_plots"].items()},
    }
    return report | {"files": files}


def refuse_a_stage_folder(out_dir: str | Path, flag: str = "--out") -> None:
    """A folder another stage wrote, or a build's own evaluation after publish (its
    marker names the build: out/demo/eval), is not where this evaluation goes: its report
    would be taken for the build's, and the build would redo its work over it. An
    evaluation of its own there (run before, its marker naming no build) is rerun or reused
    by its marker. UserError, one line."""
    from pipeline.common.stage import MARKER
    from pipeline.errors import UserError

    marker = Path(out_dir) / MARKER
    if not marker.is_file():
        return
    try:
        found = json.loads(marker.read_text())
        stage, build = found.get("stage", "a stage"), (found.get("stats") or {}).get("build")
    except (OSError, ValueError, AttributeError):
        stage, build = "a stage", None
    if stage == "evaluate" and not build:
        return
    whose = f"build {build}'s `evaluate`" if build else f"the build's `{stage}`"
    raise UserError(
        f"{flag} {out_dir}: {whose} stage writes there (its marker {marker.name}); give "
        "this evaluation a folder of its own"
    )


def coverage(
    grouped: dict[str, dict[int, Any]], totals: dict[str, int]
) -> dict[str, dict[str, int]]:
    """Per split: how many of its rows have responses (`answered`) of all its `rows`."""
    return {
        split: {"answered": len(grouped.get(split, {})), "rows": rows}
        for split, rows in totals.items()
    }


def _limited_run(
    settings: dict[str, Any], grouped: dict[str, dict[int, Any]], totals: dict[str, int]
) -> bool:
    """The responses of a run asked for the first N rows of each split (`--limit N`, recorded
    beside them): they answer exactly those rows, so they are partial on purpose."""
    limit = settings.get("limit")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return False
    return all(
        sorted(grouped.get(split, {})) == list(range(min(limit, rows)))
        for split, rows in totals.items()
    )


def partial_coverage(covered: dict[str, dict[str, int]]) -> str:
    """ "3 of heldout's 39 rows; ..." for the splits not wholly answered ("" when none)."""
    return "; ".join(
        f"{c['answered']} of {split}'s {c['rows']} rows"
        for split, c in covered.items()
        if c["answered"] < c["rows"]
    )


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
