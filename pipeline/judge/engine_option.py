"""`--engine`, `--url`, `--token-file`: the options every command that judges programs takes (one
definition, one help), as `python -m sandbox` takes them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.common.stage_cli import Extra, Given

# Not from pipeline.judge.interface: that loads pyarrow and numpy, on every help page.
from sandbox.engines import EngineName

EngineOpt = Annotated[
    EngineName | None,
    typer.Option(
        "--engine",
        metavar="<engine>",  # the choices are in the help; `<docker|process|http>` was cut at 80
        help="where programs are judged: docker (containers, the default), process (no "
        "container runtime) or http (a `python -m sandbox serve` server: --url, sandbox.url or "
        "$ALETHEIA_SANDBOX_URL); overrides the config's sandbox.engine",
    ),
]
UrlOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--url",
        metavar="URL",
        help="http engine: a `python -m sandbox serve` address (repeat for several; tried in "
        "turn); alone it means --engine http; overrides sandbox.url",
    ),
]
TokenFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        dir_okay=False,
        help="http engine: a file whose first line is the servers' token (default: "
        "sandbox.token_file, else $ALETHEIA_SANDBOX_TOKEN)",
    ),
]

# The same three on a generated stage command (pipeline/common/stage_cli.py), after its flags.
ENGINE_OPTIONS = {
    "engine": Extra(EngineOpt, None, last=True),
    "url": Extra(UrlOpt, None, last=True),
    "token_file": Extra(TokenFileOpt, None, last=True),
}


def sandbox_given(given: Given, base: Any = None) -> Any:
    """The sandbox section (`base`, else the command's `SandboxSection` flags) with
    `--engine`, `--url` and `--token-file` over it."""
    from pipeline.judge.config import SandboxSection

    section = base if base is not None else given.config(SandboxSection)
    return section.overridden(*(given.extras[k] for k in ENGINE_OPTIONS))
