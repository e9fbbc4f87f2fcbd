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

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self, get_args, runtime_checkable

from sandbox.models import JudgeRequest, JudgeResult

# The engines, spelt once for the sandbox: each name (`--engine` of `python -m sandbox` and of
# every `aletheia` command that judges), the class `open_engine` builds and the function
# `probe_engine` calls, as "module:name" so choosing one engine never imports another's client
# (docker-py, httpx). Everything that names the engines takes them from here: the run
# config's `sandbox.engine` (pipeline/judge/config.py), `--engine` of every command.
EngineName = Literal["docker", "process", "http"]
_ENGINES: dict[str, tuple[str, str]] = {
    "docker": ("sandbox.client:SandboxClient", "sandbox.dockerd:probe"),
    "process": ("sandbox.process.engine:ProcessEngine", "sandbox.process.engine:probe"),
    "http": ("sandbox.http.client:HttpEngine", "sandbox.http.versions:probe"),
}
ENGINES: tuple[str, ...] = get_args(EngineName)
assert ENGINES == tuple(_ENGINES), "EngineName and the engine table name the same engines"
# The engines a `python -m sandbox serve` server can put behind HTTP: those that run here.
LOCAL_ENGINES: tuple[str, ...] = tuple(e for e in ENGINES if e != "http")


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


class EngineBase(ABC):
    """What every engine shares: `judge` (results in input order) over its own `judge_iter`
    (results as they finish), and the context manager over its `close`. The local pool
    (`sandbox.pool.RunnerPool`: docker and process) and the http client derive from it."""

    engine_name: str = "engine"

    @property
    @abstractmethod
    def stamp(self) -> str: ...

    @abstractmethod
    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]: ...

    @abstractmethod
    def close(self) -> None: ...

    def judge(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> list[JudgeResult]:
        """Judge all requests; results in input order."""
        out: dict[int, JudgeResult] = {}
        for index, result in self.judge_iter(requests, progress=progress, use_cache=use_cache):
            out[index] = result
        return [out[i] for i in range(len(out))]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EngineUnavailable(RuntimeError):
    """The engine cannot run here; the message is one line saying why and what to do. Not a
    `SandboxError` on purpose: it is permanent (no isolation, no bwrap, a refused token), so
    flows do not retry it as they retry a sandbox hiccup."""

    exit_code = 3  # what a command that meets it exits with (`python -m sandbox`, `aletheia`)


def _load(engine: str, which: int) -> Any:
    if engine not in _ENGINES:
        raise EngineUnavailable(
            f"unknown sandbox engine {engine!r}: choose one of {', '.join(ENGINES)}"
        )
    module, _, name = _ENGINES[engine][which].partition(":")
    return getattr(importlib.import_module(module), name)


def open_engine(engine: str = "docker", **options: Any) -> JudgeEngine:
    """Open a judge engine by name; `options` are the engine's own (see the module doc)."""
    return _load(engine, 0)(**options)  # type: ignore[no-any-return]


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
    return _load(engine, 1)(**options)  # type: ignore[no-any-return]
