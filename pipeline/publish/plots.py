"""The card's plots: matplotlib PNGs written into the repo folder's `assets/`.

Configs differ in size by more than an order of magnitude (Adv is Heldout's `test` split once
per bias type; Hard may hold a few dozen rows), so no plot puts raw counts of several configs
on one linear axis: the compositions are shares of each config's own rows (100% bars, the
counts written on them), the correct positions a table of shares per list size, and the
pass rates one panel per config with its own axis. Every number comes from the same
measurements as the card's text (`card_facts`).

PNG bytes are a pure function of the data (no timestamps, no software tag), so
re-publishing an unchanged build produces identical files and pushes nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt

from pipeline.publish import card_facts as F
from schemas import ANSWER_LETTERS

_PNG_META = {"Software": None}
_DPI = 100
_LABEL_MIN_SHARE = 0.06  # a segment narrower than this gets no count written on it
_ORIGIN_COLORS = {"policy": "#4c72b0", "reference": "#55a868", "mutant": "#dd8452"}
_LANGUAGE_COLORS = {"python": "#3776ab", "cpp": "#f34b7d", "java": "#b07219", "mixed": "#8c8c8c"}
_OTHER = "#bcbcbc"


def _bars(facts: list[F.SplitFacts], splits: F.Splits) -> list[tuple[str, F.SplitFacts]]:
    """(label, facts) per bar: every split of every instance config, an evaluation config's
    `test` and `full` both (one bar when they hold the same rows)."""
    out = []
    for f in facts:
        if f.kind != "instances":
            continue
        by = splits[f.config]
        if f.split == "test" and F.same_rows(by["test"], by["full"]):
            continue
        if f.split == "full" and F.same_rows(by["test"], by["full"]):
            out.append((f"{f.config} (test = full)", f))
        elif f.split == "train":
            out.append((f.config, f))
        else:
            out.append((f"{f.config} · {f.split}", f))
    return out


def _main(facts: list[F.SplitFacts]) -> list[F.SplitFacts]:
    """One per instance config: its `train` split, or an evaluation config's `full`."""
    return [f for f in facts if f.kind == "instances" and f.split in ("train", "full")]


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=_DPI, metadata=_PNG_META, bbox_inches="tight")
    plt.close(fig)
    return path


def _share_bars(
    bars: list[tuple[str, dict]],
    keys: list,
    key_label: dict,
    colors: list[str],
    title: str,
    unit: str,
    path: Path,
) -> Path:
    """One 100% horizontal bar per split, a segment per key, its count written on it."""
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.6))
    labels = []
    for i, (label, counts) in enumerate(bars):
        total = sum(counts.get(k, 0) for k in keys)
        labels.append(f"{label}  ({total} {unit})")
        left = 0.0
        for k, color in zip(keys, colors, strict=True):
            n = counts.get(k, 0)
            width = n / total if total else 0.0
            ax.barh(i, width, left=left, color=color, edgecolor="white", linewidth=0.5,
                    label=key_label[k] if i == 0 else None)  # fmt: skip
            if width >= _LABEL_MIN_SHARE:
                ax.text(left + width / 2, i, str(n), ha="center", va="center", fontsize=8,
                        color="white")  # fmt: skip
            left += width
    ax.set_yticks(range(len(bars)), labels, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel(f"share of the split's {unit} (numbers: {unit})")
    ax.set_title(title, fontsize=11, pad=24)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(keys), fontsize=8,
              frameon=False)  # fmt: skip
    return _save(fig, path)


def _palette(n: int, cmap: str) -> list[str]:
    cm = matplotlib.colormaps[cmap]
    return [matplotlib.colors.to_hex(cm(0.15 + 0.7 * i / max(1, n - 1))) for i in range(n)]


def plot_list_sizes(facts: list[F.SplitFacts], splits: F.Splits, path: Path) -> Path:
    bars = [(label, f.sizes) for label, f in _bars(facts, splits)]
    sizes = list(range(2, len(ANSWER_LETTERS) + 1))
    return _share_bars(
        bars, sizes, {n: f"{n} candidates" for n in sizes}, _palette(len(sizes), "viridis"),
        "List sizes: rows per number of candidates", "rows", path,
    )  # fmt: skip


def plot_origins(facts: list[F.SplitFacts], splits: F.Splits, path: Path) -> Path:
    bars = [(label, f.origins) for label, f in _bars(facts, splits)]
    keys = [*F.ORIGINS, *sorted({k for _, c in bars for k in c} - set(F.ORIGINS))]
    colors = [_ORIGIN_COLORS.get(k, _OTHER) for k in keys]
    words = {k: F.ORIGIN_WORDS.get(k, (k, k))[1] for k in keys}
    return _share_bars(
        bars, keys, words, colors, "Where the candidates come from", "candidates", path
    )


def plot_languages(facts: list[F.SplitFacts], splits: F.Splits, path: Path) -> Path:
    bars = [(label, f.languages) for label, f in _bars(facts, splits)]
    langs = sorted({k for _, c in bars for k in c}, key=lambda k: (k == "mixed", k))
    return _share_bars(
        bars, langs, {k: k for k in langs}, [_LANGUAGE_COLORS.get(k, _OTHER) for k in langs],
        "Languages: rows per language (a row's language field)", "rows", path,
    )  # fmt: skip


def plot_correct_positions(facts: list[F.SplitFacts], splits: F.Splits, path: Path) -> Path:
    """One table of shares per list size: with n candidates the correct one can only be at
    A..n (uniform placement: 1/n each), so sizes are never pooled."""
    main = _main(facts)
    sizes = list(range(2, len(ANSWER_LETTERS) + 1))
    fig, axes = plt.subplots(1, len(sizes), figsize=(2.4 * len(sizes) + 1.5, 0.4 * len(main) + 1.6),
                             squeeze=False, width_ratios=sizes)  # fmt: skip
    for ax, size in zip(axes[0], sizes, strict=True):
        letters = list(ANSWER_LETTERS[:size])
        grid = []
        for f in main:
            counts = f.positions_by_size.get(size, {})
            total = sum(counts.values())
            grid.append([(counts.get(a, 0), counts.get(a, 0) / total if total else math.nan)
                         for a in letters])  # fmt: skip
        shares = [[s for _, s in row] for row in grid]
        ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        for i, row in enumerate(grid):
            for j, (n, s) in enumerate(row):
                text = "-" if math.isnan(s) else f"{n}\n{s:.0%}"
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="white" if not math.isnan(s) and s > 0.6 else "black")  # fmt: skip
        ax.set_xticks(range(size), letters)
        ax.set_yticks(range(len(main)), [f.config for f in main] if size == sizes[0] else [])
        ax.set_title(f"{size} candidates\n(uniform: {1 / size:.0%} each)", fontsize=9)
    fig.suptitle("Position of the correct candidate: rows and share of the config's rows "
                 "of that size", fontsize=11)  # fmt: skip
    fig.tight_layout()
    return _save(fig, path)


def plot_pass_rates(facts: list[F.SplitFacts], splits: F.Splits, path: Path) -> Path:
    """Pass rates of the incorrect candidates (the correct one is 1.0 by construction), one
    panel per config with its own count axis."""
    main = [f for f in _main(facts) if any(f.incorrect_rate_bins)]
    cols = 3
    rows = max(1, math.ceil(len(main) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(9, 2.3 * rows + 0.6), squeeze=False)
    centres = [i / (F.RATE_BINS - 1) for i in range(F.RATE_BINS)]
    for ax, f in zip(axes.flat, main, strict=False):
        ax.bar(centres, f.incorrect_rate_bins, width=0.09, color="#4c72b0")
        ax.set_xlim(-0.06, 1.06)
        ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_title(f"{f.config}: {sum(f.incorrect_rate_bins)} incorrect candidates", fontsize=9)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(main) :]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("pass rate, to the nearest 0.1", fontsize=8)
    fig.suptitle("Pass rates of the incorrect candidates (each panel on its own scale)",
                 fontsize=11)  # fmt: skip
    fig.tight_layout()
    return _save(fig, path)


PLOTS = {
    "list_sizes.png": (plot_list_sizes, "List sizes: share of each split's rows per size"),
    "origins.png": (plot_origins, "Where the candidates come from: policy, reference, mutant"),
    "languages.png": (plot_languages, "Rows per language"),
    "correct_positions.png": (
        plot_correct_positions,
        "Position of the correct candidate, per list size",
    ),
    "pass_rates.png": (plot_pass_rates, "Pass rates of the incorrect candidates, per config"),
}


def write_plots(splits: F.Splits, assets_dir: Path) -> dict[str, str]:
    """Write every plot; returns file name -> caption."""
    facts = F.measure_all(splits)
    out = {}
    for fname, (fn, caption) in PLOTS.items():
        fn(facts, splits, assets_dir / fname)
        out[fname] = caption
    return out
