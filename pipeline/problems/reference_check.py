"""Run every problem's reference solutions in the sandbox; quarantine problems whose reference fails.

A handful of MBPP's references are known to be wrong or flaky against their own asserts;
this measures it on whatever set it is given (`aletheia problems check-references`) and
never drops one silently: each failing problem becomes a quarantine row with its verdict,
its first failing test and that test's stderr, and the rest go to `<stem>.verified.parquet`.
A problem with no reference is kept and counted (nothing to check).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.config import SandboxSection
from pipeline.judge.interface import first_failure, judge_spec, open_judge, verdict_columns
from pipeline.sampling.references import reference_candidates
from sandbox.engines import JudgeEngine
from sandbox.models import JudgeResult
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import models_to_table, table_to_models

REFERENCE_SCHEMA = pa.schema(
    [
        ("problem_id", pa.string()),
        ("source", pa.string()),
        ("source_id", pa.string()),
        ("source_split", pa.string()),
        ("candidate_id", pa.string()),
        ("verdict", pa.string()),
        ("passed", pa.int32()),
        ("total", pa.int32()),
        ("first_failing_test", pa.int32()),
        ("stderr", pa.string()),
    ]
)


def check_references(
    problems: Path,
    out_dir: Path,
    *,
    client: JudgeEngine | None = None,
    sandbox: SandboxSection | None = None,
    time_limit_scale: float = 1.0,
    progress: bool = True,
) -> dict[str, Any]:
    """Writes references.parquet, problems.verified.parquet (+ .quarantine.parquet) and report.json.

    `client`: the judge engine to use; None opens the one `sandbox` names (docker by default)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    probs = table_to_models(read_parquet(Path(problems), PROBLEM_SCHEMA), Problem)
    by_id = {p.problem_id: p for p in probs}
    refs = [c for c in reference_candidates(probs) if c.reference_correct]
    specs = {
        pid: judge_spec(by_id[pid], time_limit_scale=time_limit_scale)
        for pid in sorted({c.problem_id for c in refs})
    }
    requests = [specs[c.problem_id].request(c.language, c.code) for c in refs]
    results: list[JudgeResult] = []
    stamp = None
    if requests:
        own = client is None
        engine = open_judge(sandbox) if client is None else client
        try:
            results = engine.judge(requests, progress=progress)
            stamp = engine.stamp
        finally:
            if own:
                engine.close()
    rows = []
    for c, r in zip(refs, results, strict=True):
        p = by_id[c.problem_id]
        columns = verdict_columns(r, specs[c.problem_id], stamp or "")
        bad, stderr = first_failure(r)
        rows.append(
            {
                "problem_id": p.problem_id,
                "source": p.source,
                "source_id": p.source_id,
                "source_split": p.source_split,
                "candidate_id": c.candidate_id,
                "verdict": columns["verdict"],
                "passed": columns["passed"],
                "total": columns["total"],
                "first_failing_test": bad,
                "stderr": stderr[-500:] if stderr else None,
            }
        )
    failing: dict[str, dict[str, Any]] = {}
    for row in rows:  # a problem fails when none of its correct-claimed references passes
        failing.setdefault(row["problem_id"], row)
        if row["verdict"] == "AC":
            failing[row["problem_id"]] = {"verdict": "AC"}
    failed = {pid: r for pid, r in failing.items() if r["verdict"] != "AC"}
    quarantine = [
        Quarantine(
            stage="reference_check",
            source=by_id[pid].source,
            source_row_id=by_id[pid].source_id,
            field="solutions",
            reason=(
                f"reference solution fails its own tests: verdict {r['verdict']} "
                f"({r['passed']}/{r['total']} passed; first failing test {r['first_failing_test']})"
                + (
                    f"; stderr: {r['stderr'].strip().splitlines()[-1][:200]}"
                    if r.get("stderr")
                    else ""
                )
            ),
        )
        for pid, r in sorted(failed.items(), key=lambda kv: by_id[kv[0]].source_id)
    ]
    kept = [p for p in probs if p.problem_id not in failed]
    stem = Path(problems).name.removesuffix(".parquet")
    write_parquet(
        pa.Table.from_pylist(rows, schema=REFERENCE_SCHEMA),
        out_dir / "references.parquet",
        REFERENCE_SCHEMA,
    )
    write_parquet(
        models_to_table(kept, PROBLEM_SCHEMA), out_dir / f"{stem}.verified.parquet", PROBLEM_SCHEMA
    )
    write_parquet(
        models_to_table(quarantine, QUARANTINE_SCHEMA),
        out_dir / f"{stem}.verified.quarantine.parquet",
        QUARANTINE_SCHEMA,
    )
    checked = {r["problem_id"] for r in rows}
    report = {
        "problems": len(probs),
        "with_reference": len(checked),
        "without_reference": len(probs) - len(checked),
        "reference_pass": len(checked) - len(failed),
        "reference_pass_rate": (len(checked) - len(failed)) / len(checked) if checked else None,
        "verdicts": dict(Counter(r["verdict"] for r in rows)),
        "quarantined": [{"source_id": q.source_row_id, "reason": q.reason} for q in quarantine],
        "judge_stamp": stamp,  # which engine ran the references (None: none to run)
    }
    (out_dir / "reference_check.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
