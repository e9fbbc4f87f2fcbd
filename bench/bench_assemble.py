"""Assembly speed and memory: polars stage vs a naive pure-Python grouping, side by side.

Default run: 1,000,000 synthetic judged candidates -> 50,000 train instances (12,500 of
each list size 2..5) plus the three eval splits, through the real stage (`assemble`:
Parquet in, Parquet out), in a child process so its peak RSS is its own. Then both
implementations on the same sample (--sample candidates): first a check that they make
the same instances (count and instance ids), then interleaved timed runs from input rows to
output rows, medians compared.

    .venv/bin/python bench/bench_assemble.py            # ~1-2 minutes on 2 cores
    .venv/bin/python bench/bench_assemble.py --full     # also the naive one at full scale
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


import polars as pl
import pyarrow.parquet as pq

from bench.naive_assemble import naive_assemble
from pipeline.common.parquet import write_parquet
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.stage import assemble
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import JUDGED_CANDIDATE_SCHEMA, PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA

TARGETS = {2: 12_500, 3: 12_500, 4: 12_500, 5: 12_500}


def bench_config(targets: dict[int, int] | None) -> AssembleConfig:
    # The balanced selection (the one the naive baseline re-implements); no token caps
    # (the R1 tokenizer cannot be loaded offline, and the baseline has none).
    return AssembleConfig(
        seed=0,
        selection="balanced",
        tokenizer=None,
        max_candidate_tokens=None,
        max_prompt_tokens=None,
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


def _same_instances(polars_tables: dict, naive: dict[str, list[dict]]) -> str:
    """Refuse to time two sides that do not select the same instances: same splits, same
    count, same instance ids (which hash the problem and its ordered candidate ids)."""
    if set(polars_tables) != set(naive):
        raise SystemExit(f"baseline differs: splits {sorted(polars_tables)} vs {sorted(naive)}")
    for name, table in polars_tables.items():
        ids = table.column("instance_id").to_pylist()
        other = [r["instance_id"] for r in naive[name]]
        if ids != other:
            missing = len(set(ids) - set(other))
            raise SystemExit(
                f"baseline differs on {name}: {len(ids)} vs {len(other)} instances, "
                f"{missing} instance ids only in the polars output: not timing unlike things"
            )
    return ", ".join(f"{n} {t.num_rows:,}" for n, t in polars_tables.items())


def side_by_side(sample: pl.DataFrame, problems: pl.DataFrame, assignments: pl.DataFrame,
                 config: AssembleConfig, repeats: int) -> dict[str, float]:  # fmt: skip
    """Both implementations from the same rows to output rows, repeats interleaved (the
    side that runs first alternates), after checking that they make the same instances."""
    split_of = dict(assignments.select("problem_id", "split").iter_rows())
    rows_py, problems_py = sample.to_dicts(), problems.to_dicts()  # the naive side's input

    def run_polars() -> dict:
        tables = assemble_frames(sample, problems, assignments, config)[0]
        return {s.name: tables[s.name] for s in config.splits}  # the test splits are extra

    def run_naive() -> dict:
        return naive_assemble(rows_py, problems_py, split_of, config)

    made = _same_instances(run_polars(), run_naive())
    print(f"\nside by side on {sample.height:,} candidates, all four splits, no size targets")
    print(f"  same instances on both sides (count and instance ids): {made}")
    times: dict[str, list[float]] = {"polars": [], "naive": []}
    sides = [("polars", run_polars), ("naive", run_naive)]
    for rep in range(repeats):
        for name, fn in sides if rep % 2 == 0 else sides[::-1]:
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, label in (("polars", "polars:     "), ("naive", "pure Python:")):
        runs = ", ".join(f"{x:.2f}" for x in times[name])
        print(f"  {label} median {med[name]:7.2f}s over {repeats} interleaved runs ({runs})")
    print(f"  ratio pure Python / polars (medians): {med['naive'] / med['polars']:.1f}x")
    return med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1_000_000)
    ap.add_argument("--problems", type=int, default=8_000)
    ap.add_argument(
        "--sample", type=int, default=100_000, help="candidates for the side-by-side ratio"
    )
    ap.add_argument("--full", action="store_true", help="run the naive baseline at full scale too")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each side")
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
        med = side_by_side(sample, problems, assignments, bench_config(None), args.repeats)
        if args.full:
            split_of = dict(assignments.select("problem_id", "split").iter_rows())
            rows_py, problems_py = judged.to_dicts(), problems.to_dicts()
            t = time.perf_counter()
            naive = naive_assemble(rows_py, problems_py, split_of, bench_config(TARGETS))
            full_naive = time.perf_counter() - t
            stage_tables = {
                n: pq.read_table(tmp / "out" / f"{n}.parquet", columns=["prompt_id"]) for n in naive
            }
            _same_instances(stage_tables, naive)
            print(
                f"  full scale, same instances: pure Python {full_naive:.1f}s vs the polars "
                f"stage (with Parquet I/O) {elapsed:.1f}s: {full_naive / elapsed:.1f}x"
            )
        else:
            est = med["naive"] * judged.height / sample.height
            print(
                f"  (pure Python extrapolated to {judged.height:,}: ~{est:.0f}s vs the whole polars "
                f"stage {elapsed:.1f}s: ~{est / elapsed:.1f}x; run --full to measure it)"
            )


if __name__ == "__main__":
    main()
