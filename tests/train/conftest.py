"""Fixtures for the training tests: schema-valid dataset folders (see rowgen.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train.rowgen import write_dataset


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("aletheia-dataset"))
