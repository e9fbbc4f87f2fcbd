"""The demo build's stage times, and its cuts measured side by side.

Profile (default): one `build-aletheia-train` run on configs/demo.yaml (or `--config`), in
this process, against a temporary Prefect server, with fresh policy fits and an empty
verdict cache (the docker image is reused): wall and CPU seconds per stage.

CPU is what a shared machine cannot inflate: every 0.5 s a sampler reads this process's CPU
time (all its threads: Prefect, torch, the sandbox client), its reaped children's, and the
CPU of the sandbox containers this process started (their cgroup's `cpuacct.usage`, Docker's
cgroupfs driver); a stage's CPU is the growth of that sum from its first task's start to
its last task's end (stages run one after another; a stage's shards may overlap). Wall
seconds are printed beside the load average seen during the stage: on a loaded machine
they stretch, CPU seconds much less.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_demo.py --out out/bench-demo --json prof.json

Cuts (`--cuts <an earlier --out folder>`): each cut before and after on the same input in
one run, alternating which goes first: Adv's re-judge with every edit judged vs the edits
proven unchanged carried (fresh sandbox pools, no verdict cache; the rows must be
identical), and the DPO verifier and a policy's sampling on torch's default threads vs one
thread (the text must be identical).

    PYTHONPATH=$PWD .venv/bin/python bench/bench_demo.py --cuts out/bench-demo --pairs 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@dataclass
class CpuSampler:
    """Cumulative CPU seconds (process + children + own sandbox containers) over time."""

    interval_s: float = 0.5
    samples: list[tuple[float, float, float, float]] = field(default_factory=list)
    _containers: dict[str, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _container_cpu(self) -> float:
        owner = f"{socket.gethostname()}:{os.getpid()}"
        try:
            ids = subprocess.run(
                [
                    "docker",
                    "ps",
                    "-q",
                    "--no-trunc",
                    "--filter",
                    f"label=aletheia.sandbox.owner={owner}",
                ],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            ).stdout.split()
        except (OSError, subprocess.SubprocessError):
            ids = []
        for cid in ids:
            for base in (CGROUP_CPUACCT / cid, CGROUP_CPUACCT / "docker" / cid):
                usage = base / "cpuacct.usage"
                if usage.exists():
                    try:
                        ns = int(usage.read_text())
                    except (OSError, ValueError):
                        continue
                    # a container that exits takes its cgroup along: keep its last reading
                    self._containers[cid] = max(self._containers.get(cid, 0.0), ns / 1e9)
                    break
        return sum(self._containers.values())

    def read(self) -> tuple[float, float, float, float]:
        t = os.times()
        return (
            time.monotonic(),
            t.user + t.system,
            t.children_user + t.children_system,
            self._container_cpu(),
        )

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.read())
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        self.samples.append(self.read())
        threading.Thread(target=self._loop, daemon=True, name="cpu-sampler").start()

    def stop(self) -> None:
        self._stop.set()
        self.samples.append(self.read())

    def at(self, t: float) -> tuple[float, float, float]:
        """Cumulative (process, children, containers) CPU seconds at monotonic time t."""
        best = self.samples[0]
        for s in self.samples:
            if s[0] > t:
                break
            best = s
        return best[1], best[2], best[3]


@dataclass
class LoadSampler:
    samples: list[tuple[float, float]] = field(default_factory=list)

    def mean(self, t0: float, t1: float) -> float:
        vals = [v for t, v in self.samples if t0 <= t <= t1]
        return sum(vals) / len(vals) if vals else os.getloadavg()[0]


SUBFLOWS = {
    "sample-shards",
    "judge-shards",
    "dpo-shards",
    "build-aletheia-eval",
    "publish-aletheia",
}


def stage_of(task_name: str) -> str | None:
    """A task run's stage (shards of one stage together); None for a subflow's own run."""
    import re

    name = re.sub(r"-([0-9a-f]{3}|\d+)$", "", task_name)  # "judge-shard-3fa", "...-shard-0"
    if name in SUBFLOWS:
        return None
    if name.endswith("-judge-shard"):  # mixed-judge-shard-0, adv-judge-shard-1
        return name.removesuffix("-shard")
    return {
        "judge-shard": "judge",
        "sample-shard": "sample",
        "dpo-responses-shard": "dpo-responses",
    }.get(name, name)


def task_runs_since(t0_wall: float) -> list[Any]:
    from datetime import UTC, datetime

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import TaskRunSort

    since = datetime.fromtimestamp(t0_wall, UTC)
    runs: list[Any] = []
    with get_client(sync_client=True) as client:
        while True:  # the API answers at most 200 at a time
            page = client.read_task_runs(
                sort=TaskRunSort.EXPECTED_START_TIME_ASC, limit=200, offset=len(runs)
            )
            runs += page
            if len(page) < 200:
                break
    return [r for r in runs if r.start_time and r.start_time >= since]


def profile(config: Path, out: Path, fresh_cache: bool) -> dict[str, Any]:
    import yaml

    from pipeline.config import load_run_config

    raw = yaml.safe_load(config.read_text())
    raw["out_dir"] = str(out / "build")
    for p in raw.get("policies", []):  # fitted afresh: their time is part of a fresh clone
        p["dir"] = str(out / "models" / Path(p["dir"]).name)
    for s in raw.get("sample", {}).get("sources", []):
        if s.get("kind") == "model":
            s["model"] = str(out / "models" / Path(s["model"]).name)
    tiny = out / "models" / "tiny-qwen2"
    raw["tiny_model"]["dir"] = str(tiny)
    raw["assemble"]["tokenizer"] = str(tiny)
    for j in raw.get("dpo", {}).get("judges", []):
        j["model_path"] = str(tiny)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if fresh_cache:
        os.environ["ALETHEIA_CACHE_DIR"] = str(out / "cache")
    cfg = load_run_config(raw)

    from flows.build import build_aletheia_train

    cpu, load = CpuSampler(), LoadSampler()
    stop = threading.Event()

    def sample_load() -> None:
        while not stop.wait(5):
            load.samples.append((time.monotonic(), os.getloadavg()[0]))

    threading.Thread(target=sample_load, daemon=True).start()
    cpu.start()
    t0_wall, t0 = time.time(), time.monotonic()
    result = build_aletheia_train(cfg.model_dump(mode="json"))
    total_wall = time.monotonic() - t0
    cpu.stop()
    stop.set()
    # The raw samples first: a profile can be rebuilt from them and the flow log if the
    # task-run query below fails.
    (out / "cpu-samples.json").write_text(
        json.dumps({"t0": t0, "t0_wall": t0_wall, "samples": cpu.samples, "load": load.samples})
    )

    spans: dict[str, list[float]] = {}  # stage -> [first start, last end, runs]
    seen: dict[str, list[Any]] = {}  # stage -> its task / flow runs, in order
    for r in task_runs_since(t0_wall - 5):
        name = stage_of(r.name)
        if name is None or not (r.start_time and r.end_time):
            continue
        a = t0 + (r.start_time.timestamp() - t0_wall)
        b = t0 + (r.end_time.timestamp() - t0_wall)
        if name in ("adversarial-edits", "adversarial"):  # Mixed runs first, then Adv
            runs = seen.setdefault(name, [])
            runs.append(r.id)
            name = ("mixed" if len(runs) == 1 else "adv") + name.removeprefix("adversarial")
        elif name in ("dpo-responses", "dpo-pairs"):  # dpo's subflow first, then mixed-dpo's
            flows = seen.setdefault(name, [])
            if r.flow_run_id not in flows:
                flows.append(r.flow_run_id)
            name = ("dpo " if flows.index(r.flow_run_id) == 0 else "mixed-dpo ") + name
        span = spans.setdefault(name, [a, b, 0])
        span[0], span[1], span[2] = min(span[0], a), max(span[1], b), span[2] + 1
    # A stage's shards may run side by side: its wall and CPU are over the span from its
    # first start to its last end (stages themselves run one after another).
    stages: dict[str, dict[str, float]] = {}
    for name, (a, b, n) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        ca, cb = cpu.at(a), cpu.at(b)
        stages[name] = {
            "wall_s": b - a,
            "cpu_proc_s": cb[0] - ca[0],
            "cpu_children_s": cb[1] - ca[1],
            "cpu_sandbox_s": cb[2] - ca[2],
            "runs": n,
            "load": load.mean(a, b),
        }
    end = cpu.samples[-1]
    return {
        "config": str(config),
        "total_wall_s": total_wall,
        "total_cpu_s": end[1] + end[2] + end[3] - sum(cpu.samples[0][1:]),
        "load_mean": load.mean(t0, t0 + total_wall),
        "rows": result.get("rows"),
        "stages": stages,
    }


def print_profile(p: dict[str, Any]) -> None:
    print(
        f"\n{'stage':16s} {'runs':>4s} {'wall s':>8s} {'cpu s':>8s} {'(proc':>7s} {'sandbox)':>9s} {'load':>5s}"
    )
    for name, s in p["stages"].items():
        cpu_total = s["cpu_proc_s"] + s["cpu_children_s"] + s["cpu_sandbox_s"]
        print(
            f"{name:16s} {s['runs']:4d} {s['wall_s']:8.1f} {cpu_total:8.1f} "
            f"{s['cpu_proc_s']:7.1f} {s['cpu_sandbox_s']:9.1f} {s['load']:5.2f}"
        )
    print(
        f"\ntotal: wall {p['total_wall_s']:.0f} s, cpu {p['total_cpu_s']:.0f} s, "
        f"load average {p['load_mean']:.2f} on {os.cpu_count()} cores"
    )
    print("rows:", json.dumps(p["rows"]))


# --- the cuts, before and after side by side ----------------------------------------------


@dataclass
class Timed:
    wall_s: float
    cpu_s: float  # this process (all threads) + its sandbox containers


def _timed(fn: Any) -> tuple[Timed, Any]:
    """Wall and CPU seconds of this process (all threads) running `fn`."""
    c0, t0 = time.process_time(), time.monotonic()
    out = fn()
    return Timed(time.monotonic() - t0, time.process_time() - c0), out


def _alternate(pairs: int, before: Any, after: Any) -> tuple[list[Timed], list[Timed]]:
    """Run before/after `pairs` times, alternating which goes first (a busy neighbour or a
    warm cache then favours neither)."""
    a, b = [], []
    for i in range(pairs):
        if i % 2 == 0:
            a.append(before())
            b.append(after())
        else:
            b.append(after())
            a.append(before())
    return a, b


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def _report(name: str, a: list[Timed], b: list[Timed], note: str) -> dict[str, Any]:
    ca, cb = _median([t.cpu_s for t in a]), _median([t.cpu_s for t in b])
    wa, wb = _median([t.wall_s for t in a]), _median([t.wall_s for t in b])
    print(
        f"{name:28s} cpu {ca:7.1f} -> {cb:7.1f} s ({ca / max(cb, 1e-9):5.1f}x)   "
        f"wall {wa:7.1f} -> {wb:7.1f} s ({wa / max(wb, 1e-9):5.1f}x)   {note}"
    )
    return {"cpu_before": ca, "cpu_after": cb, "wall_before": wa, "wall_after": wb, "note": note}


def cut_adv_rejudge(work: Path, rows: int, pairs: int) -> dict[str, Any]:
    """Adv on the first `rows` Heldout rows: every edit re-judged (before) vs edits proven
    unchanged carried (after); fresh sandbox pools without the verdict cache on each side."""
    from pipeline.common.parquet import read_parquet, write_parquet
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.stage import adversarial
    from sandbox import SandboxClient
    from schemas.instance import INSTANCE_SCHEMA

    tmp = Path(tempfile.mkdtemp(prefix="bench-adv-"))
    heldout = read_parquet(work / "instances" / "heldout.parquet", INSTANCE_SCHEMA).slice(0, rows)
    write_parquet(heldout, tmp / "heldout.parquet", INSTANCE_SCHEMA)
    problems = work / "problems.parquet"
    outs: dict[str, Any] = {}

    def side(carry: bool) -> Timed:
        cfg = AdversarialConfig(rejudge_unchanged=not carry)
        out = tmp / f"{'carry' if carry else 'all'}-{time.monotonic_ns()}"
        cpu = CpuSampler(interval_s=0.2)
        cpu.start()
        t0 = time.monotonic()
        with SandboxClient(pool_size=2, cache=False) as client:
            stats = adversarial(tmp / "heldout.parquet", problems, out, cfg, client)
        wall = time.monotonic() - t0
        cpu.stop()
        first, last = cpu.samples[0], cpu.samples[-1]
        outs[str(carry)] = ((out / "adv.parquet").read_bytes(), stats)
        return Timed(wall, sum(last[1:]) - sum(first[1:]))

    a, b = _alternate(pairs, lambda: side(False), lambda: side(True))
    same = outs["False"][0] == outs["True"][0]
    st = outs["True"][1]
    note = (
        f"{st['edits_planned']} edits, {st['edits_carried_unchanged']} carried; "
        f"rows {'identical' if same else 'DIFFER'}"
    )
    return _report(f"adv re-judge ({rows} heldout rows)", a, b, note)


def cut_threads(work: Path, models: Path, rows: int, pairs: int) -> list[dict[str, Any]]:
    """The tiny models on torch's default threads (before) vs one thread (after): the DPO
    verifier on `rows` Train instances, and the weak policy sampling every problem."""
    import hashlib

    from pipeline.common.parquet import read_parquet
    from pipeline.instances.dpo.config import DPOConfig
    from pipeline.instances.dpo.responses import sample_responses
    from pipeline.sampling.backends.transformers_backend import TransformersBackend
    from pipeline.sampling.config import SampleConfig
    from pipeline.sampling.stage import sample
    from schemas.instance import INSTANCE_SCHEMA

    out = []
    train = read_parquet(work / "instances" / "train.parquet", INSTANCE_SCHEMA).to_pylist()[:rows]
    dcfg = DPOConfig(
        judges=[{"name": "v", "model_path": str(models / "tiny-qwen2")}],
        max_tokens=48,
        constrain_answer=True,
    )
    texts: dict[str, str] = {}

    def dpo(threads: int | None) -> Timed:
        b = TransformersBackend(models / "tiny-qwen2", device="cpu", batch_size=4, threads=threads)
        t, got = _timed(
            lambda: sample_responses(train, b, "v", dcfg.variants[0], dcfg, 4, progress=False)
        )
        texts[str(threads)] = hashlib.sha256(
            json.dumps({k: [r.text for r in v] for k, v in sorted(got.items())}).encode()
        ).hexdigest()
        return t

    a, b = _alternate(pairs, lambda: dpo(None), lambda: dpo(1))
    same = texts["None"] == texts["1"]
    out.append(
        _report(
            f"dpo responses ({rows} rows x4)",
            a,
            b,
            f"torch default threads -> 1; text {'identical' if same else 'DIFFERS'}",
        )
    )

    def policy(threads: int | None) -> Timed:
        cfg = SampleConfig.model_validate(
            {
                "progress": False,
                "sources": [
                    {
                        "kind": "model",
                        "name": "w",
                        "model": str(models / "demo-policy-weak"),
                        "tier": "weak",
                        "samples_per_problem": 2,
                        "max_tokens": 128,
                        "seed": 0,
                        "backend": {
                            "type": "transformers",
                            "device": "cpu",
                            "batch_size": 16,
                            "threads": threads,
                        },
                    }
                ],
            }
        )
        dest = Path(tempfile.mkdtemp(prefix="bench-sample-"))
        t, _ = _timed(lambda: sample(cfg, work / "problems.parquet", dest))
        texts["s" + str(threads)] = hashlib.sha256(
            (dest / "candidates.parquet").read_bytes()
        ).hexdigest()
        return t

    a, b = _alternate(pairs, lambda: policy(None), lambda: policy(1))
    same = texts["sNone"] == texts["s1"]
    out.append(
        _report(
            "sample (weak policy)",
            a,
            b,
            f"torch default threads -> 1; candidates {'identical' if same else 'DIFFER'}",
        )
    )
    return out


def cuts(build: Path, pairs: int, adv_rows: int, dpo_rows: int) -> dict[str, Any]:
    work, models = build / "build" / "work", build / "models"
    print(
        f"\nthe cuts, before -> after, median of {pairs} alternating pair(s); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    return {
        "adv_rejudge": cut_adv_rejudge(work, adv_rows, pairs),
        "threads": cut_threads(work, models, dpo_rows, pairs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=REPO / "configs" / "demo.yaml")
    ap.add_argument("--out", type=Path, default=REPO / "out" / "bench-demo")
    ap.add_argument("--json", type=Path, default=None, help="also write the profile here")
    ap.add_argument(
        "--keep-cache", action="store_true", help="reuse $ALETHEIA_CACHE_DIR's verdicts"
    )
    ap.add_argument(
        "--cuts",
        type=Path,
        default=None,
        help="skip the build; measure the cuts side by side on this earlier --out folder",
    )
    ap.add_argument("--pairs", type=int, default=2, help="before/after pairs per cut")
    ap.add_argument("--adv-rows", type=int, default=12, help="Heldout rows for the Adv cut")
    ap.add_argument("--dpo-rows", type=int, default=8, help="Train rows for the DPO cut")
    args = ap.parse_args()
    if args.cuts is not None:
        result = cuts(args.cuts.resolve(), args.pairs, args.adv_rows, args.dpo_rows)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        return
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="bench-demo-prefect-")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        p = profile(args.config.resolve(), args.out.resolve(), fresh_cache=not args.keep_cache)
    print_profile(p)
    if args.json:
        args.json.write_text(json.dumps(p, indent=2))


if __name__ == "__main__":
    main()
