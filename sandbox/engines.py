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

Engines (and their options):
  docker   a pool of locked-down containers (`sandbox.client.SandboxClient`); the default.
           pool_size, image, cache, cache_path, selftest, max_attempts, ...
  process  the same runner under bubblewrap on the host: namespaces, a cgroup per slot,
           seccomp (`sandbox.process.engine.ProcessEngine`), for machines without a container
           runtime. pool_size, cache, cache_path, selftest, cgroups, pch, extra_ro_binds, ...
  http     a client of `python -m sandbox serve` on other machines
           (`sandbox.http.client.HttpEngine`). url (one or a list), token (default
           $ALETHEIA_SANDBOX_TOKEN), batch_size, parallel, cache; pool_size and selftest are
           accepted and ignored (the servers' pools decide).

An engine that cannot run here raises `EngineUnavailable` with one line (permanent): the Docker
daemon does not answer, no bwrap or no isolation, no http server answers or one refuses the token.
A pool that could not be brought up this time raises `sandbox.pool.SandboxError` (worth a retry).

`probe_engine(name, **options)` reaches the engine without starting it (the Docker daemon and the
image; bwrap, cgroups and a throw-away sandbox; each server's /v1/version with the token) in about
a second: it raises the same EngineUnavailable, or returns the languages the engine refuses here
and its degradations. The build's preflight and every command that judges call it first.
Engines may also offer `selftest_report`, `unavailable` (language -> why it is refused here, per
request) and `describe()`; `python -m sandbox selftest` prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self, runtime_checkable

from sandbox.models import JudgeRequest, JudgeResult

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


class EngineUnavailable(RuntimeError):
    """The engine cannot run here; the message is one line saying why and what to do. Not a
    `SandboxError` on purpose: it is permanent (no isolation, no bwrap, a refused token), so
    flows do not retry it as they retry a sandbox hiccup."""


def open_engine(engine: str = "docker", **options: Any) -> JudgeEngine:
    """Open a judge engine by name; `options` are the engine's own (see the module doc)."""
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


@dataclass
class EngineProbe:
    """What `probe_engine` found: the engine can run; these languages are refused here (language
    -> why), and these degradations hold (one line each)."""

    engine: str
    unavailable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def probe_engine(engine: str = "docker", **options: Any) -> EngineProbe:
    """Reach `engine` with `options` (those of `open_engine`) without starting it; raises
    EngineUnavailable, one line, when it cannot run here."""
    if engine == "docker":
        from sandbox.dockerd import probe

        return probe(**options)
    if engine == "process":
        from sandbox.process.engine import probe as probe_process

        return probe_process(**options)
    if engine == "http":
        from sandbox.http.versions import probe as probe_http

        return probe_http(**options)
    raise EngineUnavailable(
        f"unknown sandbox engine {engine!r}: choose one of {', '.join(ENGINES)}"
    )
