"""The judge stage on CodeContests+-style problems with testlib-convention checkers: AC/WA by the
checker, and a problem whose checker is unusable is quarantined, never judged by token compare."""

from __future__ import annotations

import json

import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_candidates, quarantine_path
from pipeline.sampling.references import reference_candidates
from schemas.candidate import CANDIDATE_SCHEMA
from schemas.common import QUARANTINE_SCHEMA
from schemas.ids import problem_id_for
from schemas.problem import PROBLEM_SCHEMA, Problem, Solution, TestCase
from schemas.tables import models_to_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA
from tests.sandbox.checker_programs import (
    BROKEN_CHECKER,
    NEEDS_TESTLIB,
    SPLIT_CHECKER,
    SPLIT_HALF,
    SPLIT_OFF_BY_ONE,
    SPLIT_TESTS,
)

pytestmark = pytest.mark.docker


def _split_problem(source_id: str, checker: str) -> Problem:
    return Problem(
        problem_id=problem_id_for("ccplus-test", source_id),
        source="ccplus-test",
        source_id=source_id,
        title="Split",
        statement="Print x y >= 0 with x + y = n.",
        test_mode="stdio",
        tests=[TestCase(input=i, output=o) for i, o in SPLIT_TESTS],
        compare_mode="testlib",
        checker=checker,
        solutions=[
            Solution(language="python", code=SPLIT_HALF, correct=True),
            Solution(language="python", code=SPLIT_OFF_BY_ONE, correct=False),
        ],
    )


def test_checker_problems_through_the_judge_stage(tmp_path, sandbox_client):
    good = _split_problem("split", SPLIT_CHECKER)
    no_testlib = _split_problem("split-testlib", NEEDS_TESTLIB)
    broken = _split_problem("split-broken", BROKEN_CHECKER)
    problems = [good, no_testlib, broken]
    cands = reference_candidates(problems)
    cpath, ppath, out = tmp_path / "c.parquet", tmp_path / "p.parquet", tmp_path / "judged.parquet"
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), cpath, CANDIDATE_SCHEMA)
    write_parquet(models_to_table(problems, PROBLEM_SCHEMA), ppath, PROBLEM_SCHEMA)

    stats = judge_candidates(cpath, ppath, out, JudgeConfig(progress=False), client=sandbox_client)

    rows = read_parquet(out, JUDGED_CANDIDATE_SCHEMA).to_pylist()
    assert {r["problem_id"] for r in rows} == {good.problem_id}
    verdicts = {r["reference_correct"]: r["verdict"] for r in rows}
    assert verdicts == {True: "AC", False: "WA"}
    assert stats["not_judged"] == {"checker_unusable": 4} and stats["se"] == 0
    quarantined = read_parquet(quarantine_path(out), QUARANTINE_SCHEMA).to_pylist()
    by_id = {json.loads(q["raw"])["problem_id"]: q for q in quarantined}
    assert set(by_id) == {no_testlib.problem_id, broken.problem_id}
    assert all(q["stage"] == "judge" and q["field"] == "checker" for q in quarantined)
    assert "testlib.h" in by_id[no_testlib.problem_id]["reason"]
    assert "does not compile" in by_id[broken.problem_id]["reason"]
    assert set(stats["problems_quarantined"]) == set(by_id)
