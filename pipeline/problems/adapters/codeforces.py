"""open-r1/codeforces -> Problem.

Published layout: `id` ("2063/A"), `contest_id`, `index`, `title`, `description`,
`input_format`, `output_format`, `interaction_format`, `note`, `examples` (list of
`{input, output}`), `official_tests` (list of `{input, output}`),
`official_tests_complete`, `time_limit` (seconds, float), `memory_limit` (MB, float),
`contest_start` (unix seconds), `rating`, `tags`, `input_mode` ("stdio" | "file"),
`generated_checker` (Python checker source for problems with many valid answers;
wrapped for the sandbox's checker protocol by pipeline/problems/checkers.py), and, where
a copy carries it, `checker` (the problem's testlib C++ checker, preferred when present).
"""

from __future__ import annotations

from typing import Any

from pipeline.problems.adapters.base import Adapter, AdapterContext, parse_date, require_text
from pipeline.problems.checkers import compare_fields
from pipeline.problems.errors import RowError


def compose_statement(row: dict[str, Any]) -> str:
    """The statement as Codeforces shows it: legend, Input, Output, Examples, Note."""
    parts = [require_text(row, "description").strip()]
    for heading, key in (
        ("Input", "input_format"),
        ("Output", "output_format"),
        ("Interaction", "interaction_format"),
    ):
        text = require_text(row, key).strip()
        if text:
            parts.append(f"{heading}\n{text}")
    examples = row.get("examples") or []
    if examples:
        blocks = [f"Input\n{e.get('input', '')}\nOutput\n{e.get('output', '')}" for e in examples]
        parts.append("Examples\n" + "\n".join(blocks))
    note = require_text(row, "note").strip()
    if note:
        parts.append(f"Note\n{note}")
    return "\n\n".join(p for p in parts if p)


class CodeforcesAdapter(Adapter):
    name = "codeforces"
    default_hub_id = "open-r1/codeforces"
    required_columns = ("id", "description", "official_tests")

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row["id"])

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        if (row.get("input_mode") or "stdio") != "stdio":
            raise RowError(
                "input_mode", f"{row.get('input_mode')!r} I/O is not supported (stdio only)"
            )
        if (row.get("interaction_format") or "").strip():
            raise RowError("interaction_format", "interactive problems are not supported")
        tests = [
            {"input": t.get("input"), "output": t.get("output")}
            for t in (row.get("official_tests") or [])
        ]
        if tests and row.get("official_tests_complete") is False:
            ctx.notes["official_tests incomplete (kept the published subset)"] += 1
        rating = row.get("rating")
        return {
            "title": str(row.get("title") or ""),
            "statement": compose_statement(row),
            "test_mode": "stdio",
            "tests": tests,
            "time_limit_s": row.get("time_limit"),
            "memory_limit_mb": row.get("memory_limit"),
            **compare_fields(row.get("checker"), row.get("generated_checker")),
            "contest_date": parse_date(row.get("contest_start"), ctx, "contest_start"),
            "difficulty": str(int(rating)) if rating else None,
            "tags": [str(t) for t in (row.get("tags") or [])],
            "license": "cc-by-4.0",
        }
