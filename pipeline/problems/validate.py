"""Adapter output -> a valid Problem, or a quarantine row saying exactly what is wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pipeline.problems.config import IngestConfig
from pipeline.problems.normalize import prompt_statement
from schemas.common import LANGUAGES, Quarantine
from schemas.ids import problem_id_for
from schemas.problem import Problem, Solution


class Invalid(Exception):
    def __init__(self, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def raw_text(row: dict[str, Any], limit: int) -> str:
    text = json.dumps(row, default=str, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


@dataclass(frozen=True)
class RejectedSolution:
    """One reference solution left out of a problem that is kept: where and why."""

    index: int  # in the row's `solutions`
    field: str  # "solutions.1.language"
    reason: str
    solution: Any


def _solution_problem(index: int, solution: Any) -> RejectedSolution | None:
    try:
        Solution.model_validate(solution)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        field = f"solutions.{index}" + (f".{loc}" if loc else "")
        if loc == "language" and err["type"] == "literal_error":
            reason = (
                f"unsupported language {err['input']!r} (supported: {', '.join(LANGUAGES)}); "
                "the problem is kept with its other solutions"
            )
        else:
            reason = f"invalid solution: {err['msg']}; the problem is kept with its other solutions"
        return RejectedSolution(index, field, reason, solution)
    return None


def split_solutions(fields: dict[str, Any]) -> tuple[dict[str, Any], list[RejectedSolution]]:
    """`fields` less each solution that is not a valid Solution (a language we cannot run, a
    missing `correct`), and those solutions: one bad solution costs itself, not its problem
    and the good solutions beside it. A `solutions` that is no list is left to the row's
    own validation."""
    solutions = fields.get("solutions")
    if not isinstance(solutions, list):
        return fields, []
    rejected = [r for i, sol in enumerate(solutions) if (r := _solution_problem(i, sol))]
    if not rejected:
        return fields, []
    bad = {r.index for r in rejected}
    kept = [sol for i, sol in enumerate(solutions) if i not in bad]
    return {**fields, "solutions": kept}, rejected


def quarantine_row(
    source: str,
    row_id: str,
    field: str | None,
    reason: str,
    row: dict[str, Any],
    config: IngestConfig,
) -> Quarantine:
    return Quarantine(
        stage="ingest",
        source=source,
        source_row_id=row_id,
        field=field,
        reason=reason,
        raw=raw_text(row, config.quarantine_raw_chars),
    )


def _check_tests(fields: dict[str, Any], config: IngestConfig) -> list[dict[str, Any]]:
    tests = fields.get("tests") or []
    if not tests:
        raise Invalid("tests", "no tests")
    mode = fields.get("test_mode")
    for i, t in enumerate(tests):
        if mode == "stdio":
            if t.get("input") is None:
                raise Invalid("tests", f"tests[{i}] has no input")
            if t.get("output") is None:
                raise Invalid("tests", f"tests[{i}] is missing its expected output")
        elif mode == "function" and not (t.get("code") or "").strip():
            raise Invalid("tests", f"tests[{i}] has no test code")
    if config.max_tests_per_problem is not None:
        tests = tests[: config.max_tests_per_problem]
    return tests


def _limits(fields: dict[str, Any], config: IngestConfig) -> tuple[float, int]:
    tl = fields.get("time_limit_s")
    ml = fields.get("memory_limit_mb")
    tl = config.default_time_limit_s if tl is None else float(tl)
    ml = config.default_memory_limit_mb if ml is None else float(ml)
    if not (config.min_time_limit_s <= tl <= config.max_time_limit_s):
        raise Invalid(
            "time_limit_s",
            f"absurd time limit {tl:g}s (allowed "
            f"{config.min_time_limit_s:g}..{config.max_time_limit_s:g})",
        )
    if not (config.min_memory_limit_mb <= ml <= config.max_memory_limit_mb):
        raise Invalid(
            "memory_limit_mb",
            f"absurd memory limit {ml:g} MB (allowed "
            f"{config.min_memory_limit_mb}..{config.max_memory_limit_mb})",
        )
    return tl, round(ml)


def build_problem(
    source: str,
    row_id: str,
    fields: dict[str, Any],
    config: IngestConfig,
    rejected: list[RejectedSolution],
) -> Problem:
    """Validate adapter output and build the Problem; raises Invalid(field, reason). A
    solution that is not valid is left out and added to `rejected` (the caller quarantines
    it alone): the problem is kept with the rest."""
    fields, bad = split_solutions(fields)
    statement = fields.get("statement") or ""
    if not statement.strip():
        raise Invalid("statement", "empty statement")
    tests = _check_tests(fields, config)
    time_limit, memory_limit = _limits(fields, config)
    src = fields.get("source") or source
    sid = str(fields.get("source_id") or row_id)
    data = {k: v for k, v in fields.items() if v is not None}
    data.update(
        source=src,
        source_id=sid,
        problem_id=fields.get("problem_id") or problem_id_for(src, sid),
        statement=statement,
        prompt_statement=fields.get("prompt_statement")
        or prompt_statement(statement, config.normalize),
        tests=tests,
        time_limit_s=time_limit,
        memory_limit_mb=memory_limit,
    )
    try:
        problem = Problem.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or None
        raise Invalid(loc, f"invalid field: {err['msg']}") from e
    rejected += bad  # only once the problem itself is kept
    return problem
