"""How fast a run that cannot work says so: the build's dry run lists a judge engine that
cannot run, a dead model server, a tokenizer that cannot be had offline or a missing
benchmark file within 5 s; every command that would meet one of them answers in one line
within 3 s.

Real dead engines, as tests/judge/test_judge_dead_engine.py uses them: DOCKER_HOST at a
socket where nothing listens (the real dockerd is left alone), an http URL on a closed
127.0.0.1 port, an http engine without a token. A dead model server is a closed 127.0.0.1
port too, named as a sampling pool's server (`aletheia sample`), a DPO judge's
(`aletheia dpo`) and an evaluation backend (`aletheia evaluate --backend URL`); the
tokenizer is a Hub id missing from the HF cache under HF_HUB_OFFLINE=1 (`aletheia
assemble`, `require_tokenizer: true`); the benchmark a path where no file is
(`aletheia problems split --benchmark`). The commands' inputs are placeholders where the
command refuses before reading them. Each case runs in a fresh interpreter, once uncounted
(it writes the bytecode cache an installed environment has; the bench's own, in its
temporary folder), then `--repeats` times; the median wall and CPU seconds are printed
beside the target and beside `aletheia --help` (the floor every command pays: Python,
typer, the CLI's modules).

    .venv/bin/python bench/bench_fail_fast.py [--repeats 5]

Wall time depends on what else the machine runs: measure on an idle one (`uptime`'s load is
printed with the figures).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DRY_RUN_TARGET_S = 5.0
COMMAND_TARGET_S = 3.0


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once this returns


def _environ(tmp: Path) -> dict[str, str]:
    """This environment, with a bytecode cache as an installed one has (in the bench's own
    folder, the checkout and the venv left alone): where PYTHONDONTWRITEBYTECODE is set,
    every start compiles each module it imports, seconds that no user's command pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PYTHONPYCACHEPREFIX": str(tmp / "pycache")}


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the child, exit code, its last stderr/stdout line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "aletheia", *args],
        check=False,
        cwd=cwd,
        env={**_environ(cwd), "PYTHONPATH": str(REPO), "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = (r.stderr.strip() or r.stdout.strip()).splitlines()
    return wall, cpu, r.returncode, lines[-1] if lines else ""


def cases(tmp: Path) -> list[tuple[str, list[str], dict[str, str], float | None]]:
    """(name, aletheia args, env, target seconds or None for the reference)."""
    dead_docker = {"DOCKER_HOST": f"unix://{tmp / 'no-docker.sock'}"}
    token = {"ALETHEIA_SANDBOX_TOKEN": "x"}
    url = f"http://127.0.0.1:{closed_port()}"
    demo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    for name, sandbox in {
        "dead-url": {"engine": "http", "url": url},
        "no-token": {"engine": "http", "url": url},
        "docker": {"engine": "docker"},
    }.items():
        cfg = {**demo, "sandbox": {**(demo.get("sandbox") or {}), **sandbox}}
        (tmp / f"{name}.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    no_token = {"ALETHEIA_SANDBOX_TOKEN": "", "ALETHEIA_SANDBOX_URL": ""}
    model = tmp / "policy"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text("{}")  # a model folder to the eye; never loaded
    problems = str(tmp / "problems.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"source_split": ["test"]}), problems)
    commands = {
        "judge": ["judge", "--candidates", "c.parquet", "-p", problems, "-o", "j.parquet"],
        "check-references": ["check-references", "-p", problems, "-o", "refs"],
        "evaluate-policy": ["evaluate-policy", "--model", str(model), "-p", problems,
                            "-o", "report", "--split", "all"],
        "adversarial": ["adversarial", "-i", "i.parquet", "-p", problems, "-o", "adv"],
    }  # fmt: skip
    dry = ["build-train", "--dry-run", "-c"]
    out: list[tuple[str, list[str], dict[str, str], float | None]] = [
        ("aletheia --help (reference)", ["--help"], {}, None),
        ("dry run, http: dead URL", [*dry, str(tmp / "dead-url.yaml")], token, DRY_RUN_TARGET_S),
        ("dry run, http: no token", [*dry, str(tmp / "no-token.yaml")], no_token, DRY_RUN_TARGET_S),
        ("dry run, docker down", [*dry, str(tmp / "docker.yaml")], dead_docker, DRY_RUN_TARGET_S),
    ]  # fmt: skip
    for name, args in commands.items():
        out.append((f"{name}, docker down", args, dead_docker, COMMAND_TARGET_S))
        out.append((f"{name}, http dead URL", [*args, "--url", url], token, COMMAND_TARGET_S))
    return out + model_cases(tmp, demo, problems)


def model_cases(
    tmp: Path, demo: dict, problems: str
) -> list[tuple[str, list[str], dict[str, str], float | None]]:
    """Dead model servers, an offline tokenizer and a missing benchmark: the dry run, then
    the command that would meet each."""
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    offline = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp / "empty-hf-cache")}
    served = {"type": "openai", "base_url": dead}
    source = {"kind": "model", "name": "served", "model": "acme/coder", "tier": "weak",
              "backend": served}  # fmt: skip
    judge = {"name": "served", "model": "acme/judge", "backend": served}
    dpo = {k: v for k, v in demo["dpo"].items() if k not in ("strong_judge", "rejected_judges")}
    tokenizer = {"tokenizer": "acme/no-such-tokenizer", "require_tokenizer": True}
    missing = str(tmp / "benchmarks" / "livecodebench.jsonl")
    configs = {
        "sample server": {"sample": {"sources": [source]}},
        "DPO judge server": {"dpo": {**dpo, "judges": [judge]}},
        "evaluate server": {"evaluate": {**demo["evaluate"], "backend": served}},
        "tokenizer offline": {"assemble": {**demo["assemble"], **tokenizer}},
        "missing benchmark": {"splits": {**(demo.get("splits") or {}), "benchmarks": [missing]}},
    }
    out: list[tuple[str, list[str], dict[str, str], float | None]] = []
    for name, change in configs.items():
        path = tmp / f"{name.replace(' ', '-')}.yaml"
        path.write_text(yaml.safe_dump({**demo, **change}, sort_keys=False))
        args = ["build-train", "--dry-run", "-c", str(path)]
        out.append((f"dry run, dead {name}" if "server" in name else f"dry run, {name}", args,
                    offline, DRY_RUN_TARGET_S))  # fmt: skip
    (tmp / "data").mkdir(exist_ok=True)  # each command refuses before reading its inputs
    for name, data in {"pool.yaml": {"sources": [source]}, "dpo.yaml": {"judges": [judge]},
                       "assemble.yaml": tokenizer}.items():  # fmt: skip
        (tmp / name).write_text(yaml.safe_dump(data))
    for name in ("judged.parquet", "instances.parquet", "splits/assignments.parquet"):
        (tmp / name).parent.mkdir(exist_ok=True)
        (tmp / name).write_bytes(b"placeholder")
    commands = {
        "evaluate, dead server": ["evaluate", "--data", str(tmp / "data"), "--out", "eval",
                                  "--model", "acme/verifier", "--backend", dead],
        "sample, dead server": ["sample", "-p", problems, "-o", "sampled", "-c", "pool.yaml"],
        "dpo, dead judge server": ["dpo", "-i", "instances.parquet", "-o", "dpo", "-c",
                                   "dpo.yaml"],
        "assemble, tokenizer offline": ["assemble", "-j", "judged.parquet", "-p", problems,
                                        "--splits", "splits", "-o", "inst", "-c",
                                        "assemble.yaml"],
        "problems split, no benchmark": ["problems", "split", "-p", problems, "-o", "splits-out",
                                         "--benchmark", missing],
    }  # fmt: skip
    out += [(name, args, offline, COMMAND_TARGET_S) for name, args in commands.items()]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    repeats = ap.parse_args().repeats
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min); {os.cpu_count()} CPUs")
    print(f"{'case':<36} {'wall s':>7} {'CPU s':>6} {'target':>6} {'x target':>8}  rc  last line")
    missed = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, args, env, target in cases(tmp):
            timed(args, env, tmp)  # not counted: writes the bytecode this case imports
            runs = [timed(args, env, tmp) for _ in range(repeats)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rc, last = runs[-1][2], runs[-1][3]
            ratio = f"{wall / target:8.2f}" if target else " " * 8
            missed += bool(target and wall > target)
            shown = f"{target:6.1f}" if target else " " * 6
            print(f"{name:<36} {wall:7.2f} {cpu:6.2f} {shown} {ratio}  {rc:>2}  {last[:90]}")
    print(f"load average after: {os.getloadavg()[0]:.2f}; cases over their target: {missed}")


if __name__ == "__main__":
    main()
