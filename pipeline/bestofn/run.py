"""`best_of_n(...)`: samples -> judge -> verifier picks -> report (the command, flow and stage
all call it).

Writes into `out_dir`: report.json, report.md, bon_curve.png, per_problem.parquet (every
problem's verdicts and picks) and verifier_responses.jsonl (every verifier response with the
samples it was shown and the sample it voted for).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pipeline.bestofn.config import MAX_LIST, BestOfNConfig
from pipeline.bestofn.judging import judge_samples
from pipeline.bestofn.metrics import has_logprobs, problem_facts, summarize
from pipeline.bestofn.report import write_report
from pipeline.bestofn.samples import load_samples
from pipeline.bestofn.verifier import Verifier, select
from pipeline.errors import UserError
from pipeline.judge.stage import load_problems
from pipeline.sampling.backends.base import Backend
from sandbox.engines import JudgeEngine

log = logging.getLogger(__name__)

RESPONSES_FILE = "verifier_responses.jsonl"
PROBLEMS_FILE = "per_problem.parquet"


def open_verifier(cfg: BestOfNConfig) -> Backend:
    """The backend `cfg.backend` names, opened on the verifier by the sampling stage's factory."""
    from pipeline.sampling.backends.factory import make_backend
    from pipeline.sampling.config import ModelSource

    source = ModelSource(
        name=cfg.display_name, model=cfg.verifier, tier="strong", backend=cfg.backend
    )
    return make_backend(source)


def _notes(cfg: BestOfNConfig, rows: list[dict[str, Any]], logprobs: bool) -> list[str]:
    notes = []
    if not logprobs:
        notes.append(
            "highest mean log-prob: left out, the samples carry no log-probabilities "
            "(a JSONL with `mean_logprob` or `logprobs` per sample gives it)"
        )
    if not cfg.output_probe:
        notes.append(
            "majority by output: not run (output_probe: false); the first sample stands in"
        )
    elif missing := sum(r["majority_pick"] is None for r in rows):
        notes.append(
            f"majority by output: {missing} problem(s) had no sample with an output on the "
            "tests' inputs (none ran cleanly, or none is Python: C++ and Java are not probed); "
            "their first sample stands in"
        )
    se = sum(v == "SE" for r in rows for v in r["verdicts"])
    if se:
        notes.append(f"{se} sample verdict(s) are SE (the sandbox failed); counted as not passed")
    if not cfg.curve:
        notes.append("curve: false, the verifier was asked at N only")
    return notes


def best_of_n(
    cfg: BestOfNConfig,
    problems: str | Path,
    samples: str | Path,
    out_dir: str | Path,
    *,
    backend: Backend | None = None,
    client: JudgeEngine | None = None,
) -> dict[str, Any]:
    """Run Best-of-N on the problems' samples into `out_dir`; returns the report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chosen = load_samples(samples, load_problems(Path(problems)), cfg.samples, cfg.limit)
    n = len(chosen[0].samples)
    if cfg.mode == "list" and n > MAX_LIST:
        raise UserError(
            f"N={n}: list mode shows at most {MAX_LIST} samples (A..H) in one prompt; use "
            "--mode knockout or --mode pairwise, or --n to take the first 8"
        )
    log.info("best-of-n: %d problems x %d samples, mode %s", len(chosen), n, cfg.mode)
    verdicts = judge_samples(
        chosen,
        cfg.sandbox,
        time_limit_scale=cfg.time_limit_scale,
        probe=cfg.output_probe,
        progress=cfg.progress,
        client=client,
    )
    sizes = list(range(1, n + 1)) if cfg.curve else [n]
    own = backend is None
    backend = backend or open_verifier(cfg)
    verifier = Verifier(backend, cfg, chosen)
    try:
        choices = select(verifier, sizes)
    finally:
        if own:
            backend.close()
    rows = problem_facts(chosen, verdicts, choices, n, cfg.seed)
    logprobs = has_logprobs(chosen)
    report: dict[str, Any] = {
        "verifier": cfg.display_name,
        "problems_file": str(problems),
        "samples": str(samples),
        "problems": len(chosen),
        "n": n,
        "config": cfg.model_dump(mode="json", exclude={"sandbox"}),
        "judge_stamp": verdicts.stamp,
        "summary": summarize(rows, cfg.bootstrap, n),
        "notes": _notes(cfg, rows, logprobs),
    }
    _write_tables(rows, verifier.log, out)
    json_path, md_path = write_report(report, out)
    report["files"] = {
        "json": str(json_path),
        "markdown": str(md_path),
        "plot": str(out / report["plot"]),
        "per_problem": str(out / PROBLEMS_FILE),
        "responses": str(out / RESPONSES_FILE),
    }
    return report


def _write_tables(rows: list[dict[str, Any]], responses: list[dict[str, Any]], out: Path) -> None:
    import pyarrow as pa

    from pipeline.common.parquet import write_parquet

    flat = [
        {k: v for k, v in r.items() if k not in ("scores", "curve")}
        | {"scores": json.dumps(r["scores"]), "curve": json.dumps(r["curve"])}
        for r in rows
    ]
    write_parquet(pa.Table.from_pylist(flat), out / PROBLEMS_FILE)
    with (out / RESPONSES_FILE).open("w", encoding="utf-8") as f:
        for r in responses:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
