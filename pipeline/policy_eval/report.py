"""A policy report folder: report.json, report.md and PNG plots (lengths, Ruff severities, error types)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt

from pipeline.policy_eval.severity import SEVERITIES

_PNG_META = {"Software": None}  # no software tag: same data, same bytes


def fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _pass_line(name: str, m: dict[str, Any]) -> str:
    return f"| {name} | {fmt(m['value'])} | [{fmt(m['ci_low'])}, {fmt(m['ci_high'])}] | {m['problems']} |"


def to_markdown(report: dict[str, Any]) -> str:
    r = report
    lines = [
        f"# Policy report: {r['policy']}",
        "",
        (
            f"{r['problems']} problems (split `{r['split'] or 'all'}`), "  # None: --split all
            f"{r['samples_per_problem']} sample(s) each; "
            f"sampling {json.dumps(r['sampling'])}."
        ),
        "",
        "## Pass@k",
        "",
        "| metric | value | interval | problems |",
        "| --- | ---: | --- | ---: |",
    ]
    lines += [_pass_line(k, v) for k, v in r["pass"].items() if k.startswith("pass@")]
    lines += [
        "",
        f"Interval: {r['pass']['interval']}.",
        "",
        "## Generation length",
        "",
        "| unit | mean | median | p90 |",
        "| --- | ---: | ---: | ---: |",
    ]
    for unit in ("tokens", "chars"):
        d = r["length"][unit]
        lines.append(
            f"| {unit} | {fmt(d['mean'], 1)} | {fmt(d['median'], 1)} | {fmt(d['p90'], 1)} |"
        )
    lines += [
        "",
        f"Truncated (hit max_tokens): {fmt(r['length']['truncated_share'])}.",
        "",
        "## Ruff profile",
        "",
        (
            f"{r['ruff']['programs']} programs, {r['ruff']['lines']} non-blank lines, rules "
            f"{','.join(r['ruff']['select'])}; clean share {fmt(r['ruff']['clean_share'])}."
        ),
        "",
        "| group | count | per program | per 100 lines |",
        "| --- | ---: | ---: | ---: |",
    ]
    t = r["ruff"]["total"]
    lines.append(f"| all | {t['count']} | {fmt(t['per_program'])} | {fmt(t['per_100_lines'])} |")
    for s in SEVERITIES:
        v = r["ruff"]["by_severity"][s]
        lines.append(
            f"| severity {s} | {v['count']} | {fmt(v['per_program'])} | {fmt(v['per_100_lines'])} |"
        )
    for f, v in r["ruff"]["by_family"].items():
        lines.append(
            f"| family {f} ({v['severity']}) | {v['count']} | {fmt(v['per_program'])} | "
            f"{fmt(v['per_100_lines'])} |"
        )
    lines += ["", "## Execution outcomes", "", "| type | count | share |", "| --- | ---: | ---: |"]
    lines += [
        f"| {k} | {v['count']} | {fmt(v['share'])} |" for k, v in r["errors"]["by_type"].items()
    ]
    exc = r["errors"]["top_exceptions"]
    lines += [
        "",
        "Most common runtime exceptions: "
        + (", ".join(f"{e['name']} ({e['count']})" for e in exc) if exc else "none")
        + ".",
        "",
    ]
    lines += [
        "Tables: `samples.parquet` (one row per sample), `per_problem.parquet` (n, c, pass@k).",
        "",
    ]
    return "\n".join(lines)


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata=_PNG_META)
    plt.close(fig)
    return path


def write_plots(report: dict[str, Any], facts: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    paths = []
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.hist([f["completion_chars"] for f in facts] or [0], bins=20)
    ax.set_xlabel("completion length (characters)")
    ax.set_ylabel("samples")
    paths.append(_save(fig, out_dir / "length.png"))
    fig, ax = plt.subplots(figsize=(5, 3))
    sev = report["ruff"]["by_severity"]
    ax.bar(list(SEVERITIES), [sev[s]["per_100_lines"] or 0 for s in SEVERITIES])
    ax.set_ylabel("Ruff violations per 100 lines")
    paths.append(_save(fig, out_dir / "ruff_severity.png"))
    fig, ax = plt.subplots(figsize=(6, 3))
    types = report["errors"]["by_type"]
    ax.bar(list(types), [v["count"] for v in types.values()])
    ax.set_ylabel("samples")
    ax.tick_params(axis="x", labelrotation=45)
    paths.append(_save(fig, out_dir / "error_types.png"))
    return paths


def write_policy_report(report: dict[str, Any], facts: list[dict[str, Any]], out_dir: Path) -> None:
    out_dir = Path(out_dir)
    plots = write_plots(report, facts, out_dir)
    report["plots"] = [p.name for p in plots]
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (out_dir / "report.md").write_text(to_markdown(report))


def read_report(folder: Path) -> dict[str, Any]:
    path = Path(folder) / "report.json" if Path(folder).is_dir() else Path(folder)
    if not path.is_file():
        raise FileNotFoundError(f"no policy report at {path}")
    return json.loads(path.read_text())
