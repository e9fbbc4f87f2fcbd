"""deepmind/code_contests -> Problem.

Published layout (one row per problem): `name`, `description`, `public_tests`,
`private_tests`, `generated_tests` (each `{input: [str], output: [str]}`), `source`
(enum int), `difficulty` (enum int), `solutions` / `incorrect_solutions`
(`{language: [int], solution: [str]}`), `cf_contest_id`, `cf_index`, `cf_rating`,
`cf_tags`, `time_limit` (`{seconds, nanos}` or null), `memory_limit_bytes`,
`input_file` / `output_file` (non-empty means file I/O instead of stdio).
CodeContests+ rows in this layout also carry `checker`: the problem's testlib C++ checker
(empty for problems judged by plain comparison), handed to the sandbox as compare mode `testlib`.
"""

from __future__ import annotations

from typing import Any

from pipeline.problems.adapters.base import Adapter, AdapterContext, cap_solutions, require_text
from pipeline.problems.checkers import compare_fields
from pipeline.problems.errors import RowError

# ContestSolution.Language in the dataset's proto. PYTHON is Python 2: the sandbox runs
# Python 3 only, so those are skipped (and counted), like UNKNOWN_LANGUAGE.
LANGUAGE_CODES: dict[int, str] = {0: "unknown", 1: "python2", 2: "cpp", 3: "python", 4: "java"}
SUPPORTED = {"python", "cpp", "java"}

DIFFICULTIES = {
    0: None,
    1: "easy",
    2: "medium",
    3: "hard",
    4: "harder",
    5: "hardest",
    6: "external",
    **{7 + i: letter for i, letter in enumerate("ABCDEFGHIJKLMNOPQRSTUV")},
}
SOURCES = {
    0: "unknown",
    1: "codechef",
    2: "codeforces",
    3: "hackerearth",
    4: "codejam",
    5: "atcoder",
    6: "aizu",
}


def _tests(row: dict[str, Any], name: str) -> list[dict[str, Any]]:
    block = row.get(name)
    if block is None:
        return []
    if not isinstance(block, dict) or "input" not in block or "output" not in block:
        raise RowError(name, "expected {input: [...], output: [...]}")
    inputs, outputs = block["input"] or [], block["output"] or []
    if len(inputs) != len(outputs):
        raise RowError(name, f"{len(inputs)} inputs but {len(outputs)} outputs")
    return [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)]


def _solutions(row: dict[str, Any], name: str, correct: bool, ctx: AdapterContext) -> list[dict]:
    block = row.get(name)
    if not block:
        return []
    langs, codes = block.get("language") or [], block.get("solution") or []
    if len(langs) != len(codes):
        raise RowError(name, f"{len(langs)} language codes but {len(codes)} solutions")
    out = []
    for code_id, code in zip(langs, codes, strict=True):
        lang = LANGUAGE_CODES.get(int(code_id), f"code-{code_id}")
        if lang not in SUPPORTED:
            ctx.skipped_solutions[lang] += 1
            continue
        out.append({"language": lang, "code": code, "correct": correct})
    return out


def _checker(row: dict[str, Any]) -> str | None:
    checker = row.get("checker")
    if checker is not None and not isinstance(checker, str):
        raise RowError(
            "checker", f"expected the checker's C++ source text, got {type(checker).__name__}"
        )
    return checker


class CodeContestsAdapter(Adapter):
    name = "code_contests"
    default_hub_id = "deepmind/code_contests"
    required_columns = ("name", "description", "public_tests", "private_tests", "solutions")

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row.get("name") or f"{ctx.split}/{index}")

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        if row.get("input_file") or row.get("output_file"):
            raise RowError("input_file", "file I/O problems are not supported (stdio only)")
        tests = _tests(row, "public_tests") + _tests(row, "private_tests")
        if ctx.config.include_generated_tests:
            tests += _tests(row, "generated_tests")
        tl = row.get("time_limit")
        time_limit = None
        if tl:
            time_limit = float(tl.get("seconds") or 0) + float(tl.get("nanos") or 0) / 1e9
        mem = row.get("memory_limit_bytes")
        solutions = _solutions(row, "solutions", True, ctx) + _solutions(
            row, "incorrect_solutions", False, ctx
        )
        tags = list(row.get("cf_tags") or [])
        src = SOURCES.get(row.get("source") or 0, "unknown")
        if src != "unknown":
            tags.append(f"platform:{src}")
        return {
            "title": row_id,
            "statement": require_text(row, "description"),
            "test_mode": "stdio",
            "tests": tests,
            "time_limit_s": time_limit or None,  # 0 / null = not given
            "memory_limit_mb": (int(mem) / 2**20) if mem else None,
            "difficulty": DIFFICULTIES.get(row.get("difficulty") or 0),
            "tags": tags,
            "solutions": cap_solutions(solutions, ctx),
            "license": "cc-by-4.0",
            **compare_fields(_checker(row)),
        }
