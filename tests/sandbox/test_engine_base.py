"""One engine base and one engine table (sandbox/engines.py): `judge` is written once over
each engine's `judge_iter`, and the engine names the config, the CLIs and `open_engine` /
`probe_engine` accept are the table's (the run config restates them: held equal here)."""

from __future__ import annotations

import importlib
import typing
from collections.abc import Iterable, Iterator

import pytest

from sandbox.engines import (
    _ENGINES,
    ENGINES,
    EngineBase,
    EngineUnavailable,
    JudgeEngine,
    open_engine,
    probe_engine,
)
from sandbox.models import JudgeRequest, JudgeResult


class Backwards(EngineBase):
    """Answers in reverse order, as a pool answers whichever program finishes first."""

    closed = False

    @property
    def stamp(self) -> str:
        return "backwards"

    def judge_iter(
        self,
        requests: Iterable[JudgeRequest | dict],
        progress: bool = False,
        use_cache: bool = True,
    ) -> Iterator[tuple[int, JudgeResult]]:
        listed = list(requests)
        for i in reversed(range(len(listed))):
            ok = i % 2
            yield i, JudgeResult(verdict="AC" if ok else "WA", passed=ok, total=1, pass_rate=ok)

    def close(self) -> None:
        self.closed = True


def test_judge_gives_input_order_over_any_judge_iter() -> None:
    with Backwards() as engine:
        results = engine.judge([{} for _ in range(5)])
        assert isinstance(engine, JudgeEngine)
    assert [r.verdict for r in results] == ["WA", "AC", "WA", "AC", "WA"]
    assert engine.closed  # the context manager closes through the engine's own close


def test_every_engine_class_is_on_the_base_and_in_the_table() -> None:
    assert ENGINES == tuple(_ENGINES) == ("docker", "process", "http")
    for name, (opener, prober) in _ENGINES.items():
        module, _, attr = opener.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        assert issubclass(cls, EngineBase) and "judge" not in vars(cls), name  # judge: the base's
        module, _, attr = prober.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), name


def test_the_config_and_the_cli_option_take_the_tables_names() -> None:
    from pipeline.judge.config import SandboxSection

    field = SandboxSection.model_fields["engine"].annotation
    assert typing.get_args(field) == ENGINES
    with pytest.raises(ValueError, match="docker"):
        SandboxSection(engine="podman")  # type: ignore[arg-type]


@pytest.mark.parametrize("call", [open_engine, probe_engine])
def test_an_unknown_engine_is_one_line_naming_the_known_ones(call) -> None:
    with pytest.raises(EngineUnavailable, match="choose one of docker, process, http"):
        call("podman")
