"""The demo build's stage times: wall and CPU seconds per stage of one `build-aletheia-train`
run on configs/demo.yaml (or `--config`), in this process, against a temporary Prefect server.

CPU is what a shared machine cannot inflate: every 0.5 s a sampler reads this process's CPU
time (all its threads: Prefect, torch, the sandbox client), its reaped children's, and the
CPU of the sandbox containers this process started (their cgroup's `cpuacct.usage`, Docker's
cgroupfs driver); a stage's CPU is the growth of that sum over its task runs' start..end
(the demo runs one shard at a time, so the intervals do not overlap). Wall seconds are
printed beside the load average seen during the stage: on a loaded machine they stretch,
CPU seconds do not.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_demo.py                  # fresh build
    PYTHONPATH=$PWD .venv/bin/python bench/bench_demo.py --out out/bench-demo --json prof.json

`--fresh-cache` (default) points the sandbox's verdict cache at a new folder, so judging is
measured cold (the docker image itself is reused). The side-by-side ratios of the cuts
(`--cuts`) are measured on the built work folder: see `cuts()`.
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
                ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=aletheia.sandbox.owner={owner}"],
                capture_output=True,
                text=True,
                timeout=10,
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


STAGE_ORDER = (
    "ingest",
    "splits",
    "fit-policy",
    "sample",
    "judge",
    "tiny-model",
    "assemble",
    "mixed-edits",
    "mixed-judge",
    "mixed",
    "dpo-responses",
    "dpo-pairs",
    "adv-edits",
    "adv-judge",
    "adv",
    "publish",
)


def stage_of(task_name: str, flow_names: dict[str, str]) -> str:
    """A task run's stage (shards and the two adversarial splits told apart)."""
    name = task_name.rsplit("-", 1)[0] if task_name[-1:].isdigit() else task_name
    if name.endswith("-judge-shard"):  # mixed-judge-shard-0, adv-judge-shard-1
        return name.split("-judge-shard")[0] + "-judge"
    if name == "judge-shard":
        return "judge"
    if name == "sample-shard":
        return "sample"
    if name == "dpo-responses-shard":
        return "dpo-responses"
    return name


def task_runs_since(t0_wall: float) -> list[Any]:
    from datetime import UTC, datetime

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import TaskRunSort

    since = datetime.fromtimestamp(t0_wall, UTC)
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(sort=TaskRunSort.EXPECTED_START_TIME_ASC, limit=500)
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

    stages: dict[str, dict[str, float]] = {}
    seen: dict[str, int] = {}
    for r in task_runs_since(t0_wall - 5):
        if not (r.start_time and r.end_time):
            continue
        a = t0 + (r.start_time.timestamp() - t0_wall)
        b = t0 + (r.end_time.timestamp() - t0_wall)
        ca, cb = cpu.at(a), cpu.at(b)
        name = stage_of(r.name, {})
        if name in ("adversarial-edits", "adversarial"):  # Mixed runs first, then Adv
            k = seen[name] = seen.get(name, 0) + 1
            name = ("mixed" if k == 1 else "adv") + name.removeprefix("adversarial")
        st = stages.setdefault(name, {"wall_s": 0.0, "cpu_proc_s": 0.0,
                                                       "cpu_children_s": 0.0, "cpu_sandbox_s": 0.0,
                                                       "runs": 0, "load": 0.0})
        st["wall_s"] += b - a
        st["cpu_proc_s"] += cb[0] - ca[0]
        st["cpu_children_s"] += cb[1] - ca[1]
        st["cpu_sandbox_s"] += cb[2] - ca[2]
        st["runs"] += 1
        st["load"] = load.mean(a, b)
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
    print(f"\n{'stage':16s} {'runs':>4s} {'wall s':>8s} {'cpu s':>8s} {'(proc':>7s} {'sandbox)':>9s} {'load':>5s}")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=REPO / "configs" / "demo.yaml")
    ap.add_argument("--out", type=Path, default=REPO / "out" / "bench-demo")
    ap.add_argument("--json", type=Path, default=None, help="also write the profile here")
    ap.add_argument("--keep-cache", action="store_true", help="reuse $ALETHEIA_CACHE_DIR's verdicts")
    args = ap.parse_args()
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
