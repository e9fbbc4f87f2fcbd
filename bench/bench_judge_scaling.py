"""The judge across cores: throughput at 1, 2, 4, ... slots against linear scaling, in one run.

Each workload is judged at every slot count with the same work per slot (`n` slots judge `n`
times the programs one slot judges), so a level takes about as long as the first when scaling
is linear, and the efficiency at `n` slots is `throughput(n) / (n * throughput(1))`.

Workloads:
  demo       the demo's distinct judged programs (the bundled problems' references and their
             mutants in Python, C++ and Java, every test; bench_engines.demo_programs), each round
             with a fresh comment in every source so that each program compiles again, as in a
             build (no verdict or compile cache helps)
  contest1   Python and C++ programs of one problem against 10 tests of 1 MB (read every number,
             print each plus one: about as much output as input; a quarter wrong at the end)
  contest4   the same with 5 tests of 4 MB

Per level it prints: programs/s and tests/s; the efficiency against linear; the programs' CPU
(every sandboxed process, read from RUSAGE_CHILDREN when the engine's runners are reaped at close)
per program, whose rise with `n` means the programs slow each other down (memory bandwidth,
caches, the CPU's clock under load); the host-side CPU of this process (the engine's dispatch,
request encoding, the test store's encoding) as a share of one core, which near 100% means the
host's Python is the bottleneck; the machine's busy share of all cores (/proc/stat); and the
one-off time to put a contest problem's tests in every slot's store (warm-up, not counted).

    .venv/bin/python bench/bench_judge_scaling.py --engine docker --slots 1,2 --seconds 10   # here
    python3 bench/bench_judge_scaling.py --engine process --slots 1,2,4,8,16                  # 16 cores
    .venv/bin/python bench/bench_judge_scaling.py --export out/demo-mix.json.gz   # the demo mix (each
        problem's tests once), for a machine without the pipeline's packages (--requests FILE there)

Prints one table per workload and a summary line per workload with the efficiency at the
largest slot count; `--json FILE` writes every figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import resource
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.sandbox_contest import make_candidates, make_tests
from sandbox import JudgeRequest
from sandbox.engines import LOCAL_ENGINES, open_engine

COMMENT = {"python": "#", "cpp": "//", "java": "//"}


@dataclass
class Level:
    workload: str
    slots: int
    programs: int
    tests: int
    wall_s: float
    programs_per_s: float
    tests_per_s: float
    efficiency: float  # throughput / (slots x the one-slot throughput)
    program_cpu_ms: float  # CPU of the sandboxed processes per program
    host_cpu_share: float  # this process's CPU over the wall time (1.0 = one core)
    machine_busy: float  # busy share of all the machine's cores
    store_s: float  # warm-up: the problem's tests into every slot's store (contest workloads)
    accepted: int


def machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot (/proc/stat's first line)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])
    return total - idle, total


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def self_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def fresh(req: JudgeRequest, nonce: str) -> JudgeRequest:
    """The request with a comment that makes its source (and so its compile) new."""
    line = f"{COMMENT[req.language]} scaling {nonce}\n"
    return req.model_copy(update={"source": req.source + "\n" + line})


# -- workloads ------------------------------------------------------------------------------------


def demo_requests(path: str | None) -> list[JudgeRequest]:
    if path:  # --export's file: each problem's tests once, the requests naming them
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        return [
            JudgeRequest.model_validate({**r, "tests": data["tests"][r.pop("tests_ref")]})
            for r in data["requests"]
        ]
    from bench.bench_engines import demo_programs

    return [req for _, req in demo_programs(None, None)]


def contest_requests(n: int, test_mb: float, n_tests: int) -> list[JudgeRequest]:
    tests = make_tests(n_tests, test_mb, seed=7)
    return [
        JudgeRequest(language=lang, source=src, tests=tests, time_limit_s=10, memory_limit_mb=1024)
        for lang, src, _ in make_candidates(n, uuid.uuid4().hex[:8])
    ]


def workload_requests(name: str, per_slot: int, slots: int, demo: list[JudgeRequest], seed: int):
    """`slots` copies of one slot's work (`per_slot` programs), each source new: every level
    judges the same mix, so only the slot count differs between levels."""
    nonce = uuid.uuid4().hex[:10]
    if name == "demo":
        base = random.Random(seed).sample(demo, min(per_slot, len(demo)))
        out = [fresh(r, f"{nonce}-{c}-{i}") for c in range(slots) for i, r in enumerate(base)]
        random.Random(seed + slots).shuffle(out)  # copies interleaved, as a build's queue mixes
        return out
    mb, n_tests = {"contest1": (1, 10), "contest4": (4, 5)}[name]
    return contest_requests(per_slot * slots, mb, n_tests)


# -- one level ------------------------------------------------------------------------------------


def run_level(engine_name: str, workload: str, slots: int, per_slot: int, demo, seed: int) -> Level:
    reqs = workload_requests(workload, per_slot, slots, demo, seed)
    n_tests = sum(len(r.tests) for r in reqs)
    cpu0 = children_cpu_s()
    with open_engine(engine_name, pool_size=slots, cache=False, selftest=False) as engine:
        store_s = 0.0
        if workload != "demo":  # the one-off: this problem's tests into every slot's store
            warm = workload_requests(workload, 1, slots, demo, seed)
            t = time.perf_counter()
            engine.judge(warm, use_cache=False)
            store_s = time.perf_counter() - t
        busy0, total0 = machine_busy_ticks()
        host0 = self_cpu_s()
        t = time.perf_counter()
        results = engine.judge(reqs, use_cache=False)
        wall = time.perf_counter() - t
        host = self_cpu_s() - host0
        busy1, total1 = machine_busy_ticks()
    cpu = children_cpu_s() - cpu0  # the runners are reaped at close: their CPU is in now
    warm_programs = slots if workload != "demo" else 0
    # Docker's containers are not this process's children: their CPU is not seen here.
    per_program = cpu / (len(reqs) + warm_programs) if engine_name == "process" else float("nan")
    lost = [r for r in results if r.verdict == "SE"]
    if lost:
        print(f"  warning: {len(lost)} SE verdicts at {slots} slots: {lost[0].error}", flush=True)
    return Level(
        workload=workload,
        slots=slots,
        programs=len(reqs),
        tests=n_tests,
        wall_s=wall,
        programs_per_s=len(reqs) / wall,
        tests_per_s=n_tests / wall,
        efficiency=float("nan"),
        program_cpu_ms=per_program * 1000,
        host_cpu_share=host / wall,
        machine_busy=(busy1 - busy0) / max(1, total1 - total0),
        store_s=store_s,
        accepted=sum(r.verdict == "AC" for r in results),
    )


def calibrate(engine_name: str, workload: str, demo, seconds: float, seed: int) -> int:
    """Programs per slot so that one slot takes about `seconds`."""
    probe = {"demo": 40, "contest1": 4, "contest4": 2}[workload]
    level = run_level(engine_name, workload, 1, probe, demo, seed)
    # the demo mix varies program to program: at least 40 programs keep a level's mix like the
    # whole demo's
    floor = 40 if workload == "demo" else probe // 2
    return max(floor, round(seconds * level.programs_per_s))


def print_table(levels: list[Level]) -> None:
    head = (f"  {'slots':>5} {'programs':>8} {'wall s':>7} {'prog/s':>7} {'tests/s':>8} "
            f"{'eff.':>6} {'CPU/prog':>9} {'host CPU':>8} {'busy':>5} {'store s':>7}")  # fmt: skip
    print(head)
    for lv in levels:
        cpu = "-" if math.isnan(lv.program_cpu_ms) else f"{lv.program_cpu_ms:.0f}ms"
        print(
            f"  {lv.slots:5d} {lv.programs:8d} {lv.wall_s:7.1f} {lv.programs_per_s:7.2f} "
            f"{lv.tests_per_s:8.1f} {lv.efficiency:6.2f} {cpu:>9} "
            f"{lv.host_cpu_share:7.0%} {lv.machine_busy:5.0%} {lv.store_s:7.1f}",
            flush=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="process", choices=LOCAL_ENGINES)
    ap.add_argument("--slots", default="1,2,4,8,16", help="slot counts, comma-separated")
    ap.add_argument("--workloads", default="demo,contest1,contest4")
    ap.add_argument("--seconds", type=float, default=20.0, help="about this long per level")
    ap.add_argument("--requests", help="the demo mix (from --export)")
    ap.add_argument("--export", help="write the demo mix (gzipped JSON) and stop")
    ap.add_argument(
        "--languages",
        default="python,cpp,java",
        help="the demo mix's languages (a host without Java: python,cpp)",
    )
    ap.add_argument("--json", help="write every level's figures here")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    if args.export:
        reqs = demo_requests(None)
        Path(args.export).parent.mkdir(parents=True, exist_ok=True)
        tests, rows = {}, []
        for r in reqs:
            row = r.model_dump(mode="json")
            tests[r.tests_ref] = row.pop("tests")
            rows.append({**row, "tests_ref": r.tests_ref})
        with gzip.open(args.export, "wt") as f:
            json.dump({"tests": tests, "requests": rows}, f)
        print(f"wrote {len(reqs)} demo programs to {args.export}")
        return 0

    slots = [int(s) for s in args.slots.split(",")]
    workloads = args.workloads.split(",")
    languages = set(args.languages.split(","))
    demo = (
        [r for r in demo_requests(args.requests) if r.language in languages]
        if "demo" in workloads
        else []
    )
    print(
        f"judge scaling: engine {args.engine}, {os.cpu_count()} CPUs, slots {slots}, "
        f"~{args.seconds:.0f} s per level"
        + (f"; demo mix {len(demo)} distinct programs" if demo else ""),
        flush=True,
    )
    everything: list[Level] = []
    for workload in workloads:
        per_slot = calibrate(args.engine, workload, demo, args.seconds, args.seed)
        print(f"\n[{workload}] {per_slot} programs per slot", flush=True)
        levels = [run_level(args.engine, workload, n, per_slot, demo, args.seed) for n in slots]
        base = levels[0].programs_per_s / levels[0].slots
        for lv in levels:
            lv.efficiency = lv.programs_per_s / (lv.slots * base)
        print_table(levels)
        top = levels[-1]
        cpu_rise = top.program_cpu_ms / levels[0].program_cpu_ms
        print(
            f"  => {workload}: efficiency {top.efficiency:.2f} at {top.slots} slots"
            + ("" if math.isnan(cpu_rise) else f"; CPU per program {cpu_rise:.2f}x one slot's"),
            flush=True,
        )
        everything += levels
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(lv) for lv in everything], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
