"""Several policy reports side by side: the first is the baseline; every other gets paired differences.

Differences are over the problems both reports evaluated (by problem_id), with a seeded
percentile bootstrap over those problems, so base-vs-trained intervals account for the
pairing. Scalars compared: pass@k, mean length, Ruff per 100 lines by severity, error shares.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.policy_eval.passk import paired_bootstrap_difference
from pipeline.policy_eval.report import fmt, read_report
from pipeline.policy_eval.run import PROBLEMS_FILE
from pipeline.policy_eval.severity import SEVERITIES

COLUMNS = (
    "pass@1",
    "tokens_mean",
    "chars_mean",
    "truncated",
    "ruff_error",
    "ruff_warning",
    "ruff_convention",
    "AC",
    "WA",
    "RE",
    "TLE",
    "CE",
    "NO_PROGRAM",
)


def summary_row(report: dict[str, Any]) -> dict[str, Any]:
    """The paper-style row: pass@1, length, Ruff per 100 lines by severity, error-type shares."""
    row: dict[str, Any] = {"policy": report["policy"]}
    for k, v in report["pass"].items():
        if k.startswith("pass@"):
            row[k] = v["value"]
    row["tokens_mean"] = report["length"]["tokens"]["mean"]
    row["chars_mean"] = report["length"]["chars"]["mean"]
    row["truncated"] = report["length"]["truncated_share"]
    for s in SEVERITIES:
        row[f"ruff_{s}"] = report["ruff"]["by_severity"][s]["per_100_lines"]
    for t, v in report["errors"]["by_type"].items():
        row[t] = v["share"]
    return row


def _per_problem(folder: Path) -> dict[str, dict[str, Any]]:
    path = Path(folder) / PROBLEMS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no per-problem table at {path}")
    return {r["problem_id"]: r for r in pq.read_table(path).to_pylist()}


def compare_reports(folders: list[Path], *, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    if len(folders) < 2:
        raise ValueError("compare needs at least two report folders (the first is the baseline)")
    reports = [read_report(f) for f in folders]
    tables = [_per_problem(f) for f in folders]
    base, base_table = reports[0], tables[0]
    ks = [k for k in base["pass"] if k.startswith("pass@")]
    diffs = []
    for rep, table in zip(reports[1:], tables[1:], strict=True):
        common = sorted(set(base_table) & set(table))
        if not common:
            raise ValueError(
                f"{rep['policy']} and {base['policy']} share no problem: nothing to compare"
            )
        entry: dict[str, Any] = {"policy": rep["policy"], "problems": len(common)}
        for k in ks:
            if k not in next(iter(table.values())):
                continue
            d, lo, hi = paired_bootstrap_difference(
                [base_table[p][k] for p in common],
                [table[p][k] for p in common],
                resamples=resamples,
                seed=seed,
            )
            entry[k] = {"difference": d, "ci_low": lo, "ci_high": hi}
        diffs.append(entry)
    return {
        "baseline": base["policy"],
        "rows": [summary_row(r) for r in reports],
        "differences": diffs,
        "interval": f"paired percentile bootstrap over shared problems, {resamples} resamples, 95%, seed {seed}",
    }


def to_markdown(cmp: dict[str, Any]) -> str:
    ks = sorted(
        {c for r in cmp["rows"] for c in r if c.startswith("pass@")}, key=lambda c: int(c[5:])
    )
    cols = ks + [
        c for c in COLUMNS if not c.startswith("pass@") and any(c in r for r in cmp["rows"])
    ]
    lines = [
        "# Policy comparison",
        "",
        (
            f"Baseline: {cmp['baseline']}. Ruff columns: violations per 100 "
            "lines by severity; outcome columns: share of samples."
        ),
        "",
        "| policy | " + " | ".join(cols) + " |",
        "| --- |" + " ---: |" * len(cols),
    ]
    lines += [
        "| " + r["policy"] + " | " + " | ".join(fmt(r.get(c)) for c in cols) + " |"
        for r in cmp["rows"]
    ]
    lines += [
        "",
        "## Differences from the baseline",
        "",
        "| policy | metric | difference | interval |",
        "| --- | --- | ---: | --- |",
    ]
    for d in cmp["differences"]:
        for k, v in d.items():
            if isinstance(v, dict):
                lines.append(
                    f"| {d['policy']} | {k} | {fmt(v['difference'])} | "
                    f"[{fmt(v['ci_low'])}, {fmt(v['ci_high'])}] |"
                )
    lines += ["", f"Intervals: {cmp['interval']}.", ""]
    return "\n".join(lines)


def write_comparison(folders: list[Path], out_dir: Path, **kwargs: Any) -> dict[str, Any]:
    cmp = compare_reports(folders, **kwargs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "comparison.json").write_text(json.dumps(cmp, indent=2, sort_keys=True) + "\n")
    (out_dir / "comparison.md").write_text(to_markdown(cmp))
    return cmp
