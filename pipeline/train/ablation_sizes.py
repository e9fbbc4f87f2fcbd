"""The ablation across sizes: the paper's relative-importance view from the per-size tables.

Each size's ablation (`aletheia ablation -c configs/ablation/<size>.yaml`) writes
comparison.json. From those, per size, each of the three choices the ablation separates is
measured as GRPO-Think (at the size's `budget`) minus the cell that lacks that one choice:

- thinking: GRPO-Think - GRPO-Instruct (same recipe, no thinking traces);
- negatives: GRPO-Think - RAFT-Think (on-policy both, RAFT never learns from a wrong response);
- on-policy: GRPO-Think - DPO-Think (thinking and negatives both, DPO offline).

The measure is the mean of the metric over the eval splits (the Pareto plot's accuracy), and
per split. A choice's share is its |gain| over the sum of the three |gains| at that size (the
"relative importance"); GRPO-Think's budgets (4k / 8k / 16k) are listed beside it where the
size trained them. A missing cell leaves its choice undefined (`-`), never 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AXES: dict[str, str] = {  # choice -> the cell without it, compared with GRPO-Think
    "thinking": "grpo-instruct",
    "negatives": "raft-think",
    "on_policy": "dpo-think",
}
BUDGETS = ("4k", "8k", "16k")
SIZE_ORDER = {"1.5b": 0, "7b": 1, "14b": 2}


def _base(row: dict[str, Any]) -> str:
    return row.get("base_recipe") or row["recipe"].split("@")[0]


def _value(row: dict[str, Any] | None, metric: str, split: str | None) -> float | None:
    if row is None:
        return None
    if split is None:
        return row["mean"].get(metric)
    return row["metrics"].get(split, {}).get(metric)


def _row(result: dict[str, Any], recipe: str, budget: str | None) -> dict[str, Any] | None:
    for row in result["rows"]:
        if _base(row) == recipe and (budget is None or row.get("budget") in (budget, None)):
            return row
    return None


def size_effects(result: dict[str, Any], metric: str) -> dict[str, Any]:
    """One size's gains per choice (mean and per split), shares, and GRPO-Think per budget."""
    grpo = _row(result, "grpo-think", result.get("budget"))
    splits = list(result["splits"])
    gains: dict[str, Any] = {}
    for axis, other in AXES.items():
        without = _row(result, other, None)
        per_split = {}
        for split in [None, *splits]:
            a, b = _value(grpo, metric, split), _value(without, metric, split)
            per_split[split or "mean"] = None if a is None or b is None else a - b
        gains[axis] = {"with": _value(grpo, metric, None), "without": _value(without, metric, None),
                       "gain": per_split["mean"],
                       "per_split": {s: per_split[s] for s in splits}}  # fmt: skip
    defined = [abs(g["gain"]) for g in gains.values() if g["gain"] is not None]
    total = sum(defined)
    for g in gains.values():
        g["share"] = abs(g["gain"]) / total if g["gain"] is not None and total > 0 else None
    budgets = {}
    for budget in BUDGETS:
        row = next((r for r in result["rows"]
                    if _base(r) == "grpo-think" and r.get("budget") == budget), None)  # fmt: skip
        budgets[budget] = _value(row, metric, None)
    return {"size": result["size"], "budget": result.get("budget"), "gains": gains,
            "grpo_think_by_budget": budgets}  # fmt: skip


def read_comparison(path: Path) -> dict[str, Any]:
    """A size's comparison.json (the file, or the ablation's out_dir holding it)."""
    path = Path(path)
    file = path / "comparison.json" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no comparison.json (run that size's ablation first)")
    return json.loads(file.read_text())


def across_sizes(paths: list[Path], metric: str | None = None) -> dict[str, Any]:
    """The view over several sizes' comparisons, smallest size first."""
    results = [read_comparison(p) for p in paths]
    if not results:
        raise ValueError("no comparison given")
    metric = metric or results[0].get("pareto", {}).get("metric", "top1_accuracy")
    sizes = [r["size"] for r in results]
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"two comparisons of one size: {sizes}")
    results.sort(key=lambda r: SIZE_ORDER.get(r["size"], len(SIZE_ORDER)))
    return {
        "metric": metric,
        "sources": [str(p) for p in paths],
        "sizes": [size_effects(r, metric) for r in results],
    }


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def to_markdown(view: dict[str, Any]) -> str:
    metric = view["metric"]
    head = ["size"] + [f"{a} gain" for a in AXES] + [f"{a} share" for a in AXES]
    head += [f"GRPO-Think {b}" for b in BUDGETS]
    lines = [
        "# The ablation across sizes",
        "",
        (
            f"Gain of each choice = GRPO-Think minus the cell without it (mean {metric} over "
            "the eval splits): thinking vs GRPO-Instruct, negatives vs RAFT-Think, on-policy vs "
            "DPO-Think. Share = |gain| / sum of the three |gains| at that size."
        ),
        "",
        "| " + " | ".join(head) + " |",
        "| --- |" + " ---: |" * (len(head) - 1),
    ]
    for s in view["sizes"]:
        g = s["gains"]
        cells = [s["size"]] + [_fmt(g[a]["gain"], signed=True) for a in AXES]
        cells += [_fmt(g[a]["share"]) for a in AXES]
        cells += [_fmt(s["grpo_think_by_budget"][b]) for b in BUDGETS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_across_sizes(paths: list[Path], out: Path, metric: str | None = None) -> dict[str, Any]:
    """across_sizes.json and across_sizes.md in `out`."""
    view = across_sizes(paths, metric)
    out.mkdir(parents=True, exist_ok=True)
    (out / "across_sizes.json").write_text(json.dumps(view, indent=2) + "\n")
    (out / "across_sizes.md").write_text(to_markdown(view))
    view["files"] = {n: str(out / n) for n in ("across_sizes.json", "across_sizes.md")}
    return view
