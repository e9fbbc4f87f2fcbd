"""The ablation's comparison: one table (top-1, maj@K, tau-b, NDCG per eval split; Markdown +
JSON) and a cost-vs-accuracy Pareto plot, from the evaluated cells of `pipeline.train.ablation`.

Cost is what `train()` measured (summary.json `cost`): device-hours (wall time x processes; on
a CPU run they are CPU-hours) and tokens (TRL's count of prompt + completion tokens trained on;
RAFT adds the tokens it sampled). DPO's cost leaves out sampling its pairs, which the dataset
build paid for. Accuracy is the mean of `pareto_metric` over the eval splits.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pipeline.train.ablation import eval_split, read_cell
from pipeline.train.ablation_config import AblationConfig
from pipeline.train.recipes import recipe_spec

METRICS = {  # column -> the report's key in splits.<split>.aletheia
    "top-1": "top1_accuracy",
    "maj@K": "majority_accuracy",
    "tau-b": "kendall_tau_b",
    "NDCG": "ndcg",
}
COST_AXES = {"device_hours": "device-hours (wall x processes)", "tokens": "tokens trained on"}


def _num(value: Any) -> float | None:
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def cell_row(cfg: AblationConfig, entry: str) -> dict[str, Any] | None:
    """A table row for an evaluated cell (None for a cell without a report)."""
    state = read_cell(cfg, entry)
    if state.get("status") != "evaluated":
        return None
    report = json.loads(Path(state["report"]).read_text())
    recipe, budget = cfg.cell(entry)
    spec = recipe_spec(recipe)
    summary = state["summary"]
    metrics: dict[str, dict[str, Any]] = {}
    for split in cfg.eval_splits:
        s = report["splits"].get(split)
        if s is None:
            continue
        a = s["aletheia"]
        metrics[split] = {key: _num(a.get(key)) for key in METRICS.values()}
        metrics[split] |= {"k": a.get("k"), "instances": a.get("instances"), "flags": s["flags"]}
    means = {
        key: _mean([m[key] for m in metrics.values()]) for key in METRICS.values()
    }  # over the splits that have a value
    return {
        "recipe": entry,
        "base_recipe": recipe,
        "budget": budget,
        "title": spec.get("title", recipe) + (f" {budget}" if budget else ""),
        "axes": spec.get("axes", {}),
        "model": summary.get("model_path"),
        "base_model": state.get("base_model") or _base_model(summary),
        "cost": summary.get("cost", {}),
        "eval_s": state.get("eval_s"),
        "metrics": metrics,
        "mean": means,
    }


def _base_model(summary: dict[str, Any]) -> str | None:
    path = Path(summary.get("output_dir", "")) / "config.json"
    return json.loads(path.read_text()).get("model") if path.exists() else None


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def pareto_front(points: list[tuple[str, float, float]]) -> list[str]:
    """Names of the points no other point beats: as cheap or cheaper and at least as accurate,
    strictly better in one of the two."""
    front = []
    for name, cost, acc in points:
        beaten = any(
            c <= cost and a >= acc and (c < cost or a > acc) for n, c, a in points if n != name
        )
        if not beaten:
            front.append(name)
    return front


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _cost_fmt(row: dict[str, Any]) -> tuple[str, str]:
    c = row["cost"]
    hours = c.get("device_hours")
    tokens = c.get("tokens")
    return ("-" if hours is None else f"{hours:.4g} ({c.get('device', '?')})",
            "-" if tokens is None else f"{tokens:,.0f}")  # fmt: skip


def to_markdown(result: dict[str, Any]) -> str:
    splits = result["splits"]
    yes = {True: "yes", False: "no"}
    where = f" (split `{result['eval_split']}`)" if result["eval_split"] else ""
    head = ["recipe", "thinking", "negatives", "on-policy"]
    head += [f"{s} {m}" for s in splits for m in METRICS] + ["device-hours", "tokens"]
    lines = [
        f"# {result['name']}: size {result['size']}",
        "",
        *[f"> {note}\n" for note in result.get("notes", [])],
        f"Every checkpoint evaluated with the same protocol on {', '.join(splits)}{where}.",
        (
            f"K = {result['k']} responses per instance (maj@K); tau-b and NDCG from the "
            "round-robin pair prompts (Aletheia's protocol, `pipeline/evaluate/protocol.py`)."
        ),
        "",
        "| " + " | ".join(head) + " |",
        "|" + " --- |" * 4 + " ---: |" * (len(head) - 4),
    ]
    for row in result["rows"]:
        axes = row["axes"]
        cells = [row["title"]] + [
            yes.get(axes.get(k), "?") for k in ("thinking", "negatives", "on_policy")
        ]
        for s in splits:
            m = row["metrics"].get(s, {})
            cells += [_fmt(m.get(key)) for key in METRICS.values()]
        cells += list(_cost_fmt(row))
        lines.append("| " + " | ".join(cells) + " |")
    flagged = {
        r["title"]: [s for s, m in r["metrics"].items() if m["flags"]] for r in result["rows"]
    }
    if any(flagged.values()):
        lines += [
            "",
            "Flagged by the evaluation (most answers invalid; see each cell's eval/report.md):",
            "",
        ]
        lines += [f"- {t}: {', '.join(splits)}" for t, splits in flagged.items() if splits]
    if result["failed"]:
        lines += ["", "Failed cells (re-run the ablation to redo them alone):", ""]
        lines += [f"- {r}: {e}" for r, e in result["failed"].items()]
    p = result["pareto"]
    lines += [
        "",
        (
            f"Pareto plot: `pareto.png` (mean {p['metric']} over the splits against each cost). "
            f"On the front by device-hours: {', '.join(p['front']['device_hours']) or '-'}; "
            f"by tokens: {', '.join(p['front']['tokens']) or '-'}."
        ),
        "",
    ]
    return "\n".join(lines)


def notes(cfg: AblationConfig) -> list[str]:
    """What a reader must know before reading the numbers: the config's note, and that the
    answers were constrained (ours, not Aletheia's protocol) when they were."""
    out = [cfg.note] if cfg.note else []
    if cfg.evaluation.get("constrain_answer"):
        out.append(
            "Answers constrained to end in a valid letter (`constrain_answer`, ours, not "
            "Aletheia's protocol): the model still picks the letter."
        )
    return out


def pareto(
    rows: list[dict[str, Any]], metric: str, out: Path, note_lines: list[str] = ()
) -> dict[str, Any]:
    """pareto.png: mean `metric` against device-hours and against tokens, the front marked;
    the notes printed above the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result: dict[str, Any] = {"metric": metric, "points": [], "front": {}}
    fig, axes = plt.subplots(1, len(COST_AXES), figsize=(5 * len(COST_AXES), 4))
    for ax, (axis, label) in zip(axes, COST_AXES.items(), strict=True):
        points = [
            (r["title"], float(r["cost"][axis]), float(r["mean"][metric]))
            for r in rows
            if _num(r["cost"].get(axis)) is not None and r["mean"].get(metric) is not None
        ]
        front = pareto_front(points)
        result["front"][axis] = front
        for name, cost, acc in points:
            on = name in front
            ax.scatter([cost], [acc], marker="o" if on else "x", color="C0" if on else "C3")
            ax.annotate(name, (cost, acc), fontsize=7, xytext=(3, 3), textcoords="offset points")
        line = sorted((c, a) for n, c, a in points if n in front)
        if len(line) > 1:
            ax.plot([c for c, _ in line], [a for _, a in line], "--", color="C0", linewidth=1)
        ax.set_xlabel(label)
        ax.set_ylabel(f"mean {metric}")
        ax.set_title(f"cost vs {metric}: {axis}")
    for r in rows:
        result["points"].append({"recipe": r["recipe"], "title": r["title"],
                                 "device_hours": r["cost"].get("device_hours"),
                                 "tokens": r["cost"].get("tokens"), metric: r["mean"].get(metric)})  # fmt: skip
    if note_lines:
        fig.suptitle("\n".join(note_lines), fontsize=8, color="C3")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.06 * len(note_lines)))
    fig.savefig(out / "pareto.png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return result


def write_comparison(cfg: AblationConfig, failed: dict[str, str] | None = None) -> dict[str, Any]:
    """comparison.json, comparison.md and pareto.png in cfg.out_dir, from every evaluated cell."""
    out = cfg.out_dir
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for recipe in cfg.recipes if (r := cell_row(cfg, recipe)) is not None]
    failed = dict(failed or {})
    for recipe in cfg.recipes:
        state = read_cell(cfg, recipe)
        if recipe not in failed and state.get("status") == "failed":
            failed[recipe] = state.get("error", "failed")
    ks = sorted({m["k"] for r in rows for m in r["metrics"].values() if isinstance(m["k"], int)})
    result: dict[str, Any] = {
        "name": cfg.name,
        "size": cfg.size,
        "budget": cfg.budget,
        "data_dir": str(cfg.data_dir),
        "splits": list(cfg.eval_splits),
        "eval_split": eval_split(cfg),
        "k": ks[0] if len(ks) == 1 else ks,
        "rows": rows,
        "failed": failed,
        "notes": notes(cfg),
    }
    result["pareto"] = pareto(rows, cfg.pareto_metric, out, result["notes"])
    (out / "comparison.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (out / "comparison.md").write_text(to_markdown(result))
    result["files"] = {name: str(out / name) for name in
                       ("comparison.json", "comparison.md", "pareto.png")}  # fmt: skip
    return result
