"""Ingested problems judged in the real Docker sandbox: the tests we build mean what they say.

Reference solutions from the sources must be AC; wrong programs must not be.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.problems.stage import ingest
from schemas.problem import Problem
from schemas.tables import table_to_models

pytestmark = pytest.mark.docker


TWO_SUM = """class Solution:
    def twoSum(self, nums, target):
        for i in range(len(nums)):
            for j in range(i):
                if nums[i] + nums[j] == target:
                    return [j, i]
"""


def _problems(specs: list[str], tmp_path: Path) -> dict[str, Problem]:
    out = tmp_path / "problems.parquet"
    ingest(specs, out, show_progress=False)
    return {p.source_id: p for p in table_to_models(pq.read_table(out), Problem)}


def _request(p: Problem, language: str, source: str):
    from sandbox.models import CompareSpec, JudgeRequest, TestCase

    return JudgeRequest(
        language=language,
        source=source,
        mode=p.test_mode,
        tests=[TestCase(input=t.input, output=t.output, code=t.code) for t in p.tests],
        time_limit_s=p.time_limit_s,
        memory_limit_mb=p.memory_limit_mb,
        compare=CompareSpec(mode=p.compare_mode, checker=p.checker),
    )


def test_humaneval_canonical_solutions_pass_and_wrong_bodies_fail(
    sandbox_client, tmp_path: Path
) -> None:
    problems = sorted(_problems(["humaneval"], tmp_path).values(), key=lambda p: p.source_id)
    good = [_request(p, "python", p.solutions[0].code) for p in problems]
    bad = [_request(p, "python", p.starter_code + "    return None\n") for p in problems[:20]]
    results = sandbox_client.judge(good + bad, use_cache=False)
    failing = [
        p.source_id
        for p, r in zip(problems, results[: len(good)], strict=True)
        if r.verdict != "AC"
    ]
    assert failing == []
    assert all(r.verdict != "AC" for r in results[len(good) :])


def test_source_reference_solutions_in_the_sandbox(
    sandbox_client,
    code_contests_file: Path,
    taco_file: Path,
    apps_file: Path,
    lcb_file: Path,
    codeforces_file: Path,
    tmp_path: Path,
) -> None:
    cc = _problems([f"code_contests:{code_contests_file}"], tmp_path / "cc")["1_A. Sum"]
    taco = _problems([f"taco:{taco_file}"], tmp_path / "taco")
    apps = _problems([f"apps:{apps_file}"], tmp_path / "apps")["train/1"]
    lcb = _problems([f"livecodebench:{lcb_file}"], tmp_path / "lcb")
    cf = _problems([f"codeforces:{codeforces_file}"], tmp_path / "cf")
    min_py = "input()\nprint(min(map(int, input().split())))\n"
    cases = [  # (problem, language, source, should pass)
        *[(cc, s.language, s.code, s.correct) for s in cc.solutions],
        (taco["train/0"], "python", taco["train/0"].solutions[0].code, True),
        (taco["train/1"], "python", "def list_sum(xs):\n    return sum(xs)\n", True),
        (taco["train/1"], "python", "def list_sum(xs):\n    return 0\n", False),
        (apps, "python", TWO_SUM, True),
        (apps, "python", TWO_SUM.replace("[j, i]", "[i, j]"), False),
        (lcb["abc999_a"], "python", "a, b = map(int, input().split())\nprint(a + b)\n", True),
        (lcb["abc999_a"], "python", "print(3)\n", False),
        (
            lcb["2999"],
            "python",
            "class Solution:\n    def maxOf(self, nums):\n        return max(nums)\n",
            True,
        ),
        (
            lcb["2999"],
            "python",
            "class Solution:\n    def maxOf(self, nums):\n        return nums[0]\n",
            False,
        ),
        (cf["2000/A"], "python", min_py, True),
        (cf["2000/A"], "python", "input()\nprint(max(map(int, input().split())))\n", False),
    ]
    results = sandbox_client.judge(
        [_request(p, lang, src) for p, lang, src, _ in cases], use_cache=False
    )
    got = [
        (p.source_id, lang, r.verdict) for (p, lang, _, _), r in zip(cases, results, strict=True)
    ]
    assert [r.verdict == "AC" for r in results] == [ok for *_, ok in cases], got
    assert sorted({s.language for s in cc.solutions}) == ["cpp", "java", "python"]


def test_codeforces_checker_through_the_sandbox(
    sandbox_client, codeforces_checker_file: Path, tmp_path: Path
) -> None:
    """The source checker prints a score; wrapped, score 0 is a reject (WA), never a pass."""
    p = _problems([f"codeforces:{codeforces_checker_file}"], tmp_path)["2001/A"]
    assert p.compare_mode == "checker"
    sources = {
        "print the minimum": ("input()\nprint(min(map(int, input().split())))\n", "AC"),
        "print the maximum": ("input()\nprint(max(map(int, input().split())))\n", "WA"),
    }
    results = sandbox_client.judge(
        [_request(p, "python", src) for src, _ in sources.values()], use_cache=False
    )
    assert [r.verdict for r in results] == [v for _, v in sources.values()]
