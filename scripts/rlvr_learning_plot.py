"""The RLVR learning curve as a picture: rollout pass@1 against training time, one line per run.

    .venv/bin/python scripts/rlvr_learning_plot.py OUT.png RUN_DIR [RUN_DIR ...]

Each RUN_DIR is a pipeline.train.rlvr_node OUT folder (its summary.json). The curve is the mean
rollout pass@1 over a sliding window of steps (`--window`, 30), drawn at the training time the
window ends (the steps' own wall times, summed), so runs of different step speeds line up by
the clock; the run's before and after probe are marked at its start and end.
"""

from __future__ import annotations

import argparse
import json
from itertools import accumulate
from pathlib import Path


def curve(steps: list[dict], window: int) -> tuple[list[float], list[float]]:
    """(training seconds, mean rollout pass@1 of the `window` steps ending there)."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    clock = list(accumulate(s["step_time_s"] for s in steps))
    rates = [s["pass_at_1"] for s in steps]
    xs, ys = [], []
    for end in range(min(window, len(rates)), len(rates) + 1):
        part = rates[max(0, end - window) : end]
        xs.append(clock[end - 1])
        ys.append(sum(part) / len(part))
    return xs, ys


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("png", type=Path)
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--window", type=int, default=30)
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    device = None
    for run in args.runs:
        summary = json.loads((run / "summary.json").read_text())
        r = summary["rlvr"]
        xs, ys = curve(r["steps"], args.window)
        name = r["settings"]["algorithm"].upper()
        (line,) = ax.plot(xs, ys, label=f"{name}: rollout pass@1, {args.window}-step mean")
        ax.plot([0], [r["before"]["pass_at_1"]], "o", color=line.get_color())
        ax.plot([xs[-1]], [r["after"]["pass_at_1"]], "s", color=line.get_color(),
                label=f"{name}: probe before (o) and after (s)")  # fmt: skip
        device = device or summary["device"].get("gpu")
    ax.set_xlabel("training time, s")
    ax.set_ylabel("pass@1 on MBPP train tasks")
    ax.set_title(f"RLVR on MBPP train ({device or 'CPU'})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    args.png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
