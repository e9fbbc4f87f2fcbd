"""The judge stage's cost, two sandbox images side by side on the same programs.

Takes a finished build's work folder (`judged.parquet` + `problems.parquet`, e.g. the demo's
`out/demo/work`), and judges every distinct program in it on image A and on image B (no
verdict cache, the same pool size), in halves ordered A B B A so that load drifting on a
shared machine falls on both. Prints, per image: wall seconds, the containers' CPU seconds
(their cgroups' `cpuacct.usage`: what a loaded machine cannot inflate), and the CPU spent in
tests that ended TLE; then the ratios, and whether every verdict, pass count and per-test
verdict agrees between the images and with the build's own rows.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_judge.py out/demo/work \\
        --a aletheia-sandbox:<old tag> --b aletheia-sandbox:<new tag>   # B defaults to this tree's

Only the Docker engine (the images are the thing compared); cgroup v1 or v2.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CGROUP_ROOTS = (
    Path("/sys/fs/cgroup/cpuacct/docker"),
    Path("/sys/fs/cgroup/cpuacct"),
    Path("/sys/fs/cgroup/system.slice"),
    Path("/sys/fs/cgroup/docker"),
)


def container_cpu_s(container_id: str) -> float | None:
    for root in CGROUP_ROOTS:
        v1 = root / container_id / "cpuacct.usage"
        if v1.exists():
            return int(v1.read_text()) / 1e9
        v2 = root / f"docker-{container_id}.scope" / "cpu.stat"
        if not v2.exists():
            v2 = root / container_id / "cpu.stat"
        if v2.exists():
            usage = dict(line.split() for line in v2.read_text().splitlines())
            return int(usage["usage_usec"]) / 1e6
    return None


@dataclass
class Tally:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    tle_test_cpu_s: float = 0.0
    results: dict[str, Any] = field(default_factory=dict)


def judge_on(image: str, programs: list[tuple[str, Any]], pool_size: int, tally: Tally) -> None:
    from sandbox.client import SandboxClient
    from sandbox.image import docker_client

    with SandboxClient(pool_size=pool_size, image=image, cache=False) as client:
        ids = [docker_client().containers.get(name).id for name in client.containers]
        before = {c: container_cpu_s(c) or 0.0 for c in ids}
        start = time.monotonic()
        results = client.judge([req for _, req in programs])
        tally.wall_s += time.monotonic() - start
        for c in ids:
            tally.cpu_s += (container_cpu_s(c) or before[c]) - before[c]
    for (key, _), r in zip(programs, results):
        tally.results[key] = r
        tally.tle_test_cpu_s += sum(t.time_s for t in r.tests if t.verdict == "TLE")


def main() -> int:
    import polars as pl

    from pipeline.judge.interface import judge_spec
    from sandbox.image import ensure_image
    from schemas.problem import Problem

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "work",
        type=Path,
        nargs="?",
        default=REPO / "out" / "demo" / "work",
        help="a build's work folder (judged.parquet, problems.parquet); default: the demo's",
    )
    ap.add_argument("--a", default=None, help="image A (the before), e.g. aletheia-sandbox:<tag>")
    ap.add_argument("--b", default=None, help="image B (default: this tree's, built if missing)")
    ap.add_argument("--pool-size", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N programs")
    args = ap.parse_args()
    if args.a is None or not (args.work / "judged.parquet").exists():
        # `make bench` runs every bench bare: this one needs a build and an older image.
        print(
            "bench_judge: skipped (needs a build's work folder, default out/demo/work, and "
            "--a <an older sandbox image tag> to compare against; see the docstring)"
        )
        return 0

    image_b = args.b or ensure_image()
    problems = {
        r["problem_id"]: Problem.model_validate(r)
        for r in pl.read_parquet(args.work / "problems.parquet").to_dicts()
    }
    rows = (
        pl.read_parquet(args.work / "judged.parquet")
        .unique("judge_cache_key", keep="first")
        .sort("problem_id", "judge_cache_key")
    )
    if args.limit:
        rows = rows.head(args.limit)
    programs, recorded = [], {}
    for r in rows.iter_rows(named=True):
        req = judge_spec(problems[r["problem_id"]]).request(r["language"], r["code"])
        programs.append((r["judge_cache_key"], req))
        recorded[r["judge_cache_key"]] = (r["verdict"], r["passed"], list(r["test_verdicts"]))
    half = len(programs) // 2
    first, second = programs[:half], programs[half:]
    a, b = Tally(), Tally()
    print(f"{len(programs)} distinct programs from {args.work}; A = {args.a}, B = {image_b}")
    for tally, image, part, name in (
        (a, args.a, first, "A"),
        (b, image_b, first, "B"),
        (b, image_b, second, "B"),
        (a, args.a, second, "A"),
    ):
        t0 = time.monotonic()
        judge_on(image, part, args.pool_size, tally)
        print(f"  {name} judged {len(part)} programs in {time.monotonic() - t0:.1f} s", flush=True)

    def same(x: Any, y: Any) -> bool:
        return (x.verdict, x.passed, [t.verdict for t in x.tests]) == (
            y.verdict,
            y.passed,
            [t.verdict for t in y.tests],
        )

    differ = [k for k in a.results if not same(a.results[k], b.results[k])]
    vs_build = [
        k
        for k, r in b.results.items()
        if (r.verdict, r.passed, [t.verdict for t in r.tests]) != recorded[k]
    ]
    print(f"{'image':<6}{'wall s':>9}{'container CPU s':>17}{'CPU in TLE tests':>18}")
    for name, t in (("A", a), ("B", b)):
        print(f"{name:<6}{t.wall_s:>9.1f}{t.cpu_s:>17.1f}{t.tle_test_cpu_s:>18.1f}")
    print(
        f"B / A: wall {b.wall_s / a.wall_s:.2f}x, container CPU {b.cpu_s / max(a.cpu_s, 1e-9):.2f}x"
    )
    print(f"programs whose verdicts differ between A and B: {len(differ)} {differ[:5]}")
    print(f"programs whose B verdicts differ from the build's rows: {len(vs_build)} {vs_build[:5]}")
    for k in differ[:5]:
        ra, rb = a.results[k], b.results[k]
        print(
            f"  {k}: A {ra.verdict} {[t.verdict for t in ra.tests]} {[t.time_s for t in ra.tests]}"
        )
        print(
            f"  {k}: B {rb.verdict} {[t.verdict for t in rb.tests]} {[t.time_s for t in rb.tests]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
