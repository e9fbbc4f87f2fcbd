"""Each adapter on source-shaped rows (see conftest.py), through the real ingest stage."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import SourceError
from pipeline.problems.stage import ingest, output_paths
from schemas.ids import problem_id_for
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import table_to_models


def run_ingest(
    specs: list[str], tmp_path: Path, **config
) -> tuple[dict, dict[str, Problem], list[dict]]:
    out = tmp_path / "out" / "problems.parquet"
    stats = ingest(specs, out, IngestConfig(**config), show_progress=False)
    problems = table_to_models(pq.read_table(out), Problem)
    quarantine = pq.read_table(output_paths(out)["quarantine"]).to_pylist()
    return stats, {p.source_id: p for p in problems}, quarantine


def reasons(quarantine: list[dict]) -> dict[str, str]:
    return {q["source_row_id"]: q["reason"] for q in quarantine}


def run_function_test(candidate: str, test_code: str) -> int:
    """Run our own test candidate + generated test code (trusted: both written here)."""
    return subprocess.run(
        [sys.executable, "-c", candidate + "\n" + test_code],
        check=False,
        capture_output=True,
        timeout=30,
    ).returncode


def test_code_contests(code_contests_file: Path, tmp_path: Path) -> None:
    stats, problems, quarantine = run_ingest([f"code_contests:{code_contests_file}"], tmp_path)
    p = problems["1_A. Sum"]
    assert p.problem_id == problem_id_for("code_contests", "1_A. Sum")
    assert [(t.input, t.output) for t in p.tests] == [
        ("1 2\n", "3\n"),
        ("5 7\n", "12\n"),
        ("-1 1\n", "0\n"),
        ("100 200\n", "300\n"),
    ]
    assert p.time_limit_s == 1.5 and p.memory_limit_mb == 256
    assert p.difficulty == "A" and "math" in p.tags and "platform:codeforces" in p.tags
    langs = sorted((s.language, s.correct) for s in p.solutions)
    assert langs == [("cpp", True), ("java", True), ("python", False), ("python", True)]
    assert "Examples" in p.statement and "Examples" not in p.prompt_statement
    assert "1 2" not in p.prompt_statement and "Print a+b." in p.prompt_statement
    # Python 2 and unknown-language solutions are skipped and counted, not silently dropped.
    src = stats["per_source"][f"code_contests:{code_contests_file}"]
    assert src["skipped_solutions_by_language"] == {"python2": 5, "unknown": 5}  # 1 each in 5 rows
    # defaults when the source gives no limits
    assert (
        problems["5_E. No limit"].time_limit_s == 2.0
        and problems["5_E. No limit"].memory_limit_mb == 256
    )
    r = reasons(quarantine)
    assert r["2_B. No tests"] == "no tests"
    assert "absurd time limit" in r["3_C. Absurd"]
    assert r["4_D. Empty"] == "empty statement"
    assert stats["problems"] == 2 and stats["quarantined"] == 3
    assert all(q["raw"] and q["stage"] == "ingest" for q in quarantine)


def test_code_contests_without_generated_tests(code_contests_file: Path, tmp_path: Path) -> None:
    _, problems, _ = run_ingest(
        [f"code_contests:{code_contests_file}"], tmp_path, include_generated_tests=False
    )
    assert len(problems["1_A. Sum"].tests) == 3
    stats, problems, _ = run_ingest(
        [f"code_contests:{code_contests_file}"], tmp_path / "2", max_tests_per_problem=2
    )
    assert len(problems["1_A. Sum"].tests) == 2
    assert stats["per_source"][f"code_contests:{code_contests_file}"]["notes"] == {
        "tests cut to max_tests_per_problem": 2
    }


def test_taco(taco_file: Path, tmp_path: Path) -> None:
    _stats, problems, quarantine = run_ingest([f"taco:{taco_file}"], tmp_path)
    stdio = problems["train/0"]
    assert stdio.test_mode == "stdio"
    assert [(t.input, t.output) for t in stdio.tests] == [
        ("3\n", "6\n"),
        ("0\n", "0\n"),
        ("5", "10"),
    ]
    assert stdio.time_limit_s == 1.0 and stdio.memory_limit_mb == 256
    assert stdio.contest_date == dt.date(2021, 3, 11) and stdio.tags == ["Mathematics"]
    assert stdio.solutions[0].language == "python" and stdio.solutions[0].correct
    fn = problems["train/1"]
    assert fn.test_mode == "function" and fn.entry_point == "list_sum" and len(fn.tests) == 2
    good = "def list_sum(xs):\n    return sum(xs)\n"
    bad = "def list_sum(xs):\n    return len(xs)\n"
    assert all(run_function_test(good, t.code) == 0 for t in fn.tests)
    assert run_function_test(bad, fn.tests[0].code) != 0
    assert "undecodable JSON" in reasons(quarantine)["train/2"]
    assert quarantine[0]["field"] == "input_output"


def test_apps(apps_file: Path, tmp_path: Path) -> None:
    _, problems, quarantine = run_ingest([f"apps:{apps_file}"], tmp_path)
    assert problems["train/0"].difficulty == "introductory"
    fn = problems["train/1"]
    assert fn.entry_point == "twoSum" and "class Solution" in fn.starter_code
    good = (
        "from typing import List\nclass Solution:\n    def twoSum(self, nums: List[int], target: int):\n"
        "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n"
    )
    assert run_function_test(good, fn.tests[0].code) == 0
    assert run_function_test(good.replace("[seen[target - x], i]", "[i, i]"), fn.tests[0].code) != 0
    assert reasons(quarantine)["train/2"] == "tests[0] is missing its expected output"


def test_livecodebench(lcb_file: Path, tmp_path: Path) -> None:
    marker = Path("/tmp/aletheia-pwned-by-pickle")
    marker.unlink(missing_ok=True)
    _, problems, quarantine = run_ingest([f"livecodebench:{lcb_file}"], tmp_path)  # split: test
    stdio = problems["abc999_a"]
    assert [(t.input, t.output) for t in stdio.tests] == [
        ("1 2\n", "3\n"),
        ("5 5\n", "10\n"),
    ]  # compressed private
    assert stdio.contest_date == dt.date(2024, 5, 4) and stdio.tags == ["platform:atcoder"]
    assert "Sample Input" not in stdio.prompt_statement and "Constraints" in stdio.prompt_statement
    fn = problems["2999"]
    assert fn.test_mode == "function" and fn.entry_point == "maxOf" and len(fn.tests) == 2
    assert "Example 1" not in fn.prompt_statement and "Constraints:" in fn.prompt_statement
    good = "from typing import List\nclass Solution:\n    def maxOf(self, nums: List[int]) -> int:\n        return max(nums)\n"
    assert all(run_function_test(good, t.code) == 0 for t in fn.tests)
    assert run_function_test(good.replace("max(nums)", "min(nums)"), fn.tests[0].code) != 0
    r = reasons(quarantine)
    # a hostile pickle is refused with a clear reason and never executed
    assert "refused unsafe pickle" in r["abc999_b"] and "posix.system" in r["abc999_b"]
    assert not marker.exists()
    assert "undecodable test cases" in r["abc999_c"]


def test_codeforces(codeforces_file: Path, tmp_path: Path) -> None:
    _stats, problems, quarantine = run_ingest([f"codeforces:{codeforces_file}"], tmp_path)
    p = problems["2000/A"]
    assert (
        p.contest_date == dt.date(2025, 1, 1) and p.time_limit_s == 2.0 and p.memory_limit_mb == 256
    )
    assert len(p.tests) == 2 and p.difficulty == "800" and p.compare_mode == "tokens"
    assert (
        p.statement.index("Input\nn, then")
        < p.statement.index("Examples")
        < p.statement.index("Note")
    )
    assert "Examples" not in p.prompt_statement and "Note" in p.prompt_statement
    assert problems["2000/B"].compare_mode == "checker" and "checker" in problems["2000/B"].checker
    r = reasons(quarantine)
    assert (
        "not supported" in r["2000/C"]
        and "interactive" in r["2000/D"]
        and r["2000/E"] == "no tests"
    )
    assert "absurd memory limit" in r["2000/F"]


def test_humaneval_from_the_wheel(tmp_path: Path) -> None:
    _stats, problems, quarantine = run_ingest(["humaneval"], tmp_path)
    assert len(problems) == 164 and not quarantine
    p = problems["HumanEval/0"]
    assert p.test_mode == "function" and p.entry_point == "has_close_elements"
    assert p.tests[0].code.rstrip().endswith("check(has_close_elements)")
    assert p.prompt_statement == p.statement  # code: shown as is
    assert all(q.entry_point and q.solutions[0].correct for q in problems.values())
    # the canonical solution passes its own test code; a wrong body does not
    assert run_function_test(p.solutions[0].code, p.tests[0].code) == 0
    assert run_function_test(p.statement + "    return False\n", p.tests[0].code) != 0


def test_native_jsonl_roundtrip_and_bad_rows(tmp_path: Path) -> None:
    rows = [
        {
            "source": "mine",
            "source_id": "a",
            "statement": "Echo the input line.",
            "test_mode": "stdio",
            "tests": [{"input": "x\n", "output": "x\n"}],
            "contest_date": "2024-02-03",
        },
        {
            "source": "mine",
            "source_id": "b",
            "statement": "Bad mode.",
            "test_mode": "stdio",
            "tests": [{"code": "assert True"}],
        },
        {
            "source": "mine",
            "source_id": "c",
            "statement": "Unknown column.",
            "test_mode": "stdio",
            "tests": [{"input": "1", "output": "1"}],
            "colour": "red",
        },
        {
            "source": "mine",
            "source_id": "a",
            "statement": "Same id again.",
            "test_mode": "stdio",
            "tests": [{"input": "1", "output": "1"}],
        },
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _stats, problems, quarantine = run_ingest([f"jsonl:{path}"], tmp_path)
    assert list(problems) == ["a"] and problems["a"].contest_date == dt.date(2024, 2, 3)
    assert problems["a"].problem_id == problem_id_for("mine", "a")
    r = {(q["source_row_id"], q["field"]): q["reason"] for q in quarantine}
    assert r[("b", "tests")] == "tests[0] has no input"
    assert "Extra inputs are not permitted" in r[("c", "colour")]
    assert "duplicate problem_id" in r[("a", "problem_id")]
    # our own Parquet output is itself a valid source
    _stats2, again, _ = run_ingest(
        [f"parquet:{tmp_path / 'out' / 'problems.parquet'}"], tmp_path / "2"
    )
    assert again["a"] == problems["a"]


def test_malformed_jsonl_lines_are_quarantined_and_the_rest_ingested(tmp_path: Path) -> None:
    good = [
        {
            "source": "mine",
            "source_id": sid,
            "statement": f"Echo {sid}.",
            "test_mode": "stdio",
            "tests": [{"input": "x\n", "output": "x\n"}],
        }
        for sid in ("a", "b", "c")
    ]
    lines = [
        json.dumps(good[0]).encode(),
        json.dumps(good[1])[:40].encode(),  # line 2: cut short
        b"",  # line 3: blank, not a row
        b"[1, 2]",  # line 4: JSON, but not an object
        json.dumps(good[1]).encode(),
        b'{"source": "mi\xffne"}',  # line 6: not UTF-8
        json.dumps(good[2]).encode(),
    ]
    path = tmp_path / "mine.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    stats, problems, quarantine = run_ingest([f"jsonl:{path}"], tmp_path)
    assert sorted(problems) == ["a", "b", "c"]
    bad = {q["source_row_id"]: q for q in quarantine}
    assert sorted(bad) == [f"{path}:2", f"{path}:4", f"{path}:6"]
    assert bad[f"{path}:2"]["reason"].startswith(f"malformed JSON line 2 of {path}: not valid JSON")
    assert "a JSON list, not an object" in bad[f"{path}:4"]["reason"]
    assert "not UTF-8" in bad[f"{path}:6"]["reason"]
    assert bad[f"{path}:2"]["raw"] == json.dumps(good[1])[:40]
    assert (
        stats["malformed_lines"] == 3
        and stats["per_source"][f"jsonl:{path}"]["malformed_lines"] == 3
    )
    assert stats["quarantined"] == 3 and stats["problems"] == 3


def test_all_lines_malformed_quarantines_every_line(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_text("not json\n{also not\n")
    stats, problems, quarantine = run_ingest([f"jsonl:{path}"], tmp_path)
    assert not problems and stats["malformed_lines"] == 2
    assert [q["source_row_id"] for q in quarantine] == [f"{path}:1", f"{path}:2"]


def test_whole_source_failure_names_source_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question_id": "x", "question_content": "hi"}) + "\n")
    with pytest.raises(SourceError) as e:
        ingest([f"livecodebench:{path}"], tmp_path / "o.parquet", show_progress=False)
    assert "public_test_cases" in str(e.value) and "livecodebench" in str(e.value)
    assert not (tmp_path / "o.parquet").exists()
    with pytest.raises(SourceError, match="no files match"):
        ingest([f"taco:{tmp_path}/nothing-*.parquet"], tmp_path / "o.parquet", show_progress=False)
    with pytest.raises(ValueError, match="unknown source kind"):
        ingest(["nosuch:x"], tmp_path / "o.parquet", show_progress=False)


def test_ingest_is_cached_and_deterministic(
    code_contests_file: Path, taco_file: Path, tmp_path: Path
) -> None:
    specs = [f"code_contests:{code_contests_file}", f"taco:{taco_file}"]
    a, b = tmp_path / "a" / "problems.parquet", tmp_path / "b" / "problems.parquet"
    first = ingest(specs, a, show_progress=False)
    assert first["cached"] is False
    assert ingest(specs, a, show_progress=False)["cached"] is True
    ingest(list(reversed(specs)), b, show_progress=False)  # source order does not matter
    assert a.read_bytes() == b.read_bytes()
    assert output_paths(a)["quarantine"].read_bytes() == output_paths(b)["quarantine"].read_bytes()
    assert pq.read_schema(a).remove_metadata().equals(PROBLEM_SCHEMA)


def test_cli_ingest_flags(code_contests_file: Path, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from pipeline.problems.cli import register

    app = typer.Typer()
    register(app)
    out = tmp_path / "p.parquet"
    r = CliRunner().invoke(
        app,
        [
            "problems",
            "ingest",
            "-s",
            f"code_contests:{code_contests_file}",
            "-o",
            str(out),
            "--no-generated-tests",
            "--keep-samples",
            "--max-solutions-per-language",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "python2:5" in r.output  # skipped solutions are shown, per language
    p = {x.source_id: x for x in table_to_models(pq.read_table(out), Problem)}["1_A. Sum"]
    assert len(p.tests) == 3 and "Examples" in p.prompt_statement
    assert sorted(s.language for s in p.solutions) == [
        "cpp",
        "java",
        "python",
        "python",
    ]  # 1 per (lang, correct)
    r = CliRunner().invoke(
        app,
        [
            "problems",
            "ingest",
            "-s",
            f"code_contests:{code_contests_file}",
            "-o",
            str(out),
            "--no-generated-tests",
            "--keep-samples",
            "--max-solutions-per-language",
            "1",
        ],
    )
    assert "cached" in r.output
