"""Self-consistency curves as PNGs beside the report: one per split, maj@k and best-of-k
against every k from 1 to K (a linear axis of whole numbers), with the random verifier's
expected curve dashed; and a reliability diagram per split (calibration.py): each bin's
accuracy against its mean confidence, the diagonal dashed, the bins' sizes written above.

PNG bytes depend only on the numbers (no timestamp, no software tag), as the card's plots.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display on evaluation machines
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

_PNG_META = {"Software": None}


def sc_curve_file(split: str) -> str:
    return f"sc_curve_{split}.png"


def _series(curve: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    """The (k, value) points that have a value (best-of-1 has none)."""
    pts = [
        (p["k"], p[key])
        for p in curve
        if p.get(key) is not None and not (isinstance(p[key], float) and math.isnan(p[key]))
    ]
    return [k for k, _ in pts], [v for _, v in pts]


def plot_sc_curve(
    split: str, curve: list[dict[str, Any]], random: list[dict[str, Any]], path: Path
) -> Path:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for key, label, color in (
        ("majority_accuracy", "maj@k", "tab:blue"),
        ("best_of_k_accuracy", "best-of-k", "tab:orange"),
    ):
        ks, vs = _series(curve, key)
        ax.plot(ks, vs, marker="o", color=color, label=label)
        rks, rvs = _series(random, key)
        ax.plot(rks, rvs, linestyle="--", color=color, alpha=0.6, label=f"{label}, random")
    if curve:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("k (responses per instance)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"Self-consistency: {split}")
    ax.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=80, metadata=_PNG_META)
    plt.close(fig)
    return path


def write_sc_plots(report: dict[str, Any], out_dir: Path) -> dict[str, str]:
    """One PNG per split with a curve; split -> file name (relative to `out_dir`)."""
    files = {}
    for split, m in report["splits"].items():
        curve = m["aletheia"].get("sc_curve") or []
        if not curve:
            continue
        random = ((m.get("baselines") or {}).get("random") or {}).get("aletheia", {})
        name = sc_curve_file(split)
        plot_sc_curve(split, curve, random.get("sc_curve") or [], out_dir / name)
        files[split] = name
    return files


def reliability_file(split: str) -> str:
    return f"reliability_{split}.png"


def plot_reliability(split: str, cal: dict[str, Any], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    bins = [b for b in cal["bins"] if b["n"]]
    width = 1.0 / max(1, cal["n_bins"])
    ax.bar(
        [b["lo"] + width / 2 for b in bins],
        [b["accuracy"] for b in bins],
        width=width * 0.9,
        color="tab:blue",
        alpha=0.7,
        label="accuracy",
    )
    ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "o", color="tab:red",
            label="(mean confidence, accuracy)")  # fmt: skip
    for b in bins:
        ax.annotate(str(b["n"]), (b["lo"] + width / 2, b["accuracy"]), ha="center", va="bottom",
                    fontsize=7)  # fmt: skip
    ax.plot([0, 1], [0, 1], linestyle="--", color="gray", label="perfect calibration")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("confidence (share of the K votes for the answer)")
    ax.set_ylabel("accuracy")
    ece = cal.get("ece")
    ece_text = "-" if ece is None or (isinstance(ece, float) and math.isnan(ece)) else f"{ece:.3f}"
    ax.set_title(f"Reliability: {split} (ECE {ece_text}, n={cal['scored']})")
    ax.legend(fontsize=7, loc="upper left")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=80, metadata=_PNG_META)
    plt.close(fig)
    return path


def write_reliability_plots(report: dict[str, Any], out_dir: Path) -> dict[str, str]:
    """One reliability diagram per split with a calibration section; split -> file name."""
    files = {}
    for split, m in report["splits"].items():
        cal = m.get("calibration")
        if not cal or not cal["scored"]:
            continue
        name = reliability_file(split)
        plot_reliability(split, cal, out_dir / name)
        files[split] = name
    return files
