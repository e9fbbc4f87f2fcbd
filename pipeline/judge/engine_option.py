"""`--engine`, `--url`, `--token-file`: the options every command that judges programs takes (one
definition, one help), as `python -m sandbox` takes them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.common.stage_cli import Extra, Given

# Not from pipeline.judge.interface: that loads pyarrow and numpy, on every help page.
from sandbox.engines import EngineName


def _engine_opt(config: bool) -> Any:
    where = (
        "--url, sandbox.url or $ALETHEIA_SANDBOX_URL"
        if config
        else "--url or $ALETHEIA_SANDBOX_URL"
    )
    return Annotated[
        EngineName | None,
        typer.Option(
            "--engine",
            metavar="<engine>",  # the choices are in the help; `<docker|process|htt` / `p>` at 80
            help="where programs are judged: docker (containers, the default), process (no "
            f"container runtime) or http (a `python -m sandbox serve` server: {where})"
            + ("; overrides the config's sandbox.engine" if config else ""),
        ),
    ]


def _url_opt(config: bool) -> Any:
    return Annotated[
        list[str] | None,
        typer.Option(
            "--url",
            metavar="URL",
            help="http engine: a `python -m sandbox serve` address (repeat for several; tried "
            "in turn); alone it means --engine http"
            + ("; overrides sandbox.url" if config else ""),
        ),
    ]


def _token_file_opt(config: bool) -> Any:
    default = (
        "sandbox.token_file, else $ALETHEIA_SANDBOX_TOKEN" if config else "$ALETHEIA_SANDBOX_TOKEN"
    )
    return Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            dir_okay=False,
            help=f"http engine: a file whose first line is the servers' token (default: {default})",
        ),
    ]


# For a command that reads a config with a `sandbox:` section: the flags override it.
EngineOpt = _engine_opt(config=True)
UrlOpt = _url_opt(config=True)
TokenFileOpt = _token_file_opt(config=True)


def engine_options(config: bool) -> dict[str, Extra]:
    """The same three on a generated stage command (pipeline/common/stage_cli.py), after its
    flags; `config`: whether the command reads a config whose `sandbox:` they override (a
    command without one never mentions it)."""
    return {
        "engine": Extra(_engine_opt(config), None, last=True),
        "url": Extra(_url_opt(config), None, last=True),
        "token_file": Extra(_token_file_opt(config), None, last=True),
    }


ENGINE_OPTIONS = engine_options(config=True)


def sandbox_given(given: Given, base: Any = None) -> Any:
    """The sandbox section (`base`, else the run config's with the command's `SandboxSection`
    flags over it, else those flags alone) with `--engine`, `--url` and `--token-file` over
    it."""
    from pipeline.judge.config import SandboxSection

    run = given.run_config()  # --config: the run config's own sandbox section
    if base is not None:
        section = base
    elif run is not None:
        section = given.config(SandboxSection, lambda: run.sandbox)
    else:
        section = given.config(SandboxSection)
    return section.overridden(*(given.extras[k] for k in ENGINE_OPTIONS))
