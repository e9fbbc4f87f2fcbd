"""Verifier evaluation: K sampled responses per instance on Heldout, Strong, Hard and Adv."""

from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.run import evaluate

__all__ = ["EvalConfig", "evaluate"]
