"""The Best-of-N report: report.json, report.md and the accuracy-against-N plot beside them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pipeline.bestofn.metrics import LABELS

CURVE_PLOT = "bon_curve.png"
_CURVE_KEYS = ("verifier", "random", "oracle", "majority", "shortest", "logprob")


def _f(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{round(v, 9) + 0.0:.3f}" if isinstance(v, float) else str(v)


def _method_table(group: dict[str, Any]) -> list[str]:
    lines = ["| selector | pass@1 | 95% interval |", "| --- | ---: | :---: |"]
    for key, m in group["methods"].items():
        lines.append(
            f"| {LABELS[key]} | {_f(m['value'])} | {_f(m['ci_low'])} .. {_f(m['ci_high'])} |"
        )
    return lines


def _counts(group: dict[str, Any]) -> list[str]:
    c = group["verifier_counts"]
    gain = group["verifier_minus_random"]
    return [
        (
            f"Verifier picks on {group['problems']} problems: {c['picked_correct']} correct, "
            f"{c['picked_wrong']} wrong, {c['unparseable']} unparseable (no valid verdict: a "
            f"failed pick, {_f(c['unparseable_rate'])} of the problems); pass@1 over the "
            f"parseable picks {_f(c['pass@1_parseable'])}. Responses read: {c['responses']}, "
            f"{c['unparseable_responses']} without a valid verdict. Verifier minus random: "
            f"{_f(gain['value'])} ({_f(gain['ci_low'])} .. {_f(gain['ci_high'])}, paired)."
        ),
    ]


def to_markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    s = report["summary"]
    lines = [
        f"# Best-of-{report['n']}: `{report['verifier']}`",
        "",
        (
            f"{report['problems']} problems from `{report['problems_file']}`, "
            f"{report['n']} samples each from `{report['samples']}`; mode `{cfg['mode']}`"
            + (f" (lists of at most {cfg['knockout_size']})" if cfg["mode"] == "knockout" else "")
            + (
                ", both orders of every pair"
                if cfg["mode"] == "pairwise" and cfg["both_orders"]
                else ""
            )
            + f", K = {cfg['k']} response(s) per prompt, "
            + ("0-10 scores" if cfg["scoring"] else "letter selection")
            + f", prompt style `{cfg['style']}`"
            + (", constrained answers (ours)" if cfg["constrain_answer"] else "")
            + f". Judged by `{report['judge_stamp']}`."
        ),
        "",
        "## All problems",
        "",
        *_method_table(s["all"]),
        "",
        *_counts(s["all"]),
    ]
    if report.get("notes"):
        for note in report["notes"]:  # a blank line between: each its own quote
            lines += ["", f"> **Note**: {note}"]
    for lang, group in s["by_language"].items():
        lines += ["", f"## {lang}", "", *_method_table(group), "", *_counts(group)]
    lines += ["", "## Accuracy against N", ""]
    keys = [k for k in _CURVE_KEYS if any(p[k] is not None for p in s["curve"])]
    lines += ["| n | " + " | ".join(LABELS[k] for k in keys) + " |"]
    lines += ["| ---: | " + " | ".join("---:" for _ in keys) + " |"]
    for p in s["curve"]:
        lines += [f"| {p['n']} | " + " | ".join(_f(p[k]) for k in keys) + " |"]
    lines += [
        "",
        (
            "Each selector, oracle and random pick included, on each problem's first n "
            "samples (at n = N: the table above). Intervals: percentile "
            f"bootstrap over problems, {cfg['bootstrap']['resamples']} resamples, seed "
            f"{cfg['bootstrap']['seed']}."
        ),
    ]
    if report.get("plot"):
        lines += ["", f"![accuracy against N]({report['plot']})"]
    return "\n".join(lines) + "\n"


def plot_curve(curve: list[dict[str, Any]], title: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # no display on evaluation machines
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    styles = {
        "verifier": ("tab:blue", "-", "o"),
        "oracle": ("tab:green", "--", None),
        "random": ("tab:gray", ":", None),
        "majority": ("tab:orange", "-", "s"),
        "shortest": ("tab:purple", "-", "^"),
        "logprob": ("tab:red", "-", "v"),
    }
    for key, (color, line, marker) in styles.items():
        pts = [(p["n"], p[key]) for p in curve if p.get(key) is not None]
        if pts:
            ax.plot(
                [n for n, _ in pts],
                [v for _, v in pts],
                color=color,
                linestyle=line,
                marker=marker,
                label=LABELS[key],
            )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("n (samples per problem)")
    ax.set_ylabel("pass@1 of the pick")
    ax.set_title(title)
    ax.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    return path


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def write_report(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_curve(
        report["summary"]["curve"], f"Best-of-N: {report['config']['mode']}", out_dir / CURVE_PLOT
    )
    report["plot"] = CURVE_PLOT
    js, md = out_dir / "report.json", out_dir / "report.md"
    js.write_text(json.dumps(_clean(report), indent=2))
    md.write_text(to_markdown(report))
    return js, md
