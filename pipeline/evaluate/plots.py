"""Self-consistency curves as PNGs beside the report: one per split, maj@k and best-of-k
against every k from 1 to K (a linear axis of whole numbers), with the random verifier's
expected curve dashed.

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
