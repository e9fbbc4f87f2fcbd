"""Rows <-> Arrow tables, always through an explicit schema."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import pyarrow as pa
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


class SchemaError(ValueError):
    """A table does not match the schema it claims; the message names column and row."""


def models_to_table(rows: Iterable[BaseModel], schema: pa.Schema) -> pa.Table:
    """Build a table from models, with exactly the schema's columns in its order."""
    dicts = [r.model_dump(mode="python") for r in rows]
    return pa.Table.from_pylist(dicts, schema=schema) if dicts else schema.empty_table()


def table_to_models(table: pa.Table, model: type[M]) -> list[M]:
    names = set(model.model_fields)
    return [
        model.model_validate({k: v for k, v in r.items() if k in names}) for r in table.to_pylist()
    ]


def validate_table(table: pa.Table, schema: pa.Schema, name: str = "table") -> pa.Table:
    """Check columns, types and non-null fields; return the table cast to `schema`.

    Raises SchemaError naming the column (and first offending row for nulls).
    """
    missing = [f.name for f in schema if f.name not in table.column_names]
    if missing:
        raise SchemaError(f"{name}: missing column(s) {missing}")
    table = table.select(schema.names)
    for f in schema:
        col = table.column(f.name)
        if not f.nullable and col.null_count:
            first = next(i for i, v in enumerate(col.is_null().to_pylist()) if v)
            raise SchemaError(f"{name}: column {f.name!r} is null at row {first}")
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaError(f"{name}: cannot cast to schema: {e}") from e


def column_names(schema: pa.Schema) -> Sequence[str]:
    return list(schema.names)
