"""Checker hand-over: CodeContests+ / Codeforces rows carrying a testlib checker become problems
with compare mode `testlib`, and such a problem judges AC/WA by its checker, from ingest to verdict."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_rows
from pipeline.problems.checkers import compare_fields
from pipeline.sampling.references import reference_candidates
from tests.problems.conftest import CODE_CONTESTS_SCHEMA, _cc_row
from tests.problems.test_adapters import reasons, run_ingest
from tests.sandbox.checker_programs import SPLIT_CHECKER, SPLIT_HALF, SPLIT_OFF_BY_ONE


def test_compare_fields_prefers_testlib_and_treats_blank_as_absent():
    assert compare_fields("int main(){}", "print(1)") == {
        "compare_mode": "testlib",
        "checker": "int main(){}",
    }
    py = compare_fields("  ", "import sys\nsys.exit(0)\n")
    assert py["compare_mode"] == "checker" and "sys.exit(0)" in py["checker"]
    assert compare_fields(None, None) == {"compare_mode": "tokens", "checker": None}


def _ccplus_file(tmp_path: Path) -> Path:
    schema = CODE_CONTESTS_SCHEMA.append(pa.field("checker", pa.string()))
    split = {"input": ["10\n"], "output": ["1 9\n"]}
    rows = [
        _cc_row(
            "9_A. Split",
            public_tests=split,
            private_tests={"input": ["7\n"], "output": ["3 4\n"]},
            generated_tests={"input": [], "output": []},
            checker=SPLIT_CHECKER,
            solutions={"language": [3], "solution": [SPLIT_HALF]},
            incorrect_solutions={"language": [3], "solution": [SPLIT_OFF_BY_ONE]},
        ),
        _cc_row("9_B. Plain", checker=""),
    ]
    path = tmp_path / "ccplus" / "train-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def test_code_contests_plus_checker_is_handed_over(tmp_path):
    _stats, problems, quarantine = run_ingest([f"code_contests:{_ccplus_file(tmp_path)}"], tmp_path)
    assert not quarantine
    assert (
        problems["9_A. Split"].compare_mode == "testlib"
        and problems["9_A. Split"].checker == SPLIT_CHECKER
    )
    assert (
        problems["9_B. Plain"].compare_mode == "tokens" and problems["9_B. Plain"].checker is None
    )


def test_a_non_text_checker_is_quarantined_naming_the_field(tmp_path):
    schema = CODE_CONTESTS_SCHEMA.append(pa.field("checker", pa.int64()))
    path = tmp_path / "cc" / "train-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist([_cc_row("9_C. Odd", checker=7)], schema=schema), path)
    _stats, _problems, quarantine = run_ingest([f"code_contests:{path}"], tmp_path)
    assert "checker" in reasons(quarantine)["9_C. Odd"]


@pytest.mark.docker
def test_ingested_checker_problem_judges_ac_and_wa(tmp_path, sandbox_client):
    _stats, problems, _ = run_ingest([f"code_contests:{_ccplus_file(tmp_path)}"], tmp_path)
    problem = problems["9_A. Split"]
    refs = reference_candidates([problem], languages=["python"])
    rows = judge_rows(
        refs, {problem.problem_id: problem}, sandbox_client, JudgeConfig(progress=False)
    )
    assert {r["reference_correct"]: r["verdict"] for r in rows} == {True: "AC", False: "WA"}
