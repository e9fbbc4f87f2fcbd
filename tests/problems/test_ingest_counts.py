"""Ingest says what it did with every line: the counts add up per line, a solution in a
language we cannot run is quarantined alone, the dry run names a broken line, and no
library draws its own progress bar into the output.

The file: a valid problem, a broken JSON line, a problem with a Python and a Rust solution,
and the first problem again. It once read `rows 2 | problems 1 | quarantined 2`: the broken
line was not a row, and the Rust solution quarantined its whole problem with the valid
Python solution beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.common.stage import CheckContext
from pipeline.problems.checks import check_sources
from pipeline.problems.stage import IngestCall, ingest

REPO = Path(__file__).resolve().parents[2]
SUM = {
    "source": "my-set",
    "source_id": "sum-two",
    "statement": "Read two integers a and b and print a + b.",
    "test_mode": "stdio",
    "tests": [{"input": "1 2\n", "output": "3\n"}],
    "solutions": [
        {"language": "python", "code": "print(sum(map(int, input().split())))", "correct": True}
    ],
}
DOUBLE = {
    "source": "my-set",
    "source_id": "double",
    "statement": "Write a function double(x) that returns 2 * x.",
    "test_mode": "function",
    "entry_point": "double",
    "tests": [{"code": "assert double(2) == 4"}],
    "solutions": [
        {"language": "python", "code": "def double(x):\n    return 2 * x\n", "correct": True},
        {"language": "rust", "code": "fn double(x: i64) -> i64 { 2 * x }", "correct": True},
    ],
}


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "four.jsonl"
    lines = [
        json.dumps(SUM),
        '{"source": "my-set", "source_id": "broken", "statement": "oops',
        json.dumps(DOUBLE),
        json.dumps(SUM),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_line_is_counted_once_and_a_bad_solution_costs_itself(tmp_path: Path) -> None:
    path = _source(tmp_path)
    stats = ingest([f"jsonl:{path}"], tmp_path / "out" / "problems.parquet", show_progress=False)
    s = stats["per_source"][f"jsonl:{path}"]
    assert (s["rows"], s["problems"], s["rows_quarantined"], s["duplicates"]) == (4, 2, 1, 1)
    assert s["rows"] == s["problems"] + s["rows_quarantined"] + s["duplicates"]
    assert s["solutions_quarantined"] == 1 and s["solutions"] == {"python": 2}
    assert (stats["rows"], stats["problems"], stats["quarantined"]) == (4, 2, 3)

    problems = {
        p["source_id"]: p for p in pq.read_table(tmp_path / "out" / "problems.parquet").to_pylist()
    }
    assert sorted(problems) == ["double", "sum-two"]  # kept, with its Python solution
    assert [x["language"] for x in problems["double"]["solutions"]] == ["python"]
    quarantine = pq.read_table(tmp_path / "out" / "problems.quarantine.parquet").to_pylist()
    by_field = {(q["source_row_id"], q["field"]): q for q in quarantine}
    assert set(by_field) == {
        (f"{path}:2", None),  # the broken line, by its line number
        ("double", "solutions.1.language"),  # the Rust solution alone
        ("sum-two", "problem_id"),  # the repeated problem
    }
    rust = by_field[("double", "solutions.1.language")]
    assert rust["reason"].startswith("unsupported language 'rust' (supported: python, cpp, java)")
    assert "fn double" in rust["raw"]


def test_the_command_prints_counts_that_add_up_and_no_library_bar(tmp_path: Path) -> None:
    """In its own process, as a user runs it: `datasets` drew `Generating train split: 2
    examples [00:00, 111.22 examples/s]` into the output."""
    path = _source(tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "aletheia", "problems", "ingest", "-s", f"jsonl:{path}",
         "-o", str(tmp_path / "out" / "problems.parquet")],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "160"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    said = r.stdout + r.stderr
    assert "Generating" not in said and "examples/s" not in said
    table = [line for line in said.splitlines() if "four.jsonl" in line and "│" in line]
    cells = [c.strip() for c in table[0].split("│") if c.strip()]
    # source | rows | problems | quarantined | duplicates | solutions quarantined
    assert cells[1:] == ["4", "2", "1", "1", "1"], table
    assert f"{path}:2: malformed JSON line 2" in said
    assert "double solutions.1.language: unsupported language 'rust'" in said


def test_the_dry_run_names_the_broken_line_and_the_solution(tmp_path: Path) -> None:
    path = _source(tmp_path)
    findings = check_sources(IngestCall(sources=[f"jsonl:{path}"]), CheckContext())
    said = {f.message: f.fatal for f in findings}
    line = f"jsonl:{path}: line 2 of {path} is not valid JSON: Invalid control character"
    assert any(m.startswith(line) and m.endswith("; quarantined at ingest") for m in said), said
    solution = (
        f"jsonl:{path}: 1 solution(s) will be quarantined alone, e.g. row 'double', "
        "solutions.1.language: unsupported language 'rust'"
    )
    assert any(m.startswith(solution) for m in said), said
    assert not any(said.values())  # notes: the rest of the file ingests

    broken = tmp_path / "broken.jsonl"
    broken.write_text("{oops\n[1, 2]\n")  # no line is a JSON object: nothing would ingest
    [finding] = check_sources(IngestCall(sources=[f"jsonl:{broken}"]), CheckContext())
    assert finding.fatal and f"line 1 of {broken} is not valid JSON" in finding.message
    assert "(+1 more such line)" in finding.message
