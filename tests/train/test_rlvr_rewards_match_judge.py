"""RLVR rewards judge a program exactly as the judge stage does (issue 21), in the real sandbox.

The problems go the way a build sends them: problems.parquet -> the split stage's
train_questions.parquet -> RLVR's dataset rows -> the reward functions, with the columns TRL
passes them. The same programs go through the judge stage. A float-tolerance problem and a
checker problem are where the two used to disagree (the rewards compared exact tokens), and a
problem asking for more memory than the sandbox allows used to stop training.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.common.hub_folder import read_config
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_candidates
from pipeline.splits.config import SplitConfig
from pipeline.splits.stage import split_problems
from pipeline.train.code_rewards import SandboxRewardScorer
from pipeline.train.config import RlvrSettings
from pipeline.train.rlvr import question_rows
from schemas.candidate import CANDIDATE_SCHEMA, Candidate
from schemas.ids import candidate_id_for, problem_id_for
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import models_to_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA

pytestmark = pytest.mark.docker

# Any proper divisor of n is a right answer; the tests' expected output is only one of them.
DIVISOR_CHECKER = """\
import sys
n = int(open(sys.argv[1]).read().split()[0])
got = open(sys.argv[3]).read().split()
ok = len(got) == 1 and got[0].lstrip("-").isdigit() and 1 < int(got[0]) < n and n % int(got[0]) == 0
sys.exit(0 if ok else 1)
"""


def _problem(source_id: str, statement: str, tests: list[tuple[str, str]], **kw) -> Problem:
    return Problem(
        problem_id=problem_id_for("fixture", source_id),
        source="fixture",
        source_id=source_id,
        title=source_id,
        statement=statement,
        test_mode="stdio",
        tests=[{"input": i, "output": o} for i, o in tests],
        **kw,
    )


FLOAT = _problem(
    "third",
    "Read an integer n and print n divided by three; answers within 0.001 are accepted.",
    [("1\n", "0.333333333\n"), ("2\n", "0.666666667\n"), ("30\n", "10.000000000\n")],
    compare_mode="float",
    float_abs_tol=1e-3,
)
CHECKER = _problem(
    "divisor",
    "Read a composite integer n and print any divisor d of n with 1 < d < n.",
    [("12\n", "2\n"), ("15\n", "3\n"), ("49\n", "7\n")],
    compare_mode="checker",
    checker=DIVISOR_CHECKER,
)
BIG_MEMORY = _problem(
    "double",
    "Read an integer n and print 2 n. (The setter allows 4 GB of memory.)",
    [("4\n", "8\n"), ("0\n", "0\n")],
    memory_limit_mb=4096,
)

# (problem, program, the verdict worked out by hand for the problem's own comparison)
PROGRAMS = [
    (
        FLOAT,
        "print(round(int(input()) / 3, 4))\n",
        "AC",
    ),  # 0.3333: within 0.001, not the same tokens
    (FLOAT, "print(f'{int(input()) / 3:.9f}')\n", "AC"),  # the expected tokens exactly
    (FLOAT, "print(int(input()) / 2)\n", "WA"),
    (CHECKER, "n = int(input())\nprint(max(d for d in range(2, n) if n % d == 0))\n", "AC"),
    (CHECKER, "n = int(input())\nprint(min(d for d in range(2, n) if n % d == 0))\n", "AC"),
    (CHECKER, "print(1)\n", "WA"),
]


def _candidate(problem: Problem, code: str) -> Candidate:
    return Candidate(
        candidate_id=candidate_id_for("python", code),
        problem_id=problem.problem_id,
        language="python",
        code=code,
        origin="policy",
        generator="rlvr-check",
        tier="weak",
    )


def _judge_stage(problems: list[Problem], programs, tmp: Path, client) -> list[dict]:
    cands = [_candidate(p, code) for p, code, *_ in programs]
    cpath, ppath, out = tmp / "candidates.parquet", tmp / "problems.parquet", tmp / "judged.parquet"
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), cpath, CANDIDATE_SCHEMA)
    write_parquet(models_to_table(problems, PROBLEM_SCHEMA), ppath, PROBLEM_SCHEMA)
    judge_candidates(cpath, ppath, out, JudgeConfig(progress=False), client=client)
    by = {
        (r["problem_id"], r["code"]): r
        for r in read_parquet(out, JUDGED_CANDIDATE_SCHEMA).to_pylist()
    }
    return [by[(p.problem_id, code)] for p, code, *_ in programs]


def _reward_columns(problems: list[Problem], programs, tmp: Path) -> dict[str, list]:
    """The columns TRL hands the reward functions: every dataset column but the prompt, one
    value per completion, from the Train-Questions file the split stage writes."""
    splits = tmp / "splits"
    split_problems(
        tmp / "problems.parquet", splits, SplitConfig(heldout_fraction=0.0), show_progress=False
    )
    dataset = question_rows(read_config(splits, "train_questions"), "python")
    rows = {r["problem_id"]: r for r in dataset}
    assert set(rows) == {p.problem_id for p in problems}
    keys = [k for k in dataset.column_names if k != "prompt"]
    return {k: [rows[p.problem_id][k] for p, *_ in programs] for k in keys}


def _rewards(programs, columns, client) -> tuple[list, list]:
    scorer = SandboxRewardScorer(client, RlvrSettings())
    pass_fraction, all_pass = scorer.reward_funcs(["pass_fraction", "all_pass"])
    completions = [f"Here is my program:\n```python\n{code}```" for _, code, *_ in programs]
    return pass_fraction(completions, **columns), all_pass(completions, **columns)


def test_rewards_give_the_judge_stages_verdicts_on_float_and_checker_problems(
    tmp_path: Path, sandbox_client
) -> None:
    problems = [FLOAT, CHECKER]
    judged = _judge_stage(problems, PROGRAMS, tmp_path, sandbox_client)
    # The judge stage applies each problem's comparison (hand-worked verdicts above).
    assert [r["verdict"] for r in judged] == [v for *_, v in PROGRAMS]
    fraction, all_pass = _rewards(
        PROGRAMS, _reward_columns(problems, PROGRAMS, tmp_path), sandbox_client
    )
    assert all_pass == [float(r["verdict"] == "AC") for r in judged]
    assert fraction == [r["passed"] / r["total"] for r in judged]


def test_a_problem_over_the_sandbox_memory_ceiling_is_rewarded_not_fatal(
    tmp_path: Path, sandbox_client
) -> None:
    """Both sides judge it at the sandbox's ceiling (the judged row records the limit used)."""
    programs = [(BIG_MEMORY, "print(2 * int(input()))\n", "AC"), (BIG_MEMORY, "print(8)\n", "WA")]
    judged = _judge_stage([BIG_MEMORY], programs, tmp_path, sandbox_client)
    assert [r["verdict"] for r in judged] == ["AC", "WA"]
    assert {r["memory_limit_mb"] for r in judged} == {1024}
    fraction, all_pass = _rewards(
        programs, _reward_columns([BIG_MEMORY], programs, tmp_path), sandbox_client
    )
    assert all_pass == [1.0, 0.0]
    assert fraction == [1.0, 0.5]
