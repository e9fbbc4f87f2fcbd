"""The judge's config sections: `JudgeConfig` (a run config's `judge:`, and the adversarial
sets' re-judge) and `SandboxSection` (where programs are judged: a run config's `sandbox:`,
and RLVR training's and policy evaluation's)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.errors import UserError

# The engines as a config may name them. Spelt here, not imported from sandbox.engines: loading a
# config must not load the sandbox package (tests/test_config_homes.py); a test holds the two
# spellings equal (tests/test_config_homes.py::test_config_engine_names_are_the_sandboxs).
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
    url: str | list[str] | None = Field(
        None,
        description="http: the `python -m sandbox serve` server, or a list of them (tried in "
        "turn); None = $ALETHEIA_SANDBOX_URL.",
    )
    token_file: str | None = Field(
        None,
        description="http: a file whose first line is the servers' token; None = the variable "
        "named by token_env.",
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
        for name in ("url", "token_file"):
            if getattr(self, name) is not None and self.engine != "http":
                raise ValueError(
                    f"sandbox.{name}: only the http engine has a server; remove it or set "
                    f"engine: http (engine is {self.engine!r})"
                )
        return self

    def with_engine(self, engine: str | None) -> SandboxSection:
        """This section with another engine (a CLI's `--engine`); None keeps it."""
        if engine is None or engine == self.engine:
            return self
        return type(self).model_validate({**self.model_dump(exclude_unset=True), "engine": engine})

    def overridden(
        self,
        engine: str | None = None,
        url: list[str] | None = None,
        token_file: str | Path | None = None,
    ) -> SandboxSection:
        """This section with a command's --engine / --url / --token-file over it; a --url alone
        means the http engine."""
        engine = engine or ("http" if url else None)
        changes: dict[str, Any] = {}
        if url:
            changes["url"] = url[0] if len(url) == 1 else list(url)
        if token_file is not None:
            changes["token_file"] = str(token_file)
        if not changes:
            return self.with_engine(engine)
        raw = {**self.model_dump(exclude_unset=True), **changes, "engine": engine or self.engine}
        return type(self).model_validate(raw)

    def token(self) -> str | None:
        """The http engine's token: the first line of token_file, else $token_env."""
        if self.token_file is not None:
            path = Path(self.token_file).expanduser()
            try:
                first = path.read_text(encoding="utf-8").splitlines()[:1]
            except OSError as e:
                raise UserError(
                    f"sandbox token file {self.token_file}: {e.strerror or e} (--token-file / "
                    "sandbox.token_file: a file whose first line is the token)"
                ) from e
            return (first[0].strip() if first else "") or None
        return os.environ.get(self.token_env) or None

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
                    f"sandbox engine http needs the server's address: --url URL, sandbox.url "
                    f"in the config, or ${URL_ENV}"
                )
            token = self.token()
            if not token:
                raise UserError(
                    f"sandbox engine http needs the servers' token: --token-file FILE, "
                    f"sandbox.token_file in the config, or ${self.token_env}"
                )
            base = {"url": url, "token": token}
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
