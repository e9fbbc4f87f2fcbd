"""Verifier evaluation on Heldout, Strong, Hard and Adv: Aletheia's protocol (protocol.py) first,
our vote-share metrics (metrics.py) second; from a model or from a responses file (responses.py)."""

from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.run import evaluate

__all__ = ["EvalConfig", "evaluate"]
