"""evaluate_policy: sample -> judge -> diagnose -> write the report folder.

Sampling reuses the sampling stage's ModelSampler (same prompts, extraction, resumable shards),
without the stage's folding of duplicate programs: pass@k needs every one of the n samples.
Each distinct (problem, program) is judged once in the sandbox; stderr of the first failing
test gives the runtime exception's name.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.errors import UserError
from pipeline.judge.interface import (
    JudgeSpec,
    first_failure,
    judge_spec,
    open_judge,
    verdict_columns,
)
from pipeline.judge.stage import load_problems
from pipeline.policy_eval import diagnostics as dg
from pipeline.policy_eval.budget import FailureTally, fit_max_tokens
from pipeline.policy_eval.config import PolicyEvalConfig
from pipeline.policy_eval.report import write_policy_report
from pipeline.sampling.config import ModelSource
from pipeline.sampling.stage import KEPT, ModelSampler
from pipeline.train.lint import lint_python
from sandbox.engines import JudgeEngine
from schemas.problem import Problem

log = logging.getLogger(__name__)

SAMPLES_FILE = "samples.parquet"
PROBLEMS_FILE = "per_problem.parquet"


def select_problems(problems: dict[str, Problem], config: PolicyEvalConfig) -> list[Problem]:
    """The split's problems (by source_split), ordered by source id, first `limit` of them."""
    chosen = [
        p for p in problems.values() if config.split is None or p.source_split == config.split
    ]
    if not chosen:
        splits = sorted({str(p.source_split) for p in problems.values()})
        raise ValueError(f"no problem has source_split={config.split!r}; the file has {splits}")
    chosen.sort(key=lambda p: (_num(p.source_id), p.problem_id))
    return chosen[: config.limit] if config.limit else chosen


def _num(source_id: str) -> tuple[int, str]:
    return (int(source_id), "") if source_id.isdigit() else (1 << 62, source_id)


def model_source(config: PolicyEvalConfig) -> ModelSource:
    return ModelSource(
        name=config.display_name,
        model=config.model,
        tier="weak",
        backend=config.backend,
        languages=["python"],
        samples_per_problem=config.samples,
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
        seed=config.seed,
        system_prompt=config.system_prompt,
        chat_template_kwargs=(
            None if config.enable_thinking is None else {"enable_thinking": config.enable_thinking}
        ),
    )


def _judge(
    rows: list[dict[str, Any]],
    problems: dict[str, Problem],
    config: PolicyEvalConfig,
    client: JudgeEngine | None,
) -> tuple[dict[int, dict[str, Any]], str | None]:
    """(index -> verdict facts for every row with a program, the judge's stamp). Each
    distinct program is judged once; the verdict columns come from the judge interface, and
    `exception` names what the first failing test raised."""
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):
        if r["code"]:
            first.setdefault((r["problem_id"], r["code"]), i)
    order = sorted(first.values())
    if not order:
        return {}, None
    specs: dict[str, JudgeSpec] = {}
    for i in order:
        pid = rows[i]["problem_id"]
        if pid not in specs:
            specs[pid] = judge_spec(problems[pid], time_limit_scale=config.time_limit_scale)
    requests = [
        specs[rows[i]["problem_id"]].request(rows[i]["language"], rows[i]["code"]) for i in order
    ]
    own = client is None
    engine = open_judge(config.sandbox) if client is None else client
    try:
        results = engine.judge(requests, progress=config.progress)
        stamp = engine.stamp
    finally:
        if own:
            engine.close()
    by_key = {}
    for i, res in zip(order, results, strict=True):
        key = (rows[i]["problem_id"], rows[i]["code"])
        bad, stderr = first_failure(res)
        by_key[key] = {
            **verdict_columns(res, specs[key[0]], stamp),
            "exception": dg.exception_name(stderr) if bad is not None else None,
        }
    return {i: by_key[(r["problem_id"], r["code"])] for i, r in enumerate(rows) if r["code"]}, stamp


def sample_facts(
    rows: list[dict[str, Any]],
    problems: dict[str, Problem],
    verdicts: dict[int, dict[str, Any]],
    lint_select: list[str],
) -> list[dict[str, Any]]:
    """One flat row per sample: what the report aggregates and the per-sample table keeps."""
    coded = [i for i, r in enumerate(rows) if r["code"]]
    # Extraction strips the fence's last newline; put it back so W292 is not charged for it.
    lints = dict(
        zip(
            coded,
            lint_python([rows[i]["code"].rstrip("\n") + "\n" for i in coded], lint_select),
            strict=True,
        )
    )
    out = []
    for i, r in enumerate(rows):
        res = verdicts.get(i)
        lint = lints.get(i)
        text = r["completion"] or ""
        out.append(
            {
                "problem_id": r["problem_id"],
                "source_id": problems[r["problem_id"]].source_id,
                "sample_index": r["sample_index"],
                "completion": text,
                "code": r["code"],
                "extraction": r["extraction"],
                "completion_chars": len(text),
                "completion_tokens": r["completion_tokens"],
                "finish_reason": r["finish_reason"],
                "truncated": r["finish_reason"] == "length",
                "verdict": res["verdict"] if res is not None else dg.NO_PROGRAM,
                "passed": res["passed"] if res is not None else 0,
                "total": res["total"] if res is not None else len(problems[r["problem_id"]].tests),
                "exception": res["exception"] if res is not None else None,
                "code_lines": dg.code_lines(r["code"]) if r["code"] else 0,
                "ruff_families": dict(lint.by_prefix) if lint is not None else None,
            }
        )
    return out


_SAMPLE_SCHEMA = pa.schema(
    [
        ("problem_id", pa.string()),
        ("source_id", pa.string()),
        ("sample_index", pa.int32()),
        ("completion", pa.string()),
        ("code", pa.string()),
        ("extraction", pa.string()),
        ("completion_chars", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("finish_reason", pa.string()),
        ("truncated", pa.bool_()),
        ("verdict", pa.string()),
        ("passed", pa.int32()),
        ("total", pa.int32()),
        ("exception", pa.string()),
        ("code_lines", pa.int32()),
        ("ruff_families", pa.string()),
    ]
)


def _sample_table(facts: list[dict[str, Any]]) -> pa.Table:
    rows = [
        {
            **f,
            "ruff_families": None
            if f["ruff_families"] is None
            else json.dumps(f["ruff_families"], sort_keys=True),
        }
        for f in facts
    ]
    return pa.Table.from_pylist(rows, schema=_SAMPLE_SCHEMA)


def build_report(
    facts: list[dict[str, Any]], config: PolicyEvalConfig, problems_path: Path, n_problems: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    table = dg.per_problem(facts, config.k)
    report = {
        "policy": config.display_name,
        "model": config.model,
        "problems_file": str(problems_path),
        "split": config.split,
        "problems": n_problems,
        "samples_per_problem": config.samples,
        "sampling": {
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
            "seed": config.seed,
        },
        "pass": dg.pass_metrics(table, config.k, config.bootstrap),
        "length": dg.length_metrics(facts),
        "ruff": {**dg.ruff_metrics(facts), "select": config.lint_select},
        "errors": dg.error_metrics(facts),
    }
    return report, table


def evaluate_policy(
    config: PolicyEvalConfig,
    problems: Path,
    out_dir: Path,
    *,
    client: JudgeEngine | None = None,
    backend_factory: Any = None,
    sample_only: bool = False,
) -> dict[str, Any]:
    """Evaluate one policy; writes out_dir/{report.json,report.md,samples.parquet,per_problem.parquet,*.png}.

    `sample_only`: stop after sampling (out_dir/shards); a later call with the same config on a
    machine with the sandbox reuses every sample and judges them (GPU nodes need no Docker)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    all_problems = load_problems(Path(problems))
    chosen = select_problems(all_problems, config)
    config = fit_max_tokens(config, chosen)  # an unset budget fits the model's context
    source = model_source(config)
    sampler = ModelSampler(source, out_dir / "shards", config.progress)
    if backend_factory is None:
        from pipeline.sampling.backends.factory import make_backend as backend_factory
    failures = FailureTally(backend_factory)
    sampler.run(chosen, failures)
    if sample_only:
        return {
            "sampled": len(sampler.shard_rows()),
            "stats": sampler.stats,
            "shards": str(out_dir / "shards"),
        }
    wanted = {p.problem_id for p in chosen}
    rows = [
        r
        for r in sampler.shard_rows()
        if r.pop("unit_status") == KEPT and r["problem_id"] in wanted
    ]
    missing = len(chosen) * config.samples - len(rows)
    if missing:
        raise UserError(
            f"{missing} of {len(chosen) * config.samples} samples failed to generate: "
            f"{failures.summary()}; run again to retry them (finished samples are kept)"
        )
    rows.sort(key=lambda r: (r["problem_id"], r["sample_index"]))
    verdicts, stamp = _judge(rows, all_problems, config, client)
    facts = sample_facts(rows, all_problems, verdicts, config.lint_select)
    report, table = build_report(facts, config, Path(problems), len(chosen))
    report["judge_stamp"] = stamp  # which engine judged the samples
    write_parquet(_sample_table(facts), out_dir / SAMPLES_FILE, _SAMPLE_SCHEMA)
    write_parquet(pa.Table.from_pylist(table), out_dir / PROBLEMS_FILE)
    write_policy_report(report, facts, out_dir)
    return report


def read_samples(out_dir: Path) -> list[dict[str, Any]]:
    rows = read_parquet(Path(out_dir) / SAMPLES_FILE, _SAMPLE_SCHEMA).to_pylist()
    for r in rows:
        r["ruff_families"] = None if r["ruff_families"] is None else json.loads(r["ruff_families"])
    return rows
