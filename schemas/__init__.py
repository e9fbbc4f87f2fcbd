"""Arrow schemas and pydantic models: the single source of truth for every table.

This package imports nothing of ours. Every Parquet file the pipeline writes is
written with one of the schemas below, so column names, types and nullability
are fixed in one place.
"""

from schemas.candidate import CANDIDATE_SCHEMA, Candidate, Origin, Tier
from schemas.common import LANGUAGES, QUARANTINE_SCHEMA, Language, Quarantine, TestMode
from schemas.dpo import DPO_SCHEMA, DPORow
from schemas.instance import ANSWER_LETTERS, INSTANCE_SCHEMA, Instance
from schemas.problem import (
    PROBLEM_SCHEMA,
    SPLIT_ASSIGNMENT_SCHEMA,
    TRAIN_QUESTIONS_SCHEMA,
    Problem,
    Solution,
    TestCase,
)
from schemas.tables import models_to_table, table_to_models, validate_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA, VERDICT_FIELDS, Verdict

__all__ = [
    "ANSWER_LETTERS",
    "CANDIDATE_SCHEMA",
    "DPO_SCHEMA",
    "INSTANCE_SCHEMA",
    "JUDGED_CANDIDATE_SCHEMA",
    "LANGUAGES",
    "PROBLEM_SCHEMA",
    "QUARANTINE_SCHEMA",
    "SPLIT_ASSIGNMENT_SCHEMA",
    "TRAIN_QUESTIONS_SCHEMA",
    "VERDICT_FIELDS",
    "Candidate",
    "DPORow",
    "Instance",
    "Language",
    "Origin",
    "Problem",
    "Quarantine",
    "Solution",
    "TestCase",
    "TestMode",
    "Tier",
    "Verdict",
    "models_to_table",
    "table_to_models",
    "validate_table",
]
