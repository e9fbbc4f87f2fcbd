"""Shared fixtures. Sandbox tests run a real Docker engine (make test starts one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hugging Face Hub in offline mode for one test: a Hub name that is not cached
    (assembly's default tokenizer) fails at once instead of retrying the network for a
    minute. Not session-wide: the publish tests talk to a local Hub server."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


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
