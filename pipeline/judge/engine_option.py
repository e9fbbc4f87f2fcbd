"""`--engine`: the option every command that judges programs takes (one definition, one help)."""

from __future__ import annotations

from typing import Annotated

import typer

# Not from pipeline.judge.interface: that loads pyarrow and numpy, on every help page.
from sandbox.engines import EngineName

EngineOpt = Annotated[
    EngineName | None,
    typer.Option(
        "--engine",
        metavar="<engine>",  # the choices are in the help; `<docker|process|http>` was cut at 80
        help="where programs are judged: docker (containers, the default), process (no "
        "container runtime) or http (a `python -m sandbox serve` server at sandbox.url or "
        "$ALETHEIA_SANDBOX_URL); overrides the config's sandbox.engine",
    ),
]
