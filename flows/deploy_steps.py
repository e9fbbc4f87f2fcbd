"""The deployments' pull step: enter the checkout named by ALETHEIA_HOME, or say why not.

Prefect's own `set_working_directory` step, given `{{ $ALETHEIA_HOME }}` on a worker where
the variable is unset, called `os.chdir("")` and the flow run crashed with
`FileNotFoundError: [Errno 2] No such file or directory: ''`, which never names the
variable. This step reads it on the worker, when the flow run starts, and says what to set.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import UserError, near_path


class CheckoutError(UserError):
    """The worker cannot find the repository checkout the flow runs from."""


def enter_checkout(variable: str = "ALETHEIA_HOME") -> dict[str, str]:
    """cd into the checkout `$variable` names (it must hold prefect.yaml); Prefect pull step."""
    value = os.environ.get(variable, "").strip()
    fix = (
        f"export {variable}=<the checkout's absolute path> on this worker before "
        "`prefect worker start` (scripts/demo.sh does it; docs/scale.md)"
    )
    if not value:
        raise CheckoutError(f"{variable} is not set on this worker: {fix}")
    home = Path(value).expanduser()
    if not home.is_dir():
        raise CheckoutError(f"{variable}={value}: no such folder{near_path(home)}; {fix}")
    if not (home / "prefect.yaml").is_file():
        raise CheckoutError(
            f"{variable}={value} is not the checkout (no prefect.yaml in it); {fix}"
        )
    os.chdir(home)
    return {"directory": str(home.resolve())}
