"""The card's plots: matplotlib PNGs written into the repo folder's `assets/`.

PNG bytes are a pure function of the data (no timestamps, no software tag), so
re-publishing an unchanged build produces identical files and pushes nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt
import pyarrow as pa

from pipeline.common.answers import gold_letter
from pipeline.publish.layout import CONFIG_BY_NAME
from schemas import ANSWER_LETTERS

_PNG_META = {"Software": None}


def _instance_configs(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    return {k: t for k, t in tables.items() if CONFIG_BY_NAME[k].kind == "instances"}


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=80, metadata=_PNG_META)
    plt.close(fig)
    return path


def _grouped_bars(ax: plt.Axes, labels: list[str], series: dict[str, list[float]]) -> None:
    width = 0.8 / max(1, len(series))
    for j, (name, values) in enumerate(series.items()):
        xs = [i + j * width for i in range(len(labels))]
        ax.bar(xs, values, width=width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))], labels)
    ax.legend(fontsize=7, ncols=2)


def plot_list_sizes(tables: dict[str, pa.Table], path: Path) -> Path:
    inst = _instance_configs(tables)
    sizes = list(range(2, len(ANSWER_LETTERS) + 1))
    series = {}
    for name, t in inst.items():
        c = Counter(t.column("num_candidates").to_pylist())
        series[name] = [c.get(s, 0) for s in sizes]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    _grouped_bars(ax, [str(s) for s in sizes], series)
    ax.set_xlabel("candidates per instance")
    ax.set_ylabel("instances")
    ax.set_title("List sizes")
    return _save(fig, path)


def plot_correct_positions(tables: dict[str, pa.Table], path: Path) -> Path:
    """One panel per list size: with n candidates the correct one can only be at A..n, so
    pooling sizes would make later letters look under-used even when placement is uniform."""
    inst = _instance_configs(tables)
    sizes = list(range(2, len(ANSWER_LETTERS) + 1))
    fig, axes = plt.subplots(1, len(sizes), figsize=(3 * len(sizes), 3.2), squeeze=False)
    for ax, size in zip(axes[0], sizes, strict=True):
        letters = list(ANSWER_LETTERS[:size])
        series = {}
        for name, t in inst.items():
            c = Counter(
                gold_letter(a)
                for a, n in zip(
                    t.column("chosen_answer").to_pylist(),
                    t.column("num_candidates").to_pylist(),
                    strict=True,
                )
                if n == size
            )
            series[name] = [c.get(a, 0) for a in letters]
        _grouped_bars(ax, letters, series)
        ax.set_title(f"{size} candidates", fontsize=9)
        ax.set_xlabel("correct position")
    axes[0][0].set_ylabel("instances")
    for ax in axes[0][1:]:
        ax.get_legend().remove()
    return _save(fig, path)


def plot_languages(tables: dict[str, pa.Table], path: Path) -> Path:
    inst = _instance_configs(tables)
    counts = {
        n: Counter(l for row in t.column("candidate_languages").to_pylist() for l in row)
        for n, t in inst.items()
    }
    langs = sorted({l for c in counts.values() for l in c})
    fig, ax = plt.subplots(figsize=(7, 3.5))
    _grouped_bars(
        ax, langs or ["-"], {n: [c.get(l, 0) for l in langs] or [0] for n, c in counts.items()}
    )
    ax.set_ylabel("candidates")
    ax.set_title("Candidate languages")
    return _save(fig, path)


def plot_pass_rates(tables: dict[str, pa.Table], path: Path) -> Path:
    """Pass rates of the incorrect candidates (the correct one is 1.0 by construction).

    Side-by-side bars rather than overlaid step lines: configs with identical
    distributions (mixed is train with edits) would otherwise hide each other."""
    inst = _instance_configs(tables)
    edges = [i / 10 for i in range(11)]
    labels = [f"{lo:.1f}-" for lo in edges[:-1]]
    series = {}
    for name, t in inst.items():
        counts = [0] * (len(edges) - 1)
        for rows, vs in zip(
            t.column("pass_rates").to_pylist(), t.column("verdicts").to_pylist(), strict=True
        ):
            for r, v in zip(rows, vs, strict=True):
                if v != "AC":
                    counts[min(int(r * 10), len(counts) - 1)] += 1
        series[name] = counts
    fig, ax = plt.subplots(figsize=(9, 3.5))
    _grouped_bars(ax, labels, series)
    ax.set_xlabel("pass rate of incorrect candidates (bins of 0.1; the last includes 1.0)")
    ax.set_ylabel("candidates")
    ax.set_title("Pass-rate distribution")
    return _save(fig, path)


PLOTS = {
    "list_sizes.png": (plot_list_sizes, "List sizes (candidates per instance)"),
    "correct_positions.png": (
        plot_correct_positions,
        "Position of the correct candidate, per list size",
    ),
    "languages.png": (plot_languages, "Candidate languages"),
    "pass_rates.png": (plot_pass_rates, "Pass rates of the incorrect candidates"),
}


def write_plots(tables: dict[str, pa.Table], assets_dir: Path) -> dict[str, str]:
    """Write every plot; returns file name -> caption."""
    out = {}
    for fname, (fn, caption) in PLOTS.items():
        fn(tables, assets_dir / fname)
        out[fname] = caption
    return out
