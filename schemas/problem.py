"""Problems with tests, split assignments and Train-Questions (docs/architecture.md, "Tables")."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from pydantic import Field, model_validator

from schemas.common import Language, Record, TestMode


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

# Train-Questions: each unique problem of Train once, for on-policy sampling and RLVR. Its
# columns are the problem's own (same types, taken from PROBLEM_SCHEMA so the two cannot
# drift apart) plus `query`, the statement the policy is shown.
TRAIN_QUESTIONS_SCHEMA = pa.schema(
    [
        *(PROBLEM_SCHEMA.field(n) for n in ("problem_id", "source", "source_id", "title")),
        pa.field("query", pa.string(), nullable=False),
        *(
            PROBLEM_SCHEMA.field(n)
            for n in (
                "test_mode",
                "tests",
                "entry_point",
                "starter_code",
                "time_limit_s",
                "memory_limit_mb",
                "contest_date",
                "difficulty",
                "license",
            )
        ),
    ]
)
