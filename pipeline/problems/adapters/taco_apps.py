"""BAAI/TACO and codeparrot/apps -> Problem (the two share APPS's row layout).

Both publish `question`, `solutions` (JSON text: a list of Python 3 programs),
`starter_code`, `input_output` (JSON text `{"inputs": [...], "outputs": [...]}`, plus
`"fn_name"` for function mode, where each input is the argument list) and `difficulty`.
APPS adds an integer `problem_id` and `url`; TACO adds `name`, `source`, `url`, `tags`,
`skill_types`, `date`, `time_limit` ("1 second") and `memory_limit` ("256 megabytes").
"""

from __future__ import annotations

import ast
from typing import Any

from pipeline.problems.adapters.base import (
    Adapter,
    AdapterContext,
    as_text,
    cap_solutions,
    parse_date,
    parse_json_field,
    parse_memory_limit_mb,
    parse_time_limit,
    require_text,
)
from pipeline.problems.errors import RowError
from pipeline.problems.function_tests import function_test_code


def _tests_from_input_output(
    row: dict[str, Any], starter: str | None
) -> tuple[str, list, str | None]:
    io = parse_json_field(row, "input_output")
    if io is None:
        return "stdio", [], None
    if not isinstance(io, dict):
        raise RowError("input_output", "expected a JSON object with inputs/outputs")
    inputs, outputs = io.get("inputs") or [], io.get("outputs") or []
    if len(inputs) != len(outputs):
        raise RowError("input_output", f"{len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = io.get("fn_name")
    if fn_name:
        tests = []
        for i, (args, expected) in enumerate(zip(inputs, outputs, strict=True)):
            if expected is None:
                raise RowError("input_output", f"outputs[{i}] is missing")
            if not isinstance(args, list):
                raise RowError("input_output", f"inputs[{i}] is not an argument list")
            code = function_test_code(
                fn_name, args, expected, starter_code=starter, accept_wrapped=True
            )
            tests.append({"code": code})
        return "function", tests, fn_name
    tests = [
        {"input": as_text(i), "output": None if o is None else as_text(o)}
        for i, o in zip(inputs, outputs, strict=True)
    ]
    return "stdio", tests, None


def _solutions(row: dict[str, Any]) -> list[dict[str, Any]]:
    sols = parse_json_field(row, "solutions") or []
    if not isinstance(sols, list):
        raise RowError("solutions", "expected a JSON list of programs")
    return [
        {"language": "python", "code": s, "correct": True}
        for s in sols
        if isinstance(s, str) and s.strip()
    ]


def _tags(value: Any) -> list[str]:
    """TACO stores tags as a list or as its Python repr ("['Sorting', 'Math']")."""
    if not value:
        return []
    if isinstance(value, list):
        return [str(t) for t in value]
    try:
        parsed = ast.literal_eval(str(value))  # literals only: never executes code
    except (ValueError, SyntaxError):
        return [str(value)]
    return [str(t) for t in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]


class _AppsLikeAdapter(Adapter):
    required_columns = ("question", "input_output", "solutions")
    license: str = "mit"

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        starter = row.get("starter_code") or None
        mode, tests, entry = _tests_from_input_output(row, starter)
        return {
            "title": str(row.get("name") or ""),
            "statement": require_text(row, "question"),
            "test_mode": mode,
            "tests": tests,
            "entry_point": entry,
            "starter_code": starter,
            "time_limit_s": parse_time_limit(row.get("time_limit")),
            "memory_limit_mb": parse_memory_limit_mb(row.get("memory_limit")),
            "contest_date": parse_date(row.get("date"), ctx, "date"),
            "difficulty": (str(row["difficulty"]).lower() if row.get("difficulty") else None),
            "tags": _tags(row.get("tags")),
            "solutions": cap_solutions(_solutions(row), ctx),
            "license": self.license,
        }


class AppsAdapter(_AppsLikeAdapter):
    name = "apps"
    default_hub_id = "codeparrot/apps"
    required_columns = ("problem_id", "question", "input_output", "solutions")

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return f"{ctx.split}/{row['problem_id']}"


class TacoAdapter(_AppsLikeAdapter):
    name = "taco"
    default_hub_id = "BAAI/TACO"
    license = "apache-2.0"
