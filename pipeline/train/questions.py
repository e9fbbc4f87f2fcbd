"""The Train-Questions table RLVR trains on, written from a list of problems (the RLVR study's
train split, and the GPU node's own preparation)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.common.parquet import write_parquet
from schemas.problem import TRAIN_QUESTIONS_SCHEMA, Problem, train_question_row


def write_train_questions(problems: list[Problem], data_dir: Path) -> Path:
    """The train split as a Train-Questions table (what RLVR reads); the query is the policy's prompt text."""
    rows = [
        train_question_row(p.model_dump(mode="python"), p.prompt_statement or p.statement)
        for p in problems
    ]
    write_parquet(
        pa.Table.from_pylist(rows, schema=TRAIN_QUESTIONS_SCHEMA),
        data_dir / "train_questions.parquet",
        TRAIN_QUESTIONS_SCHEMA,
    )
    return data_dir
