"""Small shared vocabularies and the quarantine table."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

Language = Literal["python", "cpp", "java"]
LANGUAGES: tuple[str, ...] = ("python", "cpp", "java")
TestMode = Literal["stdio", "function"]


class Record(BaseModel):
    """Base for every row model: unknown fields are an error, not a silent drop."""

    model_config = ConfigDict(extra="forbid")


class Quarantine(Record):
    """A row that could not be used, with the reason. Nothing is dropped silently."""

    stage: str
    source: str
    source_row_id: str
    field: str | None = None
    reason: str
    raw: str | None = None  # JSON text of the offending row (truncated), for debugging


QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("stage", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("source_row_id", pa.string(), nullable=False),
        pa.field("field", pa.string()),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("raw", pa.string()),
    ]
)
