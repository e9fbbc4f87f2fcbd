"""Fixtures for the evaluation tests: the same dataset folders the training tests use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train.rowgen import write_dataset


@pytest.fixture(scope="session")
def eval_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("aletheia-eval-dataset"))
