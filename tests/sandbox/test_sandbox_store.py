"""Tests travel once: a problem's tests go to a slot's store once and are named by hash after.
The store is out of a candidate's reach: it cannot read expected outputs (its own problem's or
another's), nor change a stored test for the tests that follow. On each engine (Docker, process)."""

from __future__ import annotations

import textwrap
import uuid

import pytest
from engines_here import ENGINE_PARAMS, open_test_engine

from sandbox import JudgeRequest, TestCase

# Looks everywhere a candidate can read for a string (given reversed on stdin, so that its own
# input file does not hold it); prints the string if found anywhere, else "nothing".
HUNTER = textwrap.dedent(
    """
    import os, sys
    secret = sys.stdin.readline().strip()[::-1].encode()
    hits = []
    def scan(path):
        try:
            with open(path, 'rb') as f:
                if secret in f.read(64 << 20):
                    hits.append(path)
        except OSError:
            pass
    for top in ('/work', '/tmp', '/opt', '/proc/1'):
        for root, dirs, files in os.walk(top):
            if root.startswith('/proc/1/') and root.count('/') > 3:
                continue
            for name in files:
                scan(os.path.join(root, name))
    scan('/proc/1/environ'); scan('/proc/1/cmdline'); scan('/proc/1/mem')
    print(secret.decode() if hits else 'nothing')
    """
)


@pytest.fixture(scope="module", params=ENGINE_PARAMS)
def one(request):
    # inline_tests_max_bytes=0: every set goes through the store, however small (as large ones do)
    with open_test_engine(
        request.param, pool_size=1, cache=False, selftest=False, inline_tests_max_bytes=0
    ) as client:
        yield client


def _container(client):
    [container] = [c for c in client._live.values() if c is not None]
    return container


def test_tests_cross_once_per_container_and_are_named_by_hash(one):
    tests = [TestCase(input=f"{i} {i}\n", output=f"{2 * i}\n") for i in range(30)]
    reqs = [
        JudgeRequest(
            language="python",
            source=f"a, b = map(int, input().split())\nprint(a + b)  # {k}\n",
            tests=tests,
        )
        for k in range(3)
    ]
    assert len({r.tests_ref for r in reqs}) == 1
    assert (
        "tests" not in reqs[0].wire(by_ref=True) and reqs[0].wire()["tests"][1]["output"] == "2\n"
    )
    results = one.judge(reqs)
    assert [r.verdict for r in results] == ["AC"] * 3 and results[0].passed == 30
    container = _container(one)
    assert reqs[0].tests_ref in container.stored
    # The runner names the set by its hash alone; an unknown hash is asked for, not guessed.
    unknown = "0" * 64
    resp = container.request({**reqs[0].wire(by_ref=True), "tests_ref": unknown}, timeout_s=60)
    assert resp == {"ok": False, "missing_tests": unknown, "runner_s": resp["runner_s"]}


def test_a_set_the_runner_dropped_is_sent_again(one):
    tests = [TestCase(input="4 5\n", output="9\n")]
    req = JudgeRequest(
        language="python", source="print(sum(map(int, input().split())))\n", tests=tests
    )
    [first] = one.judge([req])
    container = _container(one)
    # Make the client believe the container holds a set it never received.
    fresh = JudgeRequest(
        language="python", source=req.source, tests=[TestCase(input="1 1\n", output="2\n")]
    )
    container.stored.add(fresh.tests_ref)
    [again] = one.judge([fresh])
    assert first.verdict == again.verdict == "AC" and again.passed == 1


def test_a_candidate_cannot_read_its_expected_output(one):
    secret = f"answer-{uuid.uuid4().hex}"
    # The input carries the secret to search for; the expected output IS the secret.
    req = JudgeRequest(
        language="python",
        source=HUNTER,
        tests=[TestCase(input=secret[::-1] + "\n", output=secret + "\n")],
        time_limit_s=10,
    )
    [r] = one.judge([req])
    assert r.verdict == "WA", r.tests[0].stderr_tail  # WA = it printed "nothing"


def test_a_candidate_cannot_read_another_problems_tests(one):
    other = f"other-{uuid.uuid4().hex}"
    stored = JudgeRequest(
        language="python",
        source="print(input())\n",
        tests=[TestCase(input=other + "-in\n", output=other + "\n")],
    )
    [ok] = one.judge([stored])
    assert ok.verdict == "WA"  # the expected output differs from the echoed input
    # Same container, a different problem: the other problem's tests are stored, out of reach.
    req = JudgeRequest(
        language="python",
        source=HUNTER,
        tests=[TestCase(input=other[::-1] + "\n", output="nothing\n")],
        time_limit_s=10,
    )
    [r] = one.judge([req])
    assert r.verdict == "AC", r.tests[0].stderr_tail  # AC = it printed "nothing"


def test_a_candidate_cannot_change_the_tests_that_follow(one):
    # Test 1's run overwrites every file it can write (but its own program: that would only hurt
    # itself) and tries to leave a file behind; tests 2 and 3 must still be judged against the
    # stored input and answer.
    vandal = textwrap.dedent(
        """
        import os, sys
        data = sys.stdin.read()
        for top in ('/work', '/tmp'):
            for root, dirs, files in os.walk(top):
                for name in files:
                    if root.startswith('/work/cache'):
                        continue
                    try:
                        with open(os.path.join(root, name), 'w') as f:
                            f.write('0 0\\n')
                    except OSError:
                        pass
        try:
            open('/work/io/stdin.next', 'w').write('0 0\\n')
        except OSError:
            pass
        a, b = map(int, data.split())
        print(a + b)
        """
    )
    tests = [TestCase(input=f"{i} {i + 1}\n", output=f"{2 * i + 1}\n") for i in range(1, 4)]
    [r] = one.judge([JudgeRequest(language="python", source=vandal, tests=tests)])
    assert [t.verdict for t in r.tests] == ["AC", "AC", "AC"], [t.stderr_tail for t in r.tests]


def test_megabyte_tests_compare_in_the_runner(one):
    n = 150_000  # ~1 MB of input and of output per test
    nums = " ".join(str(i * 7) for i in range(n))
    tests = [
        TestCase(input=nums + "\n", output=nums + "\n"),
        TestCase(input=nums + "\n", output=nums.replace(" ", "\n") + "\n"),
    ]
    echo = "import sys\nsys.stdout.write(sys.stdin.read())\n"
    wrong = "import sys\nd = sys.stdin.read()\nsys.stdout.write(d[:-2] + '9\\n')\n"
    ok, bad = one.judge(
        [
            JudgeRequest(language="python", source=echo, tests=tests),
            JudgeRequest(language="python", source=wrong, tests=tests),
        ]
    )
    assert len(tests[0].input) > 1_000_000
    assert [t.verdict for t in ok.tests] == ["AC", "AC"]  # exact, then whitespace-insensitive
    assert [t.verdict for t in bad.tests] == ["WA", "WA"]


def test_many_stored_sets_do_not_exhaust_the_runner(one):
    """Hundreds of small test sets in one container: more descriptors than select() takes."""
    reqs = [
        JudgeRequest(
            language="python",
            source="print(sum(map(int, input().split())))\n",
            tests=[TestCase(input=f"{i} {j}\n", output=f"{i + j}\n") for j in range(3)],
        )
        for i in range(200)
    ]
    results = one.judge(reqs)
    assert [r.verdict for r in results] == ["AC"] * 200
