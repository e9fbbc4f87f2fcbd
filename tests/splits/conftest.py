"""Fixtures for the split tests; the planted problems live in split_fixtures.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from split_fixtures import planted_problems

from pipeline.common.parquet import write_parquet
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table


@pytest.fixture
def planted_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "problems.parquet"
    write_parquet(models_to_table(planted_problems(), PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    return path
