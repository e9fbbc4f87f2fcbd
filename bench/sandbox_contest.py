"""The contest-size case of bench_sandbox.py: many candidates of one problem against tests of
megabytes, the engine against the same runs as bare host processes (same interpreter and
compiler versions as the image; same comparison code), interleaved round by round.

Every candidate reads all numbers of its input and prints each plus one (about as much output as
input); a quarter of them are wrong in the last number, so the comparison cannot stop early.
Both sides compile the C++ candidates (same g++ version, same flags, no precompiled header used:
the sources include only <cstdio>) and count it.
"""

from __future__ import annotations

import functools
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox import JudgeRequest, TestCase
from sandbox.runner.languages.cpp import LANGUAGE as CPP

if TYPE_CHECKING:  # the Docker client: only for the annotations (a host without docker-py
    from sandbox import SandboxClient  # imports this module for its workloads)

RUNNER = Path(__file__).resolve().parents[1] / "sandbox" / "runner"

PY_PLUS_ONE = (
    "import sys\nxs = sys.stdin.buffer.read().split()\n"
    "sys.stdout.write('\\n'.join(str(int(x) + {bump}) for x in xs[:-1]) + '\\n' + str(int(xs[-1]) + 1{extra}) + '\\n')\n"
)
CPP_PLUS_ONE = r"""
#include <cstdio>
#include <vector>
int main() {
    std::vector<long long> xs; long long x;
    while (scanf("%lld", &x) == 1) xs.push_back(x);
    for (size_t i = 0; i < xs.size(); i++) printf("%lld\n", xs[i] + 1 + (i + 1 == xs.size() ? EXTRA : 0));
}
"""

# One bare worker: its share of candidates, each compiled (C++) then run on every test, stdout
# compared with the runner's own compare.tokens_equal.
BARE_WORKER = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[4])
import compare
manifest, shard, shards = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
ok = 0
for cand in manifest[shard::shards]:
    cmd = cand["cmd"]
    if cand["compile"]:
        subprocess.run(cand["compile"], check=True, capture_output=True)
    good = True
    for inp, out in cand["tests"]:
        with open(inp, "rb") as stdin:
            p = subprocess.run(cmd, stdin=stdin, capture_output=True)
        with open(out, "rb") as f:
            good &= p.returncode == 0 and compare.tokens_equal(p.stdout, f.read())
    ok += good
print(ok)
"""

CPP_FLAGS = list(CPP.flags)  # the runner's C++ flags, so both sides compile alike


def make_tests(n_tests: int, test_mb: float, seed: int) -> list[TestCase]:
    rng = random.Random(seed)
    count = int(test_mb * 2**20 / 8)  # ~8 bytes per number with its separator
    tests = []
    for _ in range(n_tests):
        xs = [rng.randrange(10**6, 10**7) for _ in range(count)]
        tests.append(
            TestCase(
                input=" ".join(map(str, xs)) + "\n", output="\n".join(str(x + 1) for x in xs) + "\n"
            )
        )
    return tests


def make_candidates(n: int, nonce: str) -> list[tuple[str, str, bool]]:
    """(language, source, correct): half Python, half C++; every fourth one wrong."""
    out = []
    for i in range(n):
        wrong = i % 4 == 3
        if i % 2 == 0:
            src = PY_PLUS_ONE.format(bump=1, extra=" + 1" if wrong else "") + f"# {nonce} {i}\n"
            out.append(("python", src, not wrong))
        else:
            src = CPP_PLUS_ONE.replace("EXTRA", "1" if wrong else "0") + f"// {nonce} {i}\n"
            out.append(("cpp", src, not wrong))
    return out


def _manifest(tmp: Path, r: int, cands: list, files: list, python: str) -> Path:
    """The bare workers' job list for one round: each candidate's command (compiled first for
    C++) and its tests' files."""
    manifest = []
    for i, (lang, src, _) in enumerate(cands):
        if lang == "python":
            path = tmp / f"r{r}c{i}.py"
            path.write_text(src)
            manifest.append({"cmd": [python, str(path)], "compile": None, "tests": files})
        else:
            path = tmp / f"r{r}c{i}.cpp"
            path.write_text(src)
            binary = str(tmp / f"r{r}c{i}")
            manifest.append(
                {
                    "cmd": [binary],
                    "tests": files,
                    "compile": ["g++", *CPP_FLAGS, str(path), "-o", binary],
                }
            )
    out = tmp / f"manifest{r}.json"
    out.write_text(json.dumps(manifest))
    return out


def _engine_round(client: SandboxClient, reqs: list[JudgeRequest], want: int) -> float:
    t = time.perf_counter()
    results = client.judge(reqs, use_cache=False)
    sec = time.perf_counter() - t
    got = sum(res.verdict == "AC" for res in results)
    assert got == want, [(res.verdict, res.error) for res in results]
    return sec


def _bare_round(manifest: Path, workers: int, python: str, want: int) -> float:
    t = time.perf_counter()
    procs = [
        subprocess.Popen(
            [python, "-c", BARE_WORKER, str(manifest), str(w), str(workers), str(RUNNER)],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for w in range(workers)
    ]
    accepted = sum(int(p.communicate()[0]) for p in procs)
    sec = time.perf_counter() - t
    assert accepted == want, (accepted, want)
    return sec


def bench_contest(
    client: SandboxClient,
    workers: int,
    n_cands: int,
    n_tests: int,
    test_mb: float,
    python: str,
    rounds: int = 3,
) -> dict:
    """A warm-up round, then `rounds` measured ones; in each, both sides judge the same fresh
    candidates back to back, which side goes first alternating. The warm-up round's engine side
    also sends the tests to each container's store (once per container and problem): it is
    reported apart as the one-off cost, the measured rounds show the per-candidate cost."""
    tests = make_tests(n_tests, test_mb, seed=n_tests)
    tmp = Path(tempfile.mkdtemp(prefix="aletheia-contest-"))
    files = []
    for j, t in enumerate(tests):
        (tmp / f"{j}.in").write_text(t.input)
        (tmp / f"{j}.out").write_text(t.output)
        files.append([str(tmp / f"{j}.in"), str(tmp / f"{j}.out")])
    pairs: list[tuple[float, float]] = []  # (engine s, bare s); [0] is the warm-up
    try:
        for r in range(rounds + 1):
            cands = make_candidates(n_cands, uuid.uuid4().hex)
            want = sum(ok for _, _, ok in cands)
            reqs = [
                JudgeRequest(language=lang, source=src, tests=tests, time_limit_s=10)
                for lang, src, _ in cands
            ]
            manifest = _manifest(tmp, r, cands, files, python)

            engine = functools.partial(_engine_round, client, reqs, want)
            bare = functools.partial(_bare_round, manifest, workers, python, want)
            if r % 2 == 0:  # the warm-up (r = 0) starts with the engine: it fills the stores
                e, b = engine(), bare()
            else:
                b, e = bare(), engine()
            pairs.append((e, b))
            tag = "warm-up" if r == 0 else f"round {r}"
            print(f"    {tag:<8} engine {e:6.1f} s  bare {b:6.1f} s  ({e / b:.2f}x)", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    measured = pairs[1:]
    return {
        "engine_s": sum(e for e, _ in measured),
        "bare_s": sum(b for _, b in measured),
        "ratios": [e / b for e, b in measured],
        "warmup": pairs[0],
        "candidates": rounds * n_cands,
        "tests": rounds * n_cands * n_tests,
        "store_mb": sum(len(t.input) + len(t.output) for t in tests) / 2**20,
    }


def versions(python: str, image: str) -> dict[str, tuple[str, str]]:
    """(bare host, image) versions of what both sides run."""

    def host(cmd: list[str]) -> str:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, check=False)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "absent"

    inside = (
        subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                "--entrypoint",
                "sh",
                image,
                "-c",
                "python3 --version; g++ --version | head -1; java -version 2>&1 | head -1",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        .stdout.strip()
        .splitlines()
    )
    inside += ["?"] * (3 - len(inside))
    return {
        "python": (f"{python}: " + host([python, "--version"]), inside[0]),
        "g++": (host(["g++", "--version"]), inside[1]),
        "java": (host(["java", "-version"]), inside[2]),
    }


if __name__ == "__main__":
    sys.exit("run bench/bench_sandbox.py")
