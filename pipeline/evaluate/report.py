"""The evaluation report: a JSON document and a markdown rendering of it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

_COLUMNS = [
    ("instances", "n"),
    ("k", "K"),
    ("top1_accuracy", "top-1"),
    ("self_consistency_accuracy", "maj@K"),
    ("best_of_n_accuracy", "best-of-K"),
    ("invalid_rate", "invalid"),
    ("pairwise_accuracy", "pairwise"),
    ("kendall_tau_b", "tau-b"),
    ("ndcg", "NDCG"),
]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    return str(v)


def to_markdown(report: dict[str, Any]) -> str:
    lines = [f"# Verifier evaluation: `{report['model']}`", ""]
    lines += [
        f"K = {report['config']['k']} responses per instance, prompt variant `{report['config']['variant']}`.",
        "",
    ]
    lines += ["| split | " + " | ".join(h for _, h in _COLUMNS) + " |"]
    lines += ["| --- | " + " | ".join("---:" for _ in _COLUMNS) + " |"]
    for split, m in report["splits"].items():
        lines += [f"| {split} | " + " | ".join(_fmt(m[k]) for k, _ in _COLUMNS) + " |"]
    letters = sorted({g for m in report["splits"].values() for g in m["accuracy_by_gold_position"]})
    lines += ["", "## Top-1 accuracy by gold position", ""]
    lines += [
        "| split | " + " | ".join(letters) + " |",
        "| --- | " + " | ".join("---:" for _ in letters) + " |",
    ]
    for split, m in report["splits"].items():
        by = m["accuracy_by_gold_position"]
        lines += [
            f"| {split} | " + " | ".join(_fmt(by[g]) if g in by else "-" for g in letters) + " |"
        ]
    if report.get("flip"):
        lines += ["", "## Adv vs Heldout: decision flips per bias type", ""]
        lines += [
            "| bias type | pairs | flip rate | correct -> wrong |",
            "| --- | ---: | ---: | ---: |",
        ]
        for bias, f in report["flip"].items():
            if bias == "unpaired":
                continue
            lines += [
                f"| {bias} | {int(f['n'])} | {_fmt(f['flip_rate'])} | {_fmt(f['correct_to_wrong'])} |"
            ]
        if "unpaired" in report["flip"]:
            lines += [
                "",
                f"{int(report['flip']['unpaired']['n'])} Adv rows had no unambiguous Heldout partner.",
            ]
    lines += [
        "",
        (
            "top-1: mean share of correct responses; maj@K: majority vote; best-of-K: any response "
            "correct; pairwise / tau-b / NDCG: the verifier's ranking (vote share over the K "
            "responses) against the candidates' pass rates."
        ),
    ]
    return "\n".join(lines) + "\n"


def _clean(obj: Any) -> Any:
    """NaN is not JSON: write null."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def write_report(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / "report.json", out / "report.md"
    js.write_text(json.dumps(_clean(report), indent=2))
    md.write_text(to_markdown(report))
    return js, md
