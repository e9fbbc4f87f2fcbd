"""The evaluation report: a JSON document and a markdown rendering of it.

Aletheia's protocol comes first (the numbers comparable with the paper); our vote-share
metrics follow in their own, labelled section.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

ALETHEIA_COLUMNS = [
    ("instances", "n"),
    ("k", "K"),
    ("top1_accuracy", "top-1"),
    ("majority_accuracy", "maj@K"),
    ("best_of_k_accuracy", "best-of-K"),
    ("invalid_rate", "invalid"),
    ("lists", "lists 3+"),
    ("kendall_tau_b", "tau-b"),
    ("ndcg", "NDCG"),
    ("pairwise_accuracy", "pairwise"),
    ("transitivity", "transitive"),
]
VOTE_SHARE_COLUMNS = [
    ("instances", "n"),
    ("k", "K"),
    ("top1_accuracy", "mean acc"),
    ("self_consistency_accuracy", "maj@K (valid)"),
    ("pairwise_accuracy", "pairwise"),
    ("kendall_tau_b", "tau-b (defined)"),
    ("kendall_tau_b_instances", "tau-b n"),
    ("ndcg", "NDCG (linear)"),
]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    if isinstance(v, list):
        return "/".join(str(x) for x in v)
    return str(v)


def _table(splits: dict[str, Any], section: str, columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| split | " + " | ".join(h for _, h in columns) + " |"]
    lines += ["| --- | " + " | ".join("---:" for _ in columns) + " |"]
    for split, m in splits.items():
        lines += [f"| {split} | " + " | ".join(_fmt(m[section][k]) for k, _ in columns) + " |"]
    return lines


def to_markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    who = report.get("model") or report.get("responses")
    splits = report["splits"]
    lines = [f"# Verifier evaluation: `{who}`", ""]
    if report.get("responses"):
        lines += [f"Scored from the responses file `{report['responses']}` (no model loaded).", ""]
    else:
        lines += [
            f"K = {cfg['k']} listwise responses per instance, prompt style `{cfg['style']}`.",
            "",
        ]
    lines += ["## Aletheia protocol", ""]
    lines += _table(splits, "aletheia", ALETHEIA_COLUMNS)
    lines += [
        "",
        (
            "top-1: the first response; maj@K: majority over K responses, invalid answers "
            "counted as votes; ranking (lists of 3+): each pair of candidates asked as a "
            "2-candidate prompt, candidates ranked by wins; tau-b per list, an undefined tau "
            "scored -1; NDCG with gain 2^pass_rate - 1; pairwise: share of valid pair verdicts "
            "that prefer the higher pass rate."
        ),
        "",
        "## Vote-share metrics (ours, not comparable with the paper)",
        "",
    ]
    lines += _table(splits, "vote_share", VOTE_SHARE_COLUMNS)
    lines += [
        "",
        (
            "Ranking by the share of the K listwise responses that pick each candidate; "
            "maj@K over valid answers only; tau-b averaged over instances where it is defined; "
            "NDCG with linear gain."
        ),
    ]
    letters = sorted(
        {g for m in splits.values() for g in m["vote_share"]["accuracy_by_gold_position"]}
    )
    lines += ["", "## Mean accuracy by gold position", ""]
    lines += [
        "| split | " + " | ".join(letters) + " |",
        "| --- | " + " | ".join("---:" for _ in letters) + " |",
    ]
    for split, m in splits.items():
        by = m["vote_share"]["accuracy_by_gold_position"]
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
