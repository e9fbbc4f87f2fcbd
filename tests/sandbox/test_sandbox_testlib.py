"""Checkers written to testlib's conventions: compiled once per slot, run as
`checker INPUT OUTPUT ANSWER`, verdict from the exit code (0 ok, 1 wa, 2 pe, 3 fail, 7 points).
On each engine (Docker, process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from engines_here import ENGINE_PARAMS, open_test_engine

from sandbox import CompareSpec, JudgeRequest, TestCase, testlib
from tests.conftest import REPO
from tests.sandbox.checker_programs import (
    BROKEN_CHECKER,
    NEEDS_TESTLIB,
    POINTS_CHECKER,
    SPLIT_CHECKER,
    SPLIT_EVEN,
    SPLIT_GARBAGE,
    SPLIT_HALF,
    SPLIT_OFF_BY_ONE,
    SPLIT_TESTLIB_CHECKER,
    SPLIT_TESTS,
)

TESTS = [TestCase(input=i, output=o) for i, o in SPLIT_TESTS]


def _req(source: str, checker: str, tests=TESTS, language: str = "python") -> JudgeRequest:
    return JudgeRequest(
        language=language,
        source=source,
        tests=tests,
        compare=CompareSpec(mode="testlib", checker=checker),
    )


@pytest.fixture(scope="module", params=ENGINE_PARAMS)
def one(request):
    with open_test_engine(request.param, pool_size=1, cache=False, selftest=False) as client:
        yield client


def test_testlib_checker_verdicts(one):
    half, off, garbage = one.judge(
        [
            _req(SPLIT_HALF, SPLIT_CHECKER),
            _req(SPLIT_OFF_BY_ONE, SPLIT_CHECKER),
            _req(SPLIT_GARBAGE, SPLIT_CHECKER),
        ]
    )
    # 10 -> "5 5" and 7 -> "3 4": valid, though unlike the answer file's "1 9" for the first.
    assert half.verdict == "AC" and half.passed == 2, half
    assert off.verdict == "WA" and [t.verdict for t in off.tests] == ["WA", "WA"]
    assert garbage.verdict == "WA"  # presentation error (exit 2) is a reject
    # The same answer under a token compare would fail: the checker is what accepts it.
    [tokens] = one.judge([JudgeRequest(language="python", source=SPLIT_HALF, tests=TESTS)])
    assert [t.verdict for t in tokens.tests] == ["WA", "AC"]


def test_checker_failure_and_points(one):
    bad_answer = [TestCase(input="10\n", output="2 2\n")]  # the answer file itself is wrong: exit 3
    [fail] = one.judge([_req(SPLIT_HALF, SPLIT_CHECKER, tests=bad_answer)])
    assert fail.verdict == "SE" and fail.checker_error is None  # the checker failed on this test
    full, partial = one.judge(
        [
            _req(SPLIT_EVEN, POINTS_CHECKER, tests=[TestCase(input="10\n", output="5 5\n")]),
            _req(SPLIT_EVEN, POINTS_CHECKER, tests=[TestCase(input="7\n", output="3 4\n")]),
        ]
    )
    assert full.verdict == "AC"  # points 1
    assert partial.verdict == "WA"  # points 0.5: not full credit


def test_checker_compiled_once_per_container_and_not_tampered_with(one):
    # A candidate that replaces every file it can write in the build cache (the compiled checker
    # included) with an always-accepting script: the checker is verified and rebuilt before use.
    vandal = textwrap.dedent(
        """
        import os, sys
        done = 0
        for root, dirs, files in os.walk('/work/cache'):
            for name in files:
                p = os.path.join(root, name)
                if name == 'solution':
                    try:
                        os.chmod(p, 0o700)
                        with open(p, 'w') as f:
                            f.write('#!/bin/sh\\nexit 0\\n')
                        done += 1
                    except OSError:
                        pass
        sys.stderr.write(f'replaced {done}')
        print(0, 0)
        """
    )
    results = one.judge(
        [_req(vandal, SPLIT_CHECKER), _req(SPLIT_HALF + "# again\n", SPLIT_CHECKER)]
    )
    replaced = int(results[0].tests[0].stderr_tail.removeprefix("replaced "))
    assert replaced >= 1  # the compiled checker (and any other cached one) was replaced
    assert [t.verdict for t in results[0].tests] == ["WA", "WA"]
    assert results[1].verdict == "AC"


def test_unusable_checker_is_reported_not_replaced(one):
    missing, broken = one.judge([_req(SPLIT_HALF, NEEDS_TESTLIB), _req(SPLIT_HALF, BROKEN_CHECKER)])
    assert broken.verdict == "SE" and "undeclared_name" in broken.checker_error
    assert broken.tests == []  # never judged by another comparison
    if testlib.find()[0] is None:  # neither engine has testlib here: said, not guessed
        assert (
            missing.verdict == "SE" and "testlib.h is not in this sandbox" in missing.checker_error
        )
        assert "python -m sandbox testlib fetch" in missing.checker_error
        assert missing.tests == []
    else:  # it compiles; reading nothing, it finds the output unread: testlib's PE, a reject
        assert missing.verdict == "WA" and missing.checker_error is None, missing


@pytest.mark.docker
@pytest.mark.process
def test_a_testlib_checker_gets_the_same_verdicts_on_docker_and_process(
    sandbox_client, process_engine
):
    """Both engines take testlib.h from one place (sandbox/testlib.py), so a problem whose
    checker includes it is judged alike: with the file, real verdicts on both; without it,
    the same checker_error on both (and its problem quarantined by the judge stage)."""
    bad_answer = [TestCase(input="10\n", output="2 2\n")]
    reqs = [
        _req(SPLIT_HALF, SPLIT_TESTLIB_CHECKER),
        _req(SPLIT_OFF_BY_ONE, SPLIT_TESTLIB_CHECKER),
        _req(SPLIT_GARBAGE, SPLIT_TESTLIB_CHECKER),
        _req(SPLIT_HALF, SPLIT_TESTLIB_CHECKER, tests=bad_answer),
        _req(SPLIT_HALF, NEEDS_TESTLIB),
    ]

    def verdicts(engine) -> list[tuple]:
        return [
            (r.verdict, r.checker_error, [t.verdict for t in r.tests])
            for r in engine.judge(reqs, use_cache=False)
        ]

    docker, process = verdicts(sandbox_client), verdicts(process_engine)
    assert docker == process
    if testlib.find()[0] is None:
        assert {(v, bool(e)) for v, e, _ in docker} == {("SE", True)}
    else:
        assert [v for v, _, _ in docker] == ["AC", "WA", "WA", "SE", "WA"], docker
        assert all(e is None for _, e, _ in docker)


@pytest.mark.docker
def test_cli_run_with_a_testlib_checker(tmp_path):
    (tmp_path / "a.py").write_text(SPLIT_HALF)
    (tmp_path / "wrong.py").write_text(SPLIT_OFF_BY_ONE)
    (tmp_path / "chk.cpp").write_text(SPLIT_CHECKER)
    (tmp_path / "t.jsonl").write_text(
        "".join(json.dumps({"input": i, "output": o}) + "\n" for i, o in SPLIT_TESTS)
    )
    verdicts = []
    for src in ("a.py", "wrong.py"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "sandbox",
                "run",
                "--language",
                "python",
                "--source",
                str(tmp_path / src),
                "--tests",
                str(tmp_path / "t.jsonl"),
                "--compare",
                "testlib",
                "--checker",
                str(tmp_path / "chk.cpp"),
                "--no-cache",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        verdicts.append(json.loads(proc.stdout)["verdict"])
    assert verdicts == ["AC", "WA"]
