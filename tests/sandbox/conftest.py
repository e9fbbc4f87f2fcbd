"""Engines for the sandbox suites (see engines_here.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engines_here import ENGINE_PARAMS, open_test_engine


@pytest.fixture(scope="session")
def process_engine() -> Iterator[object]:
    """One pool of process-engine sandboxes for the whole session (2 slots: 2 cores here)."""
    with open_test_engine("process", pool_size=2) as engine:
        yield engine


@pytest.fixture(scope="module", params=ENGINE_PARAMS)
def judge_engine(request: pytest.FixtureRequest) -> object:
    """Each engine in turn: the session's Docker pool, then the session's process pool."""
    if request.param == "docker":
        return request.getfixturevalue("sandbox_client")
    return request.getfixturevalue("process_engine")
