"""The training stage: verifier trainers (GRPO, DPO, SFT) and code-policy RLVR with TRL.

`train` is imported on first use, so importing a submodule (`pipeline.train.config` for
`aletheia train --help` or a config check) does not load torch, transformers and TRL.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"TrainConfig": "config", "train": "run"}

__all__ = list(_WHERE)  # the lazy names above


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'pipeline.train' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pipeline.train.{_WHERE[name]}"), name)
