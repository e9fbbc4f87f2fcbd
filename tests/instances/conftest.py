"""Assembly here uses the default tokenizer name, which is not cached offline."""

import pytest


@pytest.fixture(autouse=True)
def _offline(hub_offline: None) -> None:
    """Every test in this folder runs with the Hub offline (see tests/conftest.py)."""
