from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import datasets
import pytest

from tests.publish.hub_double import HubDouble
from tests.publish.synthetic import make_build


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    return make_build(tmp_path / "work")


@pytest.fixture
def hf_offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep huggingface_hub / datasets caches in the test's tmp dir; no Xet (the double has none)."""
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    datasets.disable_progress_bars()
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))


@pytest.fixture
def hub(hf_offline_env: None) -> Iterator[HubDouble]:
    with HubDouble(token="hf_TESTTOKEN_do_not_leak") as h:
        yield h
