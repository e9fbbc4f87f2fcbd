"""Judge engines: where a program is run, behind one interface.

    from sandbox.engines import open_engine
    with open_engine("docker", pool_size=2) as engine:
        results = engine.judge(requests)                 # same order as the input
        for index, result in engine.judge_iter(requests):  # as they finish
            ...

Every engine takes `JudgeRequest`s and answers `JudgeResult`s with the same verdict semantics;
the caller never needs to know which one it holds. `engine.stamp` names the engine and what
decides its verdicts (the Docker engine: the image id), and is part of every verdict's cache key,
so verdicts of different engines never share a cache entry.

Engines:
  docker   a pool of locked-down containers (`sandbox.client.SandboxClient`); the default
  process  the same runner under Linux namespaces on the host, for machines without a
           container runtime (not yet available in this version: see `open_engine`)
  http     a client of `python -m sandbox serve` on another machine (not yet available)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal, Protocol, Self, runtime_checkable

from sandbox.models import JudgeRequest, JudgeResult
from sandbox.pool import SandboxError

EngineName = Literal["docker", "process", "http"]
ENGINES: tuple[str, ...] = ("docker", "process", "http")


@runtime_checkable
class JudgeEngine(Protocol):
    """What every engine offers (the Docker pool, `SandboxClient`, is the model)."""

    @property
    def stamp(self) -> str:
        """Engine name + what fixes its verdicts (image id, toolchain versions)."""
        ...

    def judge(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> list[JudgeResult]: ...

    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class EngineUnavailable(SandboxError):
    """The engine cannot run here; the message is one line saying why and what to do."""


def open_engine(engine: str = "docker", **options: Any) -> JudgeEngine:
    """Open a judge engine by name; `options` are the engine's own (docker: those of
    `SandboxClient`: pool_size, image, cache, cache_path, ...)."""
    if engine == "docker":
        from sandbox.client import SandboxClient

        return SandboxClient(**options)
    if engine == "process":
        from sandbox.process.engine import ProcessEngine

        return ProcessEngine(**options)
    if engine == "http":
        from sandbox.http.client import HttpEngine

        return HttpEngine(**options)
    raise EngineUnavailable(
        f"unknown sandbox engine {engine!r}: choose one of {', '.join(ENGINES)}"
    )
