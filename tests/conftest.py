"""Shared fixtures. Sandbox tests run a real Docker engine (make test starts one)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Tests talk only to 127.0.0.1: a Hub name that is not cached fails at once instead of
# retrying the network for a minute (e.g. assembly's default tokenizer).
os.environ.setdefault("HF_HUB_OFFLINE", "1")


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
