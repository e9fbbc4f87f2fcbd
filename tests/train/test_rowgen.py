"""The hand-written dataset rows (tests/train/rowgen.py) tell the truth about their programs:
judged in the real sandbox, each program passes exactly the fraction of its problem's tests
that the rows claim, and only the correct one is AC."""

from __future__ import annotations

import pytest

from tests.train.rowgen import PROBLEMS

pytestmark = pytest.mark.docker


def test_fixture_pass_rates_are_what_the_programs_really_pass(sandbox_client) -> None:
    from sandbox import JudgeRequest, TestCase

    programs = [
        (pid, code, rate, tests)
        for pid, _statement, good, wrongs, tests in PROBLEMS
        for code, rate in [(good, 1.0), *wrongs]
    ]
    requests = [
        JudgeRequest(
            language="python", source=code, tests=[TestCase(input=i, output=o) for i, o in tests]
        )
        for _pid, code, _rate, tests in programs
    ]
    results = sandbox_client.judge(requests, use_cache=False)
    got = [
        (pid, code, r.pass_rate, r.verdict == "AC")
        for (pid, code, _, _), r in zip(programs, results)
    ]
    want = [(pid, code, rate, rate == 1.0) for pid, code, rate, _ in programs]
    assert got == want
