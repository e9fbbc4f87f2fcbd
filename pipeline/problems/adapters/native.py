"""Rows already in our Problem schema (our own JSONL / Parquet, and the bundled set)."""

from __future__ import annotations

from typing import Any

from pipeline.problems.adapters.base import Adapter, AdapterContext
from schemas.problem import Problem

_FIELDS = set(Problem.model_fields)


class NativeAdapter(Adapter):
    """`jsonl:PATH` / `parquet:PATH`: each row is a Problem; `problem_id` is filled in if absent."""

    name = "native"
    required_columns = ("source", "source_id", "statement", "test_mode", "tests")

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row.get("source_id") or f"{ctx.split}/{index}")

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        # Unknown columns reach Problem's validator (extra="forbid") and quarantine the row.
        fields = {k: v for k, v in row.items() if v is not None or k in _FIELDS}
        if isinstance(fields.get("tests"), list):  # parquet gives every struct key; drop nulls
            fields["tests"] = [
                {k: v for k, v in t.items() if v is not None} for t in fields["tests"]
            ]
        return fields


class BundledAdapter(NativeAdapter):
    """`bundled`: the starter set shipped in data/bundled (see pipeline/problems/bundled.py)."""

    name = "bundled"
    required_columns = ()
