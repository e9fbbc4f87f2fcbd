"""Problems with tests, split assignments and Train-Questions (docs/architecture.md, "Tables")."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
from pydantic import Field, model_validator

from schemas.common import Language, Record, TestMode
from schemas.tables import SchemaError, validate_table


class TestCase(Record):
    """stdio mode: `input` -> expected `output`. function mode: `code` run after the candidate."""

    __test__ = False  # not a pytest class

    input: str | None = None
    output: str | None = None
    code: str | None = None


class Solution(Record):
    language: Language
    code: str
    correct: bool


class Problem(Record):
    problem_id: str  # stable: hash of source + source_id (see problem_id_for)
    source: str
    source_id: str
    title: str = ""
    statement: str  # the full statement as the source has it
    prompt_statement: str = ""  # normalised for the verifier prompt (sample I/O may be cut)
    test_mode: TestMode
    tests: list[TestCase]
    entry_point: str | None = None  # function mode: the function the tests call
    starter_code: str | None = None
    time_limit_s: float = 2.0
    memory_limit_mb: int = 256
    compare_mode: str = "tokens"  # tokens | exact | float | checker
    float_abs_tol: float | None = None
    float_rel_tol: float | None = None
    checker: str | None = None  # Python checker source for compare_mode == "checker"
    contest_date: dt.date | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    solutions: list[Solution] = Field(default_factory=list)
    license: str | None = None
    source_split: str | None = None  # the source's own split (MBPP: prompt/test/validation/train)

    @model_validator(mode="after")
    def _tests_match_mode(self) -> Problem:
        for i, t in enumerate(self.tests):
            if self.test_mode == "stdio" and (t.input is None or t.output is None):
                raise ValueError(f"tests[{i}]: stdio tests need both input and output")
            if self.test_mode == "function" and not t.code:
                raise ValueError(f"tests[{i}]: function tests need code")
        return self


_TEST_TYPE = pa.struct(
    [pa.field("input", pa.string()), pa.field("output", pa.string()), pa.field("code", pa.string())]
)
_SOLUTION_TYPE = pa.struct(
    [
        pa.field("language", pa.string(), nullable=False),
        pa.field("code", pa.string(), nullable=False),
        pa.field("correct", pa.bool_(), nullable=False),
    ]
)

PROBLEM_SCHEMA = pa.schema(
    [
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_id", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("statement", pa.string(), nullable=False),
        pa.field("prompt_statement", pa.string(), nullable=False),
        pa.field("test_mode", pa.string(), nullable=False),
        pa.field("tests", pa.list_(_TEST_TYPE), nullable=False),
        pa.field("entry_point", pa.string()),
        pa.field("starter_code", pa.string()),
        pa.field("time_limit_s", pa.float64(), nullable=False),
        pa.field("memory_limit_mb", pa.int32(), nullable=False),
        pa.field("compare_mode", pa.string(), nullable=False),
        pa.field("float_abs_tol", pa.float64()),
        pa.field("float_rel_tol", pa.float64()),
        pa.field("checker", pa.string()),
        pa.field("contest_date", pa.date32()),
        pa.field("difficulty", pa.string()),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
        pa.field("solutions", pa.list_(_SOLUTION_TYPE), nullable=False),
        pa.field("license", pa.string()),
        pa.field("source_split", pa.string()),
    ]
)

# One row per problem: which cluster it fell in and which split it went to.
SPLIT_ASSIGNMENT_SCHEMA = pa.schema(
    [
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("cluster_id", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),  # train | heldout | dropped
        pa.field("reason", pa.string()),  # why dropped (decontamination, date cut, ...)
    ]
)

# The problem columns that decide a verdict: everything the judge's request builder reads
# (pipeline/judge/interface.py). Every table a judge is built from carries all of them.
_JUDGE_TESTS = ("test_mode", "tests")
_JUDGE_LIMITS = ("time_limit_s", "memory_limit_mb")
_JUDGE_COMPARISON = ("compare_mode", "float_abs_tol", "float_rel_tol", "checker")
JUDGE_FIELDS: tuple[str, ...] = (*_JUDGE_TESTS, *_JUDGE_LIMITS, *_JUDGE_COMPARISON)

# Train-Questions: each unique problem of Train once, for on-policy sampling and RLVR. Its
# columns are the problem's own (same types, taken from PROBLEM_SCHEMA so the two cannot
# drift apart) plus `query`, the statement the policy is shown. It carries every judge field,
# so RLVR rewards judge a program exactly as the judge stage does.
#
# Schema versions (in the Parquet metadata, `aletheia.schema_version`):
#   1  problem ids, query, tests and limits, no comparison (files without the metadata)
#   2  + compare_mode, float_abs_tol, float_rel_tol, checker
# A version-1 file is read (see `train_questions_table`) only when every row is a
# function-mode problem: the sandbox's function mode runs the tests' asserts and never
# compares output, so the comparison columns cannot change a verdict and get the problem
# defaults (tokens, no tolerances, no checker). A version-1 file with a stdio row is an error.
TRAIN_QUESTIONS_VERSION = 2
_TRAIN_QUESTIONS_NEW_IN_2 = _JUDGE_COMPARISON
TRAIN_QUESTIONS_SCHEMA = pa.schema(
    [
        *(PROBLEM_SCHEMA.field(n) for n in ("problem_id", "source", "source_id", "title")),
        pa.field("query", pa.string(), nullable=False),
        *(
            PROBLEM_SCHEMA.field(n)
            for n in (
                *_JUDGE_TESTS,
                "entry_point",
                "starter_code",
                *_JUDGE_LIMITS,
                *_JUDGE_COMPARISON,
                "contest_date",
                "difficulty",
                "license",
            )
        ),
    ],
    metadata={
        b"aletheia.schema": b"train_questions",
        b"aletheia.schema_version": str(TRAIN_QUESTIONS_VERSION).encode(),
    },
)


def train_question_row(problem: dict[str, Any], query: str) -> dict[str, Any]:
    """One Train-Questions row from a problem's columns (a PROBLEM_SCHEMA row or a Problem's
    dump) and the statement the policy is shown: the one place such a row is made."""
    return {
        f.name: query if f.name == "query" else problem.get(f.name) for f in TRAIN_QUESTIONS_SCHEMA
    }


def train_questions_table(table: pa.Table, name: str = "train_questions") -> pa.Table:
    """A Train-Questions table read from a file, checked and cast to the current schema.

    A version-1 file (no comparison columns) gets the problem defaults when every row is a
    function-mode problem (the comparison cannot enter those verdicts); otherwise it is a
    SchemaError naming the file, the first stdio row and what to do.
    """
    missing = [c for c in _TRAIN_QUESTIONS_NEW_IN_2 if c not in table.column_names]
    if missing and "test_mode" in table.column_names:
        modes = table.column("test_mode").to_pylist()
        stdio = next((i for i, m in enumerate(modes) if m != "function"), None)
        if stdio is not None:
            pid = (
                table.column("problem_id")[stdio].as_py()
                if "problem_id" in table.column_names
                else "?"
            )
            raise SchemaError(
                f"{name}: a Train-Questions file of schema version 1 (no {', '.join(missing)}); "
                f"row {stdio} (problem_id={pid}) is a {modes[stdio]} problem, whose verdicts "
                f"depend on its comparison: rebuild the file with this version (the splits "
                f"stage, `aletheia problems split`)"
            )
        defaults = {"compare_mode": "tokens"}
        for column in missing:
            field = TRAIN_QUESTIONS_SCHEMA.field(column)
            value = defaults.get(column)
            table = table.append_column(field, pa.array([value] * table.num_rows, field.type))
    return validate_table(table, TRAIN_QUESTIONS_SCHEMA, name=name)
