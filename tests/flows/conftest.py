"""Flow tests run against a real ephemeral Prefect server (prefect_test_harness: a temporary
SQLite database behind a local API server) and the real Docker sandbox."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.flows.flows_helpers import REPO, SMALL_PROBLEMS


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"  # no telemetry, also from the server
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield str(PREFECT_API_URL.value())


@pytest.fixture(scope="session")
def small_bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundled-small")
    for name in SMALL_PROBLEMS:
        shutil.copytree(REPO / "data" / "bundled" / name, root / name)
    return root
