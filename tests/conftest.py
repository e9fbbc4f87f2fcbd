"""Shared fixtures. Sandbox tests run a real Docker engine (make test starts one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def sandbox_client() -> Iterator[object]:
    """One pool of sandbox containers for the whole session (2 containers: 2 cores here)."""
    from sandbox import SandboxClient

    with SandboxClient(pool_size=2) as client:
        yield client


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer randomly initialised Qwen2 with a tokenizer trained on the fly."""
    from pipeline.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))
