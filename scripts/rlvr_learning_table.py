"""The compact table of RLVR runs (pipeline.train.rlvr_node's OUT folders): did pass@1 rise?

    python3 scripts/rlvr_learning_table.py OUT/grpo OUT/gspo

Reads each folder's summary.json (the standard library only: it runs on a bare node Python).
Per run: steps and training time, rollout pass@1 in the first and the last tenth of the run (the
rollouts it trained on), the probe before -> after (the same train tasks and seed), and pass@k
before -> after per split (pass@1, and the largest k: sharpening leaves it flat, new solutions
raise it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tenths(values: list) -> list:
    values = [v for v in values if v is not None]
    parts = min(10, len(values))
    return [
        sum(values[i * len(values) // parts : (i + 1) * len(values) // parts])
        / len(values[i * len(values) // parts : (i + 1) * len(values) // parts])
        for i in range(parts)
    ]


def fmt(v: object, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def rows(folder: Path) -> list[str]:
    path = folder / "summary.json"
    if not path.exists():
        return [f"| {folder.name} | no summary.json (see {folder / 'run.log'}) |"]
    s = json.loads(path.read_text())
    r = s["rlvr"]
    t = tenths([x["pass_at_1"] for x in r["steps"]])
    first, last = (t[0], t[-1]) if t else (None, None)
    gain = None if first is None else 100 * (last - first)
    out = [
        (
            f"| {r['settings']['algorithm']} | {r['steps_run']} | {s['timings']['train_s']:.0f} | "
            f"{r['settings']['temperature']} | {fmt(first)} -> {fmt(last)} ({fmt(gain, '+.1f')} pts) | "
            f"{fmt(r['before']['pass_at_1'])} -> {fmt(r['after']['pass_at_1'])} |"
        )
    ]
    for split, pair in r.get("passk", {}).items():
        b, a = pair["before"], pair["after"]
        k = list(b["pass_at_k"])[-1]
        out.append(
            f"| {r['settings']['algorithm']} pass@k {split} ({b['problems']} tasks x "
            f"{b['samples']}) | | | | pass@1 {fmt(b['pass_at_k']['1'])} -> "
            f"{fmt(a['pass_at_k']['1'])} | pass@{k} {fmt(b['pass_at_k'][k])} -> "
            f"{fmt(a['pass_at_k'][k])} |"
        )
    return out


def main(folders: list[str]) -> None:
    lines = [
        "| run | steps | train s | T | rollout pass@1, first -> last tenth | probe before -> after |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    device = None
    for f in folders:
        lines += rows(Path(f))
        summary = Path(f) / "summary.json"
        if device is None and summary.exists():
            dev = json.loads(summary.read_text())["device"]
            device = dev.get("gpu") or f"{dev['cpus']} CPUs"
    print(f"RLVR on MBPP train, {device or '?'}\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
