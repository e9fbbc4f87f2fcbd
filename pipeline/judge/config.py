"""The judge's config sections: `JudgeConfig` (a run config's `judge:`, and the adversarial
sets' re-judge) and `SandboxSection` (where programs are judged: a run config's `sandbox:`,
and RLVR training's and policy evaluation's)."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.errors import UserError

EngineName = Literal["docker", "process", "http"]
URL_ENV = "ALETHEIA_SANDBOX_URL"  # the http engine's server when the config names none
TOKEN_ENV = "ALETHEIA_SANDBOX_TOKEN"


class SandboxSection(BaseModel):
    """Where programs are judged: a run config's `sandbox:` section (RLVR training and policy
    evaluation have one too). Not part of the build id: every engine gives the same verdicts."""

    model_config = ConfigDict(extra="forbid")

    engine: EngineName = Field(
        "docker",
        description="docker where it runs; process: no container runtime; http: a remote "
        "sandbox server.",
    )
    pool_size: int | None = Field(
        None, ge=1, description="docker / process: programs run at once; None = CPUs."
    )
    image: str | None = Field(
        None,
        description="docker: an image tag or id; None = the current definition, built if missing.",
    )
    url: str | None = Field(
        None,
        description="http: the `python -m sandbox serve` server; None = $ALETHEIA_SANDBOX_URL.",
    )
    token_env: str = Field(
        TOKEN_ENV,
        description="http: the environment variable holding the server's token (a token never "
        "sits in a config: configs are logged, hashed and stored as flow parameters).",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Further engine options, passed to `sandbox.engines.open_engine` as they "
        "are (docker: cache, max_attempts, ...; see each engine).",
    )

    @model_validator(mode="after")
    def _fields_fit_engine(self) -> SandboxSection:
        if self.image is not None and self.engine != "docker":
            raise ValueError(
                f"sandbox.image: only the docker engine runs an image; remove it for engine "
                f"{self.engine!r}"
            )
        if self.url is not None and self.engine != "http":
            raise ValueError(
                f"sandbox.url: only the http engine has a server; remove it or set engine: http "
                f"(engine is {self.engine!r})"
            )
        return self

    def with_engine(self, engine: str | None) -> SandboxSection:
        """This section with another engine (a CLI's `--engine`); None keeps it."""
        if engine is None or engine == self.engine:
            return self
        return type(self).model_validate({**self.model_dump(exclude_unset=True), "engine": engine})

    def engine_options(self) -> dict[str, Any]:
        """The keyword arguments `open_engine(self.engine, ...)` receives."""
        if self.engine == "docker":
            base: dict[str, Any] = {"pool_size": self.pool_size, "image": self.image}
        elif self.engine == "process":
            base = {"pool_size": self.pool_size}
        elif self.engine == "http":
            url = self.url or os.environ.get(URL_ENV)
            if not url:
                raise UserError(
                    f"sandbox engine http needs the server's address: set sandbox.url in the "
                    f"config or {URL_ENV} in the environment"
                )
            base = {"url": url}
            token = os.environ.get(self.token_env)
            if token:
                base["token"] = token
        else:  # an engine this version does not know: open_engine names it
            base = {}
        return {**base, **self.options}


class JudgeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_size: int = Field(
        256,
        ge=1,
        description="Distinct programs judged between two checkpoints (the sandbox is fed as "
        "one stream; this only sets how much a crash can lose).",
    )
    time_limit_scale: float = Field(
        1.0,
        gt=0,
        description="Multiplies every time limit (e.g. 2.0 on slow machines); recorded in "
        "the rows.",
    )
    max_tests: int | None = Field(
        None, ge=1, description="Judge on the first N tests only; None = all."
    )
    progress: bool = Field(
        True, description="Show the stage's progress (display only: not in the build id)."
    )
