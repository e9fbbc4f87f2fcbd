"""Judge every bundled solution on the host (no sandbox): a quick check while writing problems.

Compiles C++ with g++ -std=c++17 -O2 and Java with javac, runs each test with the problem's
time limit, compares tokens (or floats), and prints each solution's pass rate. This is a
writing aid only; the real check is tests/test_bundled_problems.py, which uses the sandbox.

    python3 data/bundled/_tools/check_local.py [slug ...]
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def tokens_equal(got: str, want: str, mode: str, abs_tol: float, rel_tol: float) -> bool:
    a, b = got.split(), want.split()
    if len(a) != len(b):
        return False
    if mode != "float":
        return a == b
    for x, y in zip(a, b):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if not (math.isfinite(fx) and abs(fx - fy) <= max(abs_tol, rel_tol * abs(fy))):
            return False
    return True


def checker_accepts(checker: Path, test: dict, got: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, text in (("input", test["input"]), ("expected", test["output"]), ("actual", got)):
            (Path(tmp) / name).write_text(text)
            files.append(str(Path(tmp) / name))
        rc = subprocess.run([sys.executable, str(checker), *files], check=False).returncode
    if rc not in (0, 1):
        raise RuntimeError(f"checker {checker} failed with exit code {rc}")
    return rc == 0


def build(path: Path, work: Path) -> list[str]:
    if path.suffix == ".py":
        return [sys.executable, str(path)]
    if path.suffix == ".cpp":
        exe = work / (path.stem + ".bin")
        subprocess.run(["g++", "-std=c++17", "-O2", "-o", str(exe), str(path)], check=True)
        return [str(exe)]
    if path.suffix == ".java":
        src = path.read_text()
        m = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", src)
        cls = m.group(1) if m else "Main"
        d = work / path.stem
        d.mkdir()
        (d / f"{cls}.java").write_text(src)
        subprocess.run(["javac", "-d", str(d), str(d / f"{cls}.java")], check=True)
        return ["java", "-Xss64m", "-cp", str(d), cls]
    raise ValueError(path)


def check(slug: str) -> list[tuple[str, float, str]]:
    pdir = ROOT / slug
    meta = yaml.safe_load((pdir / "problem.yaml").read_text())
    tests = json.loads((pdir / "tests.json").read_text())
    limit = float(meta.get("time_limit_s", 2))
    mode = meta.get("compare_mode", "tokens")
    atol = float(meta.get("float_abs_tol") or 0)
    rtol = float(meta.get("float_rel_tol") or 0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for sol in sorted((pdir / "solutions").iterdir()):
            cmd = build(sol, Path(tmp))
            marks, slowest = [], 0.0
            for t in tests:
                t0 = time.perf_counter()
                try:
                    p = subprocess.run(
                        cmd,
                        input=t["input"],
                        capture_output=True,
                        text=True,
                        errors="replace",  # a wrong program may print invalid UTF-8
                        timeout=limit * 1.5,
                        check=False,
                    )
                    if mode == "checker":
                        ok = p.returncode == 0 and checker_accepts(
                            pdir / meta["checker"], t, p.stdout
                        )
                    else:
                        ok = p.returncode == 0 and tokens_equal(
                            p.stdout, t["output"], mode, atol, rtol
                        )
                    marks.append("." if ok else ("R" if p.returncode else "W"))
                except subprocess.TimeoutExpired:
                    marks.append("T")
                slowest = max(slowest, time.perf_counter() - t0)
            rate = marks.count(".") / len(marks)
            rows.append((sol.name, rate, "".join(marks)))
            print(
                f"{slug:28s} {sol.name:26s} {rate:5.2f} {''.join(marks)}  max {slowest:.2f}s",
                flush=True,
            )
    return rows


def main() -> None:
    slugs = sys.argv[1:] or sorted(p.name for p in ROOT.iterdir() if (p / "problem.yaml").exists())
    bad = []
    for slug in slugs:
        for name, rate, marks in check(slug):
            if name.startswith("correct."):
                if rate != 1.0:
                    bad.append(f"{slug}/{name}: correct solution failed {marks}")
            elif rate == 1.0:
                bad.append(f"{slug}/{name}: wrong solution passed everything")
    print("\n".join(bad) or "all good")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
