"""Verifier evaluation on Heldout, Strong, Hard and Adv: Aletheia's protocol (protocol.py) first,
our vote-share metrics (metrics.py) second; from a model or from a responses file (responses.py).

`evaluate` is imported on first use, so importing a submodule (`pipeline.evaluate.config`)
does not load torch and transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"EvalConfig": "config", "evaluate": "run"}

__all__ = list(_WHERE)  # the lazy names above


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'pipeline.evaluate' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pipeline.evaluate.{_WHERE[name]}"), name)
