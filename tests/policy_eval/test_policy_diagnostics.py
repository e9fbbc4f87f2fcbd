"""The diagnostic families from per-sample facts: values computed by hand."""

from __future__ import annotations

import pytest

from pipeline.policy_eval import diagnostics as dg
from pipeline.policy_eval.config import BootstrapSettings, PolicyEvalConfig
from pipeline.policy_eval.severity import severity_of


def _fact(
    pid: str,
    verdict: str,
    *,
    chars: int = 10,
    tokens: int | None = 5,
    truncated: bool = False,
    families: dict[str, int] | None = None,
    lines: int = 2,
    exc: str | None = None,
) -> dict:
    return {
        "problem_id": pid,
        "source_id": pid,
        "verdict": verdict,
        "completion_chars": chars,
        "completion_tokens": tokens,
        "truncated": truncated,
        "ruff_families": families,
        "code_lines": lines,
        "exception": exc,
    }


FACTS = [
    _fact("11", "AC", chars=10, tokens=4, families={}),
    _fact("11", "WA", chars=20, tokens=8, families={"F": 1, "E": 2}, exc="AssertionError"),
    _fact(
        "12", "RE", chars=30, tokens=12, families={"syntax": 1, "N": 1}, lines=4, exc="NameError"
    ),
    _fact("12", dg.NO_PROGRAM, chars=40, tokens=None, truncated=True, families=None, lines=0),
]


def test_exception_name_is_the_last_traceback_line() -> None:
    tb = (
        'Traceback (most recent call last):\n  File "test.py", line 1, in <module>\n'
        "NameError: name 'foo' is not defined\n"
    )
    assert dg.exception_name(tb) == "NameError"
    assert dg.exception_name("Traceback ...\nAssertionError\n") == "AssertionError"
    assert dg.exception_name("numpy.linalg.LinAlgError: singular") == "LinAlgError"
    assert dg.exception_name("") is None and dg.exception_name("just output") is None


def test_severity_mapping() -> None:
    assert [severity_of(f) for f in ("syntax", "F", "B", "PLE")] == ["error"] * 4
    assert [severity_of(f) for f in ("E", "W", "C", "S")] == ["warning"] * 4
    assert [severity_of(f) for f in ("N", "D", "UP", "RUF")] == ["convention"] * 4


def test_pass_metrics_per_problem_and_overall() -> None:
    table = dg.per_problem(FACTS, [1, 2])
    assert [(p["problem_id"], p["n"], p["c"]) for p in table] == [("11", 2, 1), ("12", 2, 0)]
    assert table[0]["pass@1"] == pytest.approx(0.5) and table[0]["pass@2"] == pytest.approx(1.0)
    m = dg.pass_metrics(table, [1, 2], BootstrapSettings(resamples=200))
    assert m["pass@1"]["value"] == pytest.approx(0.25) and m["pass@2"]["value"] == pytest.approx(
        0.5
    )
    assert m["pass@1"]["ci_low"] <= 0.25 <= m["pass@1"]["ci_high"]


def test_length_metrics() -> None:
    m = dg.length_metrics(FACTS)
    assert m["chars"]["mean"] == pytest.approx(25.0) and m["chars"]["median"] == pytest.approx(25.0)
    assert m["chars"]["p90"] == pytest.approx(37.0)  # numpy linear: 30 + 0.7 * (40 - 30)
    assert m["tokens"]["mean"] == pytest.approx(
        8.0
    )  # (4 + 8 + 12) / 3: the sample without counts is left out
    assert m["truncated_share"] == pytest.approx(0.25)


def test_ruff_metrics_by_family_and_severity() -> None:
    m = dg.ruff_metrics(FACTS)
    assert m["programs"] == 3 and m["lines"] == 8  # the NO_PROGRAM sample has no program to lint
    assert m["total"] == {
        "count": 5,
        "per_program": pytest.approx(5 / 3),
        "per_100_lines": pytest.approx(62.5),
    }
    sev = m["by_severity"]
    assert sev["error"]["count"] == 2 and sev["error"]["per_100_lines"] == pytest.approx(
        25.0
    )  # F + syntax
    assert sev["warning"]["count"] == 2 and sev["convention"]["count"] == 1
    assert m["by_family"]["E"]["severity"] == "warning" and m["clean_share"] == pytest.approx(1 / 3)


def test_error_metrics() -> None:
    m = dg.error_metrics(FACTS)
    assert {k: v["count"] for k, v in m["by_type"].items() if v["count"]} == {
        "AC": 1,
        "WA": 1,
        "RE": 1,
        dg.NO_PROGRAM: 1,
    }
    assert m["by_type"]["TLE"]["share"] == 0.0
    assert m["top_exceptions"] == [
        {"name": "AssertionError", "count": 1},
        {"name": "NameError", "count": 1},
    ]


def test_config_refuses_k_above_samples() -> None:
    with pytest.raises(ValueError, match="samples=2"):
        PolicyEvalConfig(model="m", samples=2, k=[1, 4])


@pytest.mark.parametrize(("split", "shown"), [("test", "(split `test`)"), (None, "(split `all`)")])
def test_the_report_names_the_split_all_not_none(tmp_path, split: str | None, shown: str) -> None:
    """`--split all` is a config split of None; the report once read "(split `None`)"."""
    from pipeline.policy_eval.report import to_markdown
    from pipeline.policy_eval.run import build_report

    config = PolicyEvalConfig(model="m", split=split, samples=2, k=[1])
    report, _ = build_report(FACTS, config, tmp_path / "p.parquet", 2)
    header = to_markdown(report).splitlines()[2]
    assert header.startswith(f"2 problems {shown}, 2 sample(s) each"), header
