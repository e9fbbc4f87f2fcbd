"""Verifier prompts, boxed-answer parsing, response sampling and chosen/rejected pairing."""

from pipeline.instances.dpo.parse import INVALID, parse_boxed_answer
from pipeline.instances.dpo.prompt import build_verifier_messages, build_verifier_prompt

__all__ = ["INVALID", "build_verifier_messages", "build_verifier_prompt", "parse_boxed_answer"]
