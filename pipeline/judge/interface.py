"""The one way the pipeline judges a program (docs/architecture.md, "The judge interface").

Every caller (the judge stage, RLVR rewards, policy evaluation, the reference check, the
adversarial re-judge) goes through the three parts here, so a program gets the same verdict
whichever of them judges it:

    engine = open_judge(cfg.sandbox)                     # a run config's `sandbox:` section
    spec = judge_spec(problem, time_limit_scale=1.0)     # once per problem
    [result] = engine.judge([spec.request("python", code)])
    columns = verdict_columns(result, spec, engine.stamp)   # verdict, passed, ..., judge_stamp

- `open_judge`: the engine named by `sandbox.engine` (docker, process, http) from
  `sandbox.engines.open_engine`, with that engine's options; `probe_judge` reaches it without
  starting it (what the preflight and every judging command check first).
- `judge_spec`: the ONE request builder. From a problem row (a `Problem`, or a mapping with
  the `schemas.problem.JUDGE_FIELDS` columns, as a Train-Questions row has them) it takes the
  problem's tests, comparison (mode, float tolerances, checker) and limits: the time limit
  times the caller's scale, capped at the sandbox's 60 s, and the memory limit clamped to
  what the sandbox allows per test (16..1024 MB). A problem asking for more memory than the
  sandbox's ceiling is judged at the ceiling by every caller alike, rather than failing the
  request (which used to stop RLVR training); the verdict columns record the limits used, so
  a judged row says when its problem was capped.
- `verdict_columns`: the ONE mapping from a sandbox result to the verdict columns
  (`schemas.verdict.VERDICT_FIELDS`), the engine's stamp included.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pipeline.judge.availability import JudgeUnavailable, probe_judge
from pipeline.judge.config import SandboxSection
from sandbox.engines import ENGINES, EngineUnavailable, JudgeEngine
from sandbox.models import CompareSpec, JudgeRequest, JudgeResult, TestCase
from schemas.problem import Problem

log = logging.getLogger(__name__)
__all__ = ["JudgeUnavailable", "open_judge", "probe_judge"]  # and the rest below


# ---------------------------------------------------------------------- opening a judge
def open_judge(section: SandboxSection | None = None) -> JudgeEngine:
    """The judge engine a `sandbox:` section names, started (close it, or use it as a context
    manager). Raises JudgeUnavailable, one line, when that engine cannot run here."""
    from sandbox.engines import open_engine

    section = section or SandboxSection()
    try:
        return open_engine(section.engine, **section.engine_options())
    except EngineUnavailable as e:
        raise JudgeUnavailable(
            f"{e} (sandbox.engine / --engine: one of {', '.join(ENGINES)})"
        ) from e


# ---------------------------------------------------------------------- requests
def _bounds(field: str) -> tuple[float, float]:
    """A JudgeRequest limit's allowed range, read from the sandbox's own model (no copy of it)."""
    low, high = 0.0, float("inf")
    for m in JudgeRequest.model_fields[field].metadata:
        low = getattr(m, "ge", None) or getattr(m, "gt", None) or low
        high = getattr(m, "le", None) or high
    return low, high


MAX_TIME_LIMIT_S = _bounds("time_limit_s")[1]  # 60 s per test
MIN_MEMORY_MB, MAX_MEMORY_MB = (int(b) for b in _bounds("memory_limit_mb"))  # 16, 1024 MB


class JudgeSpecError(ValueError):
    """A problem row no judge request can be built from; the message names the problem."""


@dataclass(frozen=True)
class JudgeSpec:
    """Everything about one problem that decides a verdict, in the sandbox's terms; built once
    per problem and shared by all its programs' requests (the sandbox hashes the same test
    objects once)."""

    problem_id: str
    mode: str
    tests: tuple[TestCase, ...]
    time_limit_s: float  # scaled and capped: the limit every test runs under
    memory_limit_mb: int  # clamped to the sandbox's range
    requested_memory_mb: int  # what the problem asked for
    compare: CompareSpec

    @property
    def memory_capped(self) -> bool:
        return self.memory_limit_mb != self.requested_memory_mb

    def request(self, language: str, source: str) -> JudgeRequest:
        """The sandbox request for one program (JudgeSpecError naming the problem if the
        language cannot run this problem, e.g. function mode outside Python)."""
        try:
            return JudgeRequest(
                language=language,  # type: ignore[arg-type]
                source=source,
                mode=self.mode,  # type: ignore[arg-type]
                tests=list(self.tests),
                time_limit_s=self.time_limit_s,
                memory_limit_mb=self.memory_limit_mb,
                compare=self.compare,
            )
        except ValidationError as e:
            raise JudgeSpecError(
                f"problem {self.problem_id}: cannot build a {language} judge request: {_first(e)}"
            ) from e


# CompareSpec's fields as the problem columns they come from, for messages that name the row.
_COMPARE_COLUMNS = {
    "mode": "compare_mode",
    "abs_tol": "float_abs_tol",
    "rel_tol": "float_rel_tol",
    "checker": "checker",
}


def _first(e: ValidationError, columns: Mapping[str, str] | None = None) -> str:
    err = e.errors()[0]
    loc = [str((columns or {}).get(str(p), p)) for p in err["loc"]]
    return f"{err['msg']} (field {'.'.join(loc) or '-'})"


def _get(row: Problem | Mapping[str, Any], name: str) -> Any:
    if isinstance(row, Mapping):
        if name not in row:
            raise JudgeSpecError(
                f"problem {row.get('problem_id', '?')}: no {name!r} column; a judge needs every "
                f"judge column of the problem (schemas.problem.JUDGE_FIELDS; Train-Questions "
                f"carries them from schema version 2)"
            )
        return row[name]
    return getattr(row, name)


def judge_spec(
    problem: Problem | Mapping[str, Any],
    *,
    time_limit_scale: float = 1.0,
    max_tests: int | None = None,
) -> JudgeSpec:
    """The judge's view of a problem row: a `Problem` or a mapping of its columns (a Parquet
    or dataset row). `max_tests`: judge on the first N tests only."""
    pid = str(_get(problem, "problem_id"))
    mode = _get(problem, "test_mode")
    tests = _get(problem, "tests")
    tests = tests[:max_tests] if max_tests else tests
    built = tuple(_sandbox_test(t, mode) for t in tests)
    time_limit = float(_get(problem, "time_limit_s"))
    memory = int(_get(problem, "memory_limit_mb"))
    if time_limit <= 0:
        raise JudgeSpecError(f"problem {pid}: time_limit_s must be positive, got {time_limit}")
    try:
        compare = CompareSpec(
            mode=_get(problem, "compare_mode"),
            abs_tol=_get(problem, "float_abs_tol"),
            rel_tol=_get(problem, "float_rel_tol"),
            checker=_get(problem, "checker"),
        )
    except ValidationError as e:
        raise JudgeSpecError(
            f"problem {pid}: cannot judge its comparison: {_first(e, _COMPARE_COLUMNS)}"
        ) from e
    return JudgeSpec(
        problem_id=pid,
        mode=mode,
        tests=built,
        time_limit_s=min(MAX_TIME_LIMIT_S, time_limit * time_limit_scale),
        memory_limit_mb=memory_limit_for(memory),
        requested_memory_mb=memory,
        compare=compare,
    )


def memory_limit_for(requested_mb: int) -> int:
    """The per-test memory limit a problem is judged at: its own, clamped to the sandbox's range."""
    return min(MAX_MEMORY_MB, max(MIN_MEMORY_MB, int(requested_mb)))


def _sandbox_test(test: Any, mode: str) -> TestCase:
    get = test.get if isinstance(test, Mapping) else lambda k: getattr(test, k)
    if mode == "function":
        return TestCase(code=get("code"))
    return TestCase(input=get("input") or "", output=get("output") or "")


# ---------------------------------------------------------------------- results
def verdict_columns(result: JudgeResult, spec: JudgeSpec, stamp: str) -> dict[str, Any]:
    """A result as the verdict columns (schemas.verdict.VERDICT_FIELDS). `stamp`: the engine's
    (`engine.stamp`), so a judged row says which engine judged it."""
    return {
        "verdict": result.verdict,
        "passed": result.passed,
        "total": result.total,
        "pass_rate": float(result.pass_rate),
        "test_verdicts": [t.verdict for t in result.tests],
        "test_times_s": [float(t.time_s) for t in result.tests],
        "test_memory_kb": [int(t.memory_kb) for t in result.tests],
        "compile_output": result.compile_output
        or (result.error if result.verdict == "SE" else None),
        "sandbox_image": result.image or "",
        "time_limit_s": spec.time_limit_s,
        "memory_limit_mb": spec.memory_limit_mb,
        "judge_cache_key": result.cache_key or "",
        "judge_stamp": stamp,
    }


def first_failure(result: JudgeResult) -> tuple[int | None, str | None]:
    """(index of the first test that did not pass, its stderr tail, or the compile output /
    the sandbox's error when no test ran); (None, None) for a pass."""
    bad = next((i for i, t in enumerate(result.tests) if t.verdict != "AC"), None)
    if bad is None and result.verdict == "AC":
        return None, None
    text = result.tests[bad].stderr_tail if bad is not None else None
    return bad, text or result.compile_output or result.error
