"""livecodebench/code_generation_lite -> Problem.

Published layout: `question_title`, `question_content`, `platform` (leetcode / atcoder
/ codeforces), `question_id`, `contest_id`, `contest_date` (ISO datetime text),
`starter_code`, `difficulty`, `public_test_cases` (JSON text: a list of `{input,
output, testtype}` with testtype "stdin" or "functional"), `private_test_cases` (the
same JSON text, or base64(zlib(pickle(that JSON text)))) and `metadata` (JSON text,
`{"func_name": ...}` for functional problems). A functional test's `input` is one
JSON value per line (the arguments) and its `output` is one JSON value.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.problems.adapters.base import (
    Adapter,
    AdapterContext,
    parse_date,
    parse_json_field,
    require_text,
)
from pipeline.problems.errors import RowError
from pipeline.problems.function_tests import function_test_code
from pipeline.problems.safe_pickle import UnsafePickleError, decode_b64_zlib_pickle


def decode_test_cases(value: Any, field: str) -> list[dict[str, Any]]:
    """Plain JSON, or base64+zlib+pickle of the JSON text (loaded with a data-only unpickler)."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return value
    text = str(value)
    try:
        cases = json.loads(text)
    except json.JSONDecodeError:
        try:
            inner = decode_b64_zlib_pickle(text)
        except UnsafePickleError as e:
            raise RowError(field, f"refused unsafe pickle payload: {e}") from e
        except ValueError as e:
            raise RowError(
                field, f"undecodable test cases (neither JSON nor b64+zlib+pickle): {e}"
            ) from e
        try:
            cases = json.loads(inner) if isinstance(inner, str) else inner
        except json.JSONDecodeError as e:
            raise RowError(field, f"decoded payload is not JSON: {e.msg}") from e
    if not isinstance(cases, list):
        raise RowError(field, "expected a list of test cases")
    return cases


def _function_args(text: str, field: str, i: int) -> list[Any]:
    try:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    except json.JSONDecodeError as e:
        raise RowError(
            field, f"test {i}: arguments are not one JSON value per line ({e.msg})"
        ) from e


class LiveCodeBenchAdapter(Adapter):
    name = "livecodebench"
    default_hub_id = "livecodebench/code_generation_lite"
    default_split = "test"  # the only split it publishes
    required_columns = (
        "question_id",
        "question_content",
        "public_test_cases",
        "private_test_cases",
    )

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row["question_id"])

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        cases = [
            ("public_test_cases", c)
            for c in decode_test_cases(row.get("public_test_cases"), "public_test_cases")
        ]
        cases += [
            ("private_test_cases", c)
            for c in decode_test_cases(row.get("private_test_cases"), "private_test_cases")
        ]
        metadata = parse_json_field(row, "metadata") or {}
        starter = row.get("starter_code") or None
        types = {str(c.get("testtype", "stdin")) for _, c in cases if isinstance(c, dict)}
        if len(types) > 1:
            raise RowError("public_test_cases", f"mixed test types {sorted(types)}")
        functional = types == {"functional"}
        entry = metadata.get("func_name") if isinstance(metadata, dict) else None
        if functional and not entry:
            raise RowError("metadata", "functional tests but no func_name in metadata")
        tests = []
        for i, (field, c) in enumerate(cases):
            if not isinstance(c, dict) or "input" not in c:
                raise RowError(field, f"test {i} has no input")
            if c.get("output") is None:
                tests.append({"input": c["input"], "output": None})  # validation quarantines it
                continue
            if functional:
                args = _function_args(c["input"], field, i)
                try:
                    expected = json.loads(c["output"])
                except json.JSONDecodeError as e:
                    raise RowError(field, f"test {i}: output is not JSON ({e.msg})") from e
                tests.append(
                    {"code": function_test_code(entry, args, expected, starter_code=starter)}
                )
            else:
                tests.append({"input": c["input"], "output": c["output"]})
        platform = row.get("platform")
        return {
            "title": str(row.get("question_title") or ""),
            "statement": require_text(row, "question_content"),
            "test_mode": "function" if functional else "stdio",
            "tests": tests,
            "entry_point": entry if functional else None,
            "starter_code": starter,
            "contest_date": parse_date(row.get("contest_date"), ctx, "contest_date"),
            "difficulty": (str(row["difficulty"]).lower() if row.get("difficulty") else None),
            "tags": [f"platform:{platform}"] if platform else [],
        }
