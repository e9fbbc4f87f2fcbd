"""Known-verdict programs: every verdict in every language, on each engine (the real Docker
sandbox, then the process engine)."""

from __future__ import annotations

import uuid

import pytest
from engines_here import skip_unless_language
from sandbox_programs import ADD_TESTS, CASES, PROGRAMS

from sandbox import CompareSpec, JudgeRequest, TestCase


def _request(lang: str, verdict: str) -> JudgeRequest:
    return JudgeRequest(
        language=lang,
        source=PROGRAMS[lang][verdict],
        tests=ADD_TESTS,
        time_limit_s=1.0,
        memory_limit_mb=256,
        output_limit_mb=4,
    )


@pytest.fixture(scope="module")
def verdict_results(judge_engine):
    reqs = [_request(lang, verdict) for lang, verdict in CASES]
    results = judge_engine.judge(reqs, use_cache=False)
    return {case: r for case, r in zip(CASES, results)}


@pytest.mark.parametrize(("lang", "verdict"), CASES, ids=[f"{lang}-{v}" for lang, v in CASES])
def test_known_verdict(verdict_results, judge_engine, lang, verdict):
    skip_unless_language(judge_engine, lang)
    r = verdict_results[(lang, verdict)]
    assert r.verdict == verdict, (r.verdict, [t.model_dump() for t in r.tests], r.compile_output)
    assert r.total == 2
    if verdict == "AC":
        assert r.passed == 2 and r.pass_rate == 1.0
        assert all(t.verdict == "AC" for t in r.tests)
    else:
        assert r.passed == 0 and r.pass_rate == 0.0
    if verdict == "CE":
        assert r.tests == [] and r.compile_output
    else:
        assert len(r.tests) == 2


def test_partial_pass_rate_and_first_failure(judge_engine):
    src = "a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n"
    tests = [
        TestCase(input="1 1\n", output="2\n"),
        TestCase(input="9 1\n", output="10\n"),
        TestCase(input="2 2\n", output="4"),
    ]
    [r] = judge_engine.judge(
        [JudgeRequest(language="python", source=src, tests=tests)], use_cache=False
    )
    assert (r.verdict, r.passed, r.total) == ("WA", 2, 3)
    assert r.pass_rate == pytest.approx(2 / 3)
    assert [t.verdict for t in r.tests] == ["AC", "WA", "AC"]


def test_function_mode(judge_engine):
    src = "def add(a, b):\n    return a + b\n"
    reqs = [
        JudgeRequest(
            language="python",
            mode="function",
            source=src,
            tests=[TestCase(code="assert add(1, 2) == 3"), TestCase(code="assert add(2, 2) == 5")],
        ),
        # exits before the test code runs: must not pass
        JudgeRequest(
            language="python",
            mode="function",
            source=src + "import sys\nsys.exit(0)\n",
            tests=[TestCase(code="assert add(1, 2) == 3")],
        ),
        JudgeRequest(
            language="python",
            mode="function",
            source=src + "import os\nos._exit(0)\n",
            tests=[TestCase(code="assert add(1, 2) == 3")],
        ),
        # the test code itself exits 0 early: did not run to its end
        JudgeRequest(
            language="python",
            mode="function",
            source=src,
            tests=[TestCase(code="import sys\nsys.exit(0)\nassert add(1, 2) == 4")],
        ),
        JudgeRequest(
            language="python",
            mode="function",
            source="def add(a, b):\n    return a / 0\n",
            tests=[TestCase(code="assert add(1, 2) == 3")],
        ),
        JudgeRequest(
            language="python",
            mode="function",
            source="def add(a, b):\n    while True: pass\n",
            tests=[TestCase(code="assert add(1, 2) == 3")],
            time_limit_s=0.5,
        ),
        # a candidate printing a fake marker of its own does not pass either
        JudgeRequest(
            language="python",
            mode="function",
            source=src + "print('OK')\nprint('PASSED')\nexit(0)\n",
            tests=[TestCase(code="assert add(1, 2) == 3")],
        ),
    ]
    results = judge_engine.judge(reqs, use_cache=False)
    assert [t.verdict for t in results[0].tests] == ["AC", "WA"]
    assert [r.verdict for r in results[1:]] == ["WA", "WA", "WA", "RE", "TLE", "WA"]


@pytest.mark.parametrize(
    ("mode", "actual", "expected", "want", "tol"),
    [
        ("tokens", "3  4\r\n\r\n", "3 4\n", "AC", {}),
        ("tokens", "3 4 5\n", "3 4 5 6\n", "WA", {}),  # a prefix never passes
        ("tokens", "", "0\n", "WA", {}),
        ("exact", "3 4\n", "3 4\n", "AC", {}),
        ("exact", "3 4 \n", "3 4\n", "WA", {}),
        ("float", "0.3333335 1e3\n", "0.333333 1000\n", "AC", {"abs_tol": 1e-5}),
        ("float", "0.334\n", "0.333\n", "WA", {"abs_tol": 1e-5}),
        ("float", "1000001\n", "1000000\n", "AC", {"rel_tol": 1e-5}),
        ("float", "1 2\n", "1\n", "WA", {}),
    ],
)
def test_compare_modes(judge_engine, mode, actual, expected, want, tol):
    src = f"import sys\nsys.stdout.write({actual!r})\n# {uuid.uuid4()}\n"
    req = JudgeRequest(
        language="python",
        source=src,
        tests=[TestCase(input="", output=expected)],
        compare=CompareSpec(mode=mode, **tol),
    )
    [r] = judge_engine.judge([req])
    assert r.verdict == want


def test_checker(judge_engine):
    checker = (
        "import sys\n"
        "inp, exp, act = (open(p).read() for p in sys.argv[1:4])\n"
        "n = int(inp)\n"
        "a, b = map(int, act.split())\n"
        "sys.exit(0 if a + b == n and a > 0 and b > 0 else 1)\n"
    )
    tests = [TestCase(input="10\n", output="any split")]
    good = JudgeRequest(
        language="python",
        source="n=int(input())\nprint(1, n-1)\n",
        tests=tests,
        compare=CompareSpec(mode="checker", checker=checker),
    )
    bad = JudgeRequest(
        language="python",
        source="n=int(input())\nprint(0, n)\n",
        tests=tests,
        compare=CompareSpec(mode="checker", checker=checker),
    )
    broken = JudgeRequest(
        language="python",
        source="print(1, 9)\n",
        tests=tests,
        compare=CompareSpec(mode="checker", checker="raise SystemExit(7)\n"),
    )
    results = judge_engine.judge([good, bad, broken], use_cache=False)
    assert [r.verdict for r in results] == ["AC", "WA", "SE"]


def test_java_without_public_main_class(judge_engine):
    skip_unless_language(judge_engine, "java")
    sources = [
        (
            "import java.util.*;\nclass Solution{public static void main(String[] a){Scanner s=new Scanner(System.in);"
            "System.out.println(s.nextLong()+s.nextLong());}}\n"
        ),
        (
            "import java.util.*;\npublic class Adder{static long f(long a,long b){return a+b;}\n"
            "public static void main(String[] a){Scanner s=new Scanner(System.in);System.out.println(f(s.nextLong(),s.nextLong()));}}\n"
        ),
        (
            "package judge.x;\nimport java.util.*;\nclass Helper{}\nclass Prog{public static void main(String[] a){"
            "Scanner s=new Scanner(System.in);System.out.println(s.nextLong()+s.nextLong());}}\n"
        ),
    ]
    sources.append(  # a nested helper declared before main: the usual fast-reader layout
        "import java.io.*;\nimport java.util.*;\npublic class Main {\n"
        "  static class FastReader { BufferedReader br = new BufferedReader(new InputStreamReader(System.in));\n"
        "    StringTokenizer st; String next() throws IOException { while (st == null || !st.hasMoreTokens())"
        " st = new StringTokenizer(br.readLine()); return st.nextToken(); } }\n"
        "  public static void main(String[] args) throws IOException { FastReader f = new FastReader();\n"
        "    System.out.println(Long.parseLong(f.next()) + Long.parseLong(f.next())); }\n}\n"
    )
    reqs = [JudgeRequest(language="java", source=s, tests=ADD_TESTS) for s in sources]
    results = judge_engine.judge(reqs, use_cache=False)
    assert [r.verdict for r in results] == ["AC"] * 4, [r.compile_output for r in results]


def test_order_and_generator_input(judge_engine):
    def gen():
        for i in range(12):
            yield JudgeRequest(
                language="python",
                source=f"print({i})\n",
                tests=[TestCase(input="", output=f"{i % 3}\n")],
            )

    results = judge_engine.judge(gen(), use_cache=False)
    assert [r.verdict for r in results] == ["AC" if i % 3 == i else "WA" for i in range(12)]
    streamed = dict(
        judge_engine.judge_iter(
            [
                JudgeRequest(
                    language="python", source="print(1)\n", tests=[TestCase(input="", output="1")]
                )
            ]
            * 3,
            use_cache=False,
        )
    )
    assert sorted(streamed) == [0, 1, 2] and all(r.verdict == "AC" for r in streamed.values())


def test_a_small_batch_uses_every_slot(judge_engine):
    """Requests are sent to a slot ahead of time only when no other slot is idle: two slow
    candidates on a pool of two run side by side, not one after the other on one slot."""
    import time

    nonce = uuid.uuid4().hex
    reqs = [
        JudgeRequest(
            language="python",
            source=f"import time\ntime.sleep(1.5)\nprint(1)  # {nonce} {i}\n",
            tests=[TestCase(input="", output="1\n")],
            time_limit_s=2,
        )
        for i in range(2)
    ]
    start = time.perf_counter()
    results = judge_engine.judge(reqs, use_cache=False)
    elapsed = time.perf_counter() - start
    assert [r.verdict for r in results] == ["AC", "AC"]
    assert elapsed < 2.7, f"{elapsed:.1f} s: the two candidates ran one after the other"
