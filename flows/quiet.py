"""Flow logs that show the pipeline's lines and real problems, not library noise.

Measured on `aletheia ablation` (two demo cells, issue 28): 486 lines, of which 272 were
CPython bytecode, 136 the temporary server's telemetry errors, the rest largely progress
bars and deprecation warnings. The causes, and what is done about each:

- Bytecode: the flows had Prefect's `log_prints`, which patches `print` so that a print to
  `sys.stdout` becomes an INFO record. `dill` (through `datasets`' fingerprint of TRL's
  map functions) finds a function's globals by `dis.dis(...)` into a captured
  `sys.stdout`; the patch took those prints for the task's and logged every instruction
  (and dill saw no globals). No flow sets `log_prints`: their own lines go through the
  run logger, and a library's prints stay where the library sends them.
- Telemetry: a temporary Prefect server (a CLI flow without `PREFECT_API_URL`) sends an
  anonymous heartbeat at start; offline it logs `ERROR ... Failed to send telemetry`
  (or, on a busy SQLite, a `database is locked` traceback), which `flows.runlog` would
  report as the run's first error. `temporary_server_env` turns Prefect's analytics off.
- Progress bars (tqdm: weight loading, the trainers' steps, `datasets` maps) and
  transformers' deprecation warnings and log warnings: `quiet_libraries` at the start of
  every flow. The pipeline's own progress lines (flows/progress.py) are unaffected.

Every value is a default: a variable the user has set (`TQDM_DISABLE=0`,
`TRANSFORMERS_VERBOSITY=info`, `PREFECT_SERVER_ANALYTICS_ENABLED=true`) is kept.
"""

from __future__ import annotations

import os
import sys
import warnings

# A temporary Prefect server reads these from the environment when it starts.
TEMPORARY_SERVER_ENV = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # no telemetry heartbeat, no client analytics
    # 20 s by default, which a busy 2-core machine can miss
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}

# Read by tqdm, huggingface_hub and transformers when they are imported (before any flow
# work: no flow module imports them).
LIBRARY_ENV = {
    "TQDM_DISABLE": "1",  # every tqdm bar: trainers, weight loading, dataset maps
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}

# Deprecation notes about the libraries' own internals (e.g. `is_gradient_checkpointing`
# called by TRL): nothing a user of the pipeline can act on.
_LIBRARY_MODULES = r"(transformers|trl|accelerate|peft)(\.|$)"


def temporary_server_env() -> None:
    """Before a CLI starts a flow on a temporary Prefect server."""
    for name, value in TEMPORARY_SERVER_ENV.items():
        os.environ.setdefault(name, value)


def quiet_libraries() -> None:
    """At the start of a flow: no progress bars, no library deprecation chatter. Where a
    library is already imported (a test session), its own switches are used as well."""
    bars_off = os.environ.setdefault("TQDM_DISABLE", LIBRARY_ENV["TQDM_DISABLE"]) == "1"
    if bars_off:  # TQDM_DISABLE=0 brings every bar back, the Hub's and transformers' too
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    verbosity = os.environ.setdefault(
        "TRANSFORMERS_VERBOSITY", LIBRARY_ENV["TRANSFORMERS_VERBOSITY"]
    )
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=_LIBRARY_MODULES)
    if "huggingface_hub" in sys.modules and os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS") == "1":
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity(hf_logging.get_log_levels_dict().get(verbosity, hf_logging.ERROR))
        if bars_off:
            hf_logging.disable_progress_bar()
