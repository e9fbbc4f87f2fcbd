"""Pure-Python parts of the runner and the models (no Docker): Java naming, comparisons, limits."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from sandbox import CompareSpec, JudgeRequest, JudgeResult, TestCase, TestResult

RUNNER = Path(__file__).resolve().parents[2] / "sandbox" / "runner"


def _load(name: str):
    if str(RUNNER) not in sys.path:
        sys.path.insert(0, str(RUNNER))  # the runner's modules import each other by bare name
    spec = importlib.util.spec_from_file_location(f"sandbox_runner_{name}", RUNNER / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


lang_java = _load("lang_java")
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
