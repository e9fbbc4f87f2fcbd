"""The CLI contract: `python -m sandbox run ...` for every verdict in every language, and `judge` batches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sandbox_programs import CASES, PROGRAMS

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]
EXT = {"python": "py", "cpp": "cpp", "java": "java"}


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    tests = d / "tests.jsonl"
    tests.write_text(
        '{"input": "1 2\\n", "output": "3\\n"}\n{"input": "10 -4\\n", "output": "6\\n"}\n'
    )

    def one(case):
        lang, verdict = case
        src = d / f"{lang}_{verdict}.{EXT[lang]}"
        src.write_text(PROGRAMS[lang][verdict])
        return case, _cli(
            "run",
            "--language",
            lang,
            "--source",
            str(src),
            "--tests",
            str(tests),
            "--time-limit",
            "1",
            "--memory-limit-mb",
            "256",
            "--no-cache",
        )

    with ThreadPoolExecutor(2) as ex:
        return dict(ex.map(one, CASES))


@pytest.mark.parametrize(("lang", "verdict"), CASES, ids=[f"{lang}-{v}" for lang, v in CASES])
def test_cli_run_every_verdict(cli_results, lang, verdict):
    proc = cli_results[(lang, verdict)]
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)  # exactly one JSON object on stdout
    assert out["verdict"] == verdict, out
    assert out["total"] == 2
    assert {"passed", "pass_rate", "tests"} <= out.keys()
    for t in out["tests"]:
        assert t["verdict"] in {"AC", "WA", "TLE", "MLE", "RE", "OLE"} and isinstance(
            t["time_s"], float
        )


def test_cli_run_function_mode_and_compare(tmp_path):
    src = tmp_path / "sol.py"
    src.write_text("def f(x):\n    return 2 * x\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"code": "assert f(2) == 4"}\n{"code": "assert f(3) == 7"}\n')
    proc = _cli(
        "run",
        "--language",
        "python",
        "--source",
        str(src),
        "--tests",
        str(tests),
        "--mode",
        "function",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["verdict"], out["passed"], out["total"]) == ("WA", 1, 2)

    src.write_text("print(0.1 + 0.2)\n")
    tests.write_text('{"input": "", "output": "0.3\\n"}\n')
    exact = json.loads(
        _cli(
            "run",
            "--language",
            "python",
            "--source",
            str(src),
            "--tests",
            str(tests),
            "--compare",
            "exact",
        ).stdout
    )
    loose = json.loads(
        _cli(
            "run",
            "--language",
            "python",
            "--source",
            str(src),
            "--tests",
            str(tests),
            "--compare",
            "float",
        ).stdout
    )
    assert (exact["verdict"], loose["verdict"]) == ("WA", "AC")


def test_cli_run_errors_exit_nonzero(tmp_path):
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"input": "", "output": ""}\n')
    missing = _cli(
        "run", "--language", "python", "--source", str(tmp_path / "nope.py"), "--tests", str(tests)
    )
    assert missing.returncode != 0 and "does not exist" in missing.stderr and missing.stdout == ""
    src = tmp_path / "a.py"
    src.write_text("print(1)\n")
    bad_lang = _cli("run", "--language", "cobol", "--source", str(src), "--tests", str(tests))
    assert bad_lang.returncode != 0 and "language" in bad_lang.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_cli_judge_batch(tmp_path, fmt):
    rows = [
        {
            "id": "a",
            "language": "python",
            "source": PROGRAMS["python"]["AC"],
            "tests": [{"input": "1 2\n", "output": "3\n"}],
            "time_limit_s": 1.0,
        },
        {
            "id": "b",
            "language": "cpp",
            "source": PROGRAMS["cpp"]["WA"],
            "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}],
        },
        {
            "id": "c",
            "language": "python",
            "mode": "function",
            "source": "def f():\n    return 1\n",
            "tests": [{"code": "assert f() == 1"}],
        },
    ]
    inp, out = tmp_path / f"in.{fmt}", tmp_path / f"out.{fmt}"
    if fmt == "jsonl":
        inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), inp)
    proc = _cli("judge", str(inp), str(out), "--pool-size", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = (
        [json.loads(line) for line in out.read_text().splitlines()]
        if fmt == "jsonl"
        else pq.read_table(out).to_pylist()
    )
    assert [(r["id"], r["verdict"], r["passed"], r["total"]) for r in got] == [
        ("a", "AC", 1, 1),
        ("b", "WA", 1, 2),
        ("c", "AC", 1, 1),
    ]
    assert all(r["image"].startswith("sha256:") and r["cache_key"] for r in got)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["verdicts"] == {"AC": 2, "WA": 1}


def test_cli_judge_names_bad_row_and_field(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text(
        json.dumps(
            {"language": "python", "source": "print(1)", "tests": [{"input": "", "output": "1"}]}
        )
        + "\n"
        + json.dumps({"language": "python", "source": "print(1)", "tests": [], "time_limit_s": -1})
        + "\n"
    )
    proc = _cli("judge", str(inp), str(out))
    assert proc.returncode != 0
    assert "row 1" in proc.stderr and "tests" in proc.stderr and "time_limit_s" in proc.stderr
    assert not out.exists()


def test_cli_without_engine_says_what_to_do(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-such-docker.sock"}
    ensure = subprocess.run(
        [sys.executable, "-m", "sandbox", "image", "ensure"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ensure.returncode != 0 and "no Docker engine answers" in ensure.stderr
    assert "ensure-docker.sh" in ensure.stderr
    src, tests = tmp_path / "a.py", tmp_path / "t.jsonl"
    src.write_text("print(1)\n")
    tests.write_text('{"input": "", "output": "1"}\n')
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sandbox",
            "run",
            "--language",
            "python",
            "--source",
            str(src),
            "--tests",
            str(tests),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0 and run.stdout == "" and "Docker engine" in run.stderr


def test_cli_run_names_the_option_and_the_closest_value(tmp_path):
    """A bad value is one line naming the option the user typed, with the closest choice:
    `--compare testlb` once read "field mode: Input should be ...", naming no option."""
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"input": "", "output": "1"}\n')
    src = tmp_path / "a.py"
    src.write_text("print(1)\n")
    base = ("run", "--source", str(src), "--tests", str(tests))
    cases = {
        # the languages in the order the runner finds them (sandbox/runner/languages/)
        ("--language", "pyton"): "error: --language: Input should be 'cpp', 'java' or 'python'; "
        "did you mean 'python'?",
        ("--language", "python", "--compare", "testlb"): "error: --compare: Input should be "
        "'tokens', 'exact', 'float', 'checker' or 'testlib'; did you mean 'testlib'?",
        ("--language", "python", "--mode", "stdoi"): "error: --mode: Input should be 'stdio' or "
        "'function'; did you mean 'stdio'?",
        ("--language", "python", "--time-limit", "0"): "error: --time-limit: Input should be "
        "greater than 0",
    }
    for args, expected in cases.items():
        r = _cli(*base, *args)
        assert (r.returncode, r.stderr.strip(), r.stdout) == (2, expected, ""), args


# `python -m sandbox` in a fresh interpreter that then says which libraries it loaded.
_RUN_SANDBOX = """
import runpy, sys
sys.argv = ["sandbox", *sys.argv[1:]]
try:
    runpy.run_module("sandbox", run_name="__main__")
except SystemExit as e:
    print("RC", e.code)
print("LOADED", sorted(m for m in ("httpx", "fastapi", "uvicorn", "docker") if m in sys.modules))
"""


def test_cli_http_without_a_token_names_token_file(tmp_path):
    """No token: one line naming --token-file and the variable; a token file that is missing
    or empty: one line naming it. All before httpx or the server's FastAPI load (the token
    was read from sandbox.http.server, which imports FastAPI and uvicorn: 1-4 s)."""
    src, tests = tmp_path / "a.py", tmp_path / "t.jsonl"
    src.write_text("print(1)\n")
    tests.write_text('{"input": "", "output": "1"}\n')
    (tmp_path / "empty").write_text("\n")
    env = {k: v for k, v in os.environ.items() if k != "ALETHEIA_SANDBOX_TOKEN"}
    base = ["run", "--language", "python", "--source", str(src), "--tests", str(tests),
            "--engine", "http", "--url", "http://127.0.0.1:9"]  # fmt: skip
    cases = {
        (): ["--token-file", "ALETHEIA_SANDBOX_TOKEN"],
        ("--token-file", str(tmp_path / "none")): ["sandbox token file", "No such file"],
        ("--token-file", str(tmp_path / "empty")): ["sandbox token file", "first line is empty"],
    }
    for extra, words in cases.items():
        run = subprocess.run(
            [sys.executable, "-c", _RUN_SANDBOX, *base, *extra],
            cwd=REPO, env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert run.stdout.splitlines() == ["RC 3", "LOADED []"], (extra, run.stdout, run.stderr)
        [line] = run.stderr.strip().splitlines()
        assert line.startswith("error: ") and all(w in line for w in words), (extra, line)
