"""Publishing: the Hub folder (card, size-sharded Parquet per config, plots), invariant
re-checks, and one atomic, idempotent, resumable Hub commit per release.

The names below are imported on first use, so importing one submodule (the run config
needs `pipeline.publish.config.PublishConfig`) does not load the Hub client and matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "CONFIGS": "layout",
    "CONFIG_NAMES": "layout",
    "BuildManifest": "layout",
    "CheckConfig": "config",
    "InvariantViolation": "checks",
    "run_checks": "checks",
    "PushResult": "push",
    "push_folder": "push",
    "PublishConfig": "config",
    "build_hub_folder": "stage",
}

__all__ = list(_WHERE)  # the lazy names above


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'pipeline.publish' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pipeline.publish.{_WHERE[name]}"), name)
