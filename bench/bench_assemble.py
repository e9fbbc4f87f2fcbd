"""Assembly speed and memory: polars stage vs a naive pure-Python grouping, side by side.

Default run: 1,000,000 synthetic judged candidates -> 50,000 train instances (12,500 of
each list size 2..5) plus the three eval splits, through the real stage (`assemble`:
Parquet in, Parquet out), in a child process so its peak RSS is its own. Then both
implementations on the same sample (--sample candidates) to print the ratio.

    .venv/bin/python bench/bench_assemble.py            # ~1-2 minutes on 2 cores
    .venv/bin/python bench/bench_assemble.py --full     # also the naive one at full scale
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import re
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


import polars as pl

from pipeline.common.parquet import write_parquet
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.normalize import _PASSES, with_dedup_key
from pipeline.instances.stage import assemble
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import JUDGED_CANDIDATE_SCHEMA, PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA

TARGETS = {2: 12_500, 3: 12_500, 4: 12_500, 5: 12_500}


def bench_config(targets: dict[int, int] | None) -> AssembleConfig:
    return AssembleConfig(
        seed=0,
        splits=[
            SplitSpec(
                name="train",
                problems="train",
                size_targets=targets,
                max_instances_per_group=2,
                max_instances_per_problem=12,
            ),
            SplitSpec(name="heldout", problems="heldout", cap_per_stratum=500),
            SplitSpec(name="strong", tier="strong", problems="heldout", cap_per_stratum=500),
            SplitSpec(name="hard", band="hard", problems="heldout", cap_per_stratum=500),
        ],
    )


def _stage_child(args: tuple[Path, Path, Path, Path], queue: mp.Queue) -> None:
    start = time.perf_counter()
    stats = assemble(*args, bench_config(TARGETS))
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        (
            elapsed,
            peak_mb,
            {k: v["rows"] for k, v in stats["splits"].items()},
            stats["splits"]["train"]["by_size"],
        )
    )


# ------------------------------------------------------------------ the naive baseline
_NAIVE_PASSES = {
    lang: [(re.compile(p), r.replace("${", "\\g<").replace("}", ">")) for p, r in passes]
    for lang, passes in _PASSES.items()
}


def naive_assemble(
    rows: list[dict], split_of: dict[str, str], targets: dict[int, int] | None
) -> tuple[int, float]:
    """The same selection, written the obvious way: dicts, loops, `re`, `random`.
    Returns (instances made, seconds spent normalising code)."""
    import random

    normalising = 0.0
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["verdict"] == "SE" or r["tier"] != "weak" or split_of.get(r["problem_id"]) != "train":
            continue
        groups[(r["problem_id"], r["generator"], r["language"])].append(r)
    slots = []
    for key, members in sorted(groups.items()):
        rng = random.Random(str(key))
        seen, uniq = set(), []
        for r in members:
            code = r["code"]
            t = time.perf_counter()
            for pattern, repl in _NAIVE_PASSES[r["language"]]:
                code = pattern.sub(repl, code)
            normalising += time.perf_counter() - t
            if code.strip() not in seen:
                seen.add(code.strip())
                uniq.append(r)
        correct = [r for r in uniq if r["verdict"] == "AC"]
        by_rate: dict[float, dict] = {}
        for r in uniq:
            if r["verdict"] != "AC" and r["pass_rate"] <= 0.5:
                by_rate.setdefault(round(r["pass_rate"], 9), r)
        wrong = list(by_rate.values())
        if not correct or not wrong:
            continue
        for j in range(min(2, len(correct))):
            slots.append((min(5, 1 + len(wrong)), rng.random(), correct[j], wrong))
    counts = dict.fromkeys(range(2, 6), 0)
    made = 0
    for max_size, _, ok, wrong in sorted(slots, key=lambda s: (s[0], s[1])):
        feasible = [s for s in range(2, max_size + 1) if targets is None or counts[s] < targets[s]]
        if not feasible:
            continue
        size = max(feasible, key=lambda s: (targets[s] - counts[s]) if targets else -counts[s])
        counts[size] += 1
        picked = random.Random(ok["candidate_id"]).sample(wrong, size - 1)
        pos = random.Random(ok["candidate_id"] + "p").randrange(size)
        _ = picked[:pos] + [ok] + picked[pos:]
        made += 1
    return made, normalising


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1_000_000)
    ap.add_argument("--problems", type=int, default=8_000)
    ap.add_argument(
        "--sample", type=int, default=100_000, help="candidates for the side-by-side ratio"
    )
    ap.add_argument("--full", action="store_true", help="run the naive baseline at full scale too")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        judged = synthetic_judged(args.candidates, n_problems=args.problems, seed=0)
        problems, assignments = synthetic_problems(args.problems, seed=0)
        write_parquet(judged.to_arrow(), tmp / "judged.parquet", JUDGED_CANDIDATE_SCHEMA)
        write_parquet(problems.to_arrow(), tmp / "problems.parquet", PROBLEM_SCHEMA)
        write_parquet(
            assignments.to_arrow(), tmp / "splits" / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA
        )
        print(
            f"synthetic inputs: {args.candidates:,} judged candidates, {args.problems:,} problems "
            f"({time.perf_counter() - t0:.1f}s to make, not timed below)"
        )

        ctx = mp.get_context("spawn")
        queue: mp.Queue = ctx.Queue()
        child = ctx.Process(
            target=_stage_child,
            args=(
                (tmp / "judged.parquet", tmp / "problems.parquet", tmp / "splits", tmp / "out"),
                queue,
            ),
        )
        child.start()
        elapsed, peak_mb, rows, by_size = queue.get()
        child.join()
        print(
            f"\nstage `assemble` (Parquet in -> 4 splits out), full scale: {elapsed:.1f}s, peak RSS {peak_mb:,.0f} MiB"
        )
        print(f"  rows per split: {rows}; train sizes: {by_size}")

        sample = judged.head(args.sample) if args.sample < judged.height else judged
        split_of = dict(assignments.select("problem_id", "split").iter_rows())
        rows_py = sample.select(
            "candidate_id",
            "problem_id",
            "language",
            "code",
            "generator",
            "tier",
            "verdict",
            "pass_rate",
        ).to_dicts()
        t = time.perf_counter()
        tables, _, _ = assemble_frames(
            sample,
            problems,
            assignments,
            bench_config(None).model_copy(update={"splits": bench_config(None).splits[:1]}),
        )
        polars_s = time.perf_counter() - t
        t = time.perf_counter()
        train_ids = [p for p, sp in split_of.items() if sp == "train"]
        # the rows the train split normalises: weak tier on train problems, not SE
        with_dedup_key(
            sample.filter(
                (pl.col("tier") == "weak")
                & pl.col("problem_id").is_in(train_ids)
                & (pl.col("verdict") != "SE")
            )
        )
        polars_norm = time.perf_counter() - t
        t = time.perf_counter()
        naive_rows, naive_norm = naive_assemble(rows_py, split_of, None)
        naive_s = time.perf_counter() - t
        print(
            f"\nside by side on {sample.height:,} candidates (train split only, no size targets):"
        )
        print(f"  polars:      {polars_s:7.2f}s  ({tables['train'].num_rows:,} instances)")
        print(f"  pure Python: {naive_s:7.2f}s  ({naive_rows:,} instances)")
        print(f"  ratio pure Python / polars: {naive_s / polars_s:.1f}x")
        print(
            f"  of which code normalisation (regex passes, C in both): polars {polars_norm:.2f}s, "
            f"Python `re` {naive_norm:.2f}s; grouping and selection alone: "
            f"{(naive_s - naive_norm) / max(polars_s - polars_norm, 1e-9):.1f}x"
        )
        if args.full:
            full_rows = judged.select(
                "candidate_id",
                "problem_id",
                "language",
                "code",
                "generator",
                "tier",
                "verdict",
                "pass_rate",
            ).to_dicts()
            t = time.perf_counter()
            _, full_norm = naive_assemble(full_rows, split_of, TARGETS)
            full_naive = time.perf_counter() - t
            print(
                f"  full scale pure Python (train only): {full_naive:.1f}s vs polars stage (all splits, with "
                f"I/O) {elapsed:.1f}s: ratio {full_naive / elapsed:.1f}x "
                f"(its normalisation: {full_norm:.1f}s)"
            )
        else:
            est = naive_s * judged.height / sample.height
            print(
                f"  (pure Python extrapolated to {judged.height:,}: ~{est:.0f}s vs the whole polars stage "
                f"{elapsed:.1f}s: ~{est / elapsed:.1f}x; run --full to measure it)"
            )


if __name__ == "__main__":
    main()
