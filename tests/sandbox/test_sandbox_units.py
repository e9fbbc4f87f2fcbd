"""Pure-Python parts of the runner and the models (no Docker): Java naming, comparisons, limits."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from sandbox import CompareSpec, JudgeRequest, JudgeResult, TestCase, TestResult
from sandbox.runner.languages import java as lang_java  # a package: imported as one

RUNNER = Path(__file__).resolve().parents[2] / "sandbox" / "runner"


def _load(name: str):
    if str(RUNNER) not in sys.path:
        sys.path.insert(0, str(RUNNER))  # the runner's modules import each other by bare name
    spec = importlib.util.spec_from_file_location(f"sandbox_runner_{name}", RUNNER / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while being defined
    spec.loader.exec_module(mod)
    return mod


compare = _load("compare")


@pytest.mark.parametrize(
    ("source", "want"),
    [
        (
            "public class Main { static class FastReader {} public static void main(String[] a){} }",
            ("Main", "Main"),
        ),
        (
            (
                "class Helper{}\nclass Prog{ static class In {} public static void main(String... a){"
                " String s = \"class X {\"; char c = '{'; } }"
            ),
            ("Main", "Prog"),
        ),
        (
            "package a.b;\npublic class Sol { /* class Fake { */ public static void main(final String[] x){} }",
            ("Sol", "a.b.Sol"),
        ),
        (
            "class Outer { static class Inner { public static void main(String[] a){} } }",
            ("Main", "Outer$Inner"),
        ),
        (
            "public final class A { record R(int a){} public static void main(String[] z){ Object o = A.class; } }",
            ("A", "A"),
        ),
    ],
)
def test_java_file_and_main_class(source, want):
    assert lang_java.names(source) == want


def test_token_compare():
    assert compare.tokens_equal(b"1 2\r\n3  \n\n", b"1 2\n3\n")
    assert not compare.tokens_equal(b"1 2", b"1 2 3")  # a prefix never passes
    assert not compare.tokens_equal(b"\xff", b"1")  # invalid UTF-8 is just bytes


def test_float_compare():
    assert compare.floats_equal(b"0.1000001", b"0.1", 1e-6, None)
    assert not compare.floats_equal(b"0.11", b"0.1", 1e-6, None)
    assert compare.floats_equal(b"100.5", b"100", None, 1e-2)
    assert compare.floats_equal(b"nan inf", b"nan inf", None, None)
    assert not compare.floats_equal(b"abc", b"abd", 1.0, 1.0)


def test_candidate_verdict_rule():
    t = lambda v: TestResult(verdict=v)
    assert JudgeResult.from_tests([t("AC"), t("AC")], 2).verdict == "AC"
    assert JudgeResult.from_tests([t("AC"), t("TLE"), t("WA")], 3).verdict == "TLE"  # first failure
    r = JudgeResult.from_tests([t("WA"), t("AC")], 2)
    assert (r.passed, r.pass_rate) == (1, 0.5)
    assert JudgeResult.from_tests([], 3, compile_ok=False).verdict == "CE"


def test_request_validation_names_the_field():
    with pytest.raises(ValidationError, match="tests"):
        JudgeRequest(language="python", source="", tests=[])
    with pytest.raises(ValidationError, match="function mode is Python only"):
        JudgeRequest(language="cpp", source="", mode="function", tests=[TestCase(code="x")])
    with pytest.raises(ValidationError, match="checker"):
        CompareSpec(mode="checker")
    assert TestCase(input=None, output=None) == TestCase()  # Parquet nulls
    assert TestCase.__test__ is False


store = _load("store")
checkers = _load("checkers")


def test_store_keeps_sets_sealed_and_drops_the_least_recently_used():
    import errno
    import os

    s = store.TestStore(budget_bytes=10)
    a = store.decode_tests([{"input": "1 2\n", "output": "3\n"}])  # 4 + 2 bytes
    s.put("a", a)
    s.put("b", store.decode_tests([{"input": "xx", "output": "y"}]))  # 3 bytes: 9 in all
    assert s.get("a")[0].input() == b"1 2\n" and s.get("a")[0].output() == b"3\n"
    with pytest.raises(OSError) as err:  # sealed: nobody can change a stored test
        os.pwrite(a[0].input_fd, b"9", 0)
    assert err.value.errno == errno.EPERM
    s.put("c", store.decode_tests([{"input": "zz", "output": ""}]))  # 11 > 10: drop the LRU ("b")
    assert s.get("b") is None and s.get("a") is not None and len(s) == 2 and s.used == 8
    with open(a[0].input_path, "rb") as f:  # a fresh read-only description, from offset 0
        assert f.read() == b"1 2\n"


def test_store_frame_carries_raw_bytes_to_sealed_memfds():
    """The client's store request (a JSON line of sizes + raw bytes) read as the runner reads it."""
    import io
    import json
    import os

    tests = [
        TestCase(input="1 2\n", output="3\n"),
        TestCase(
            input='q"\\\n\u00e9\ud800', output=""
        ),  # JSON-special, non-ASCII, a lone surrogate
    ]
    frame = JudgeRequest(language="python", source="x", tests=tests).store_wire()
    head, _, raw = frame.partition(b"\n")
    meta = json.loads(head)
    assert meta["op"] == "store" and meta["sizes"] == [[4, 2, -1], [9, 0, -1]]
    stream = io.BytesIO(raw + b"NEXT")
    got = store.read_tests(stream, meta["sizes"])
    assert [(t.input(), t.output()) for t in got] == [
        (b"1 2\n", b"3\n"),
        (b'q"\\\n\xc3\xa9\xed\xa0\x80', b""),
    ]
    assert stream.read() == b"NEXT"  # exactly the frame is consumed
    fn = JudgeRequest(
        language="python", source="x", mode="function", tests=[TestCase(code="assert f() == 1")]
    ).store_wire()
    head, _, raw = fn.partition(b"\n")
    [t] = store.read_tests(io.BytesIO(raw), json.loads(head)["sizes"])
    assert t.code == "assert f() == 1" and t.input() == b""
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(EOFError):  # a short frame: an error, and no descriptor left open
        store.read_tests(io.BytesIO(b"1 2\n3"), [[4, 2, -1], [5, 5, -1]])
    assert len(os.listdir("/proc/self/fd")) == before


def test_compare_fast_path_agrees_with_tokens():
    assert compare.tokens_equal(b"1 2\n3\n", b"1 2\n3\n")
    assert compare.tokens_equal(b"1 2\n3", b"1 2\n3\n\n")  # trailing whitespace only
    assert compare.tokens_equal(b"1  2\r\n3\n", b"1 2\n3\n")  # the token path
    assert not compare.tokens_equal(b"1 2\n", b"1 2\n3\n")  # a prefix never passes


@pytest.mark.parametrize(
    ("code", "report", "verdict"),
    [
        (0, b"", "AC"),
        (1, b"", "WA"),
        (2, b"", "WA"),
        (3, b"", "SE"),
        (7, b"points 1\n", "AC"),
        (7, b"points 0.5\n", "WA"),
        (7, b"no points", "WA"),
        (4, b"", "SE"),
        (None, b"", "SE"),
    ],
)
def test_testlib_exit_codes(code, report, verdict):
    assert checkers.testlib_verdict(code, report) == verdict
