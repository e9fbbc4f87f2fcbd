"""DPO rows: an instance + a chosen verifier response (picks the correct candidate)
and a rejected one (does not). `chosen_answer` stays the gold letter, as in Aletheia."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa

from schemas.instance import INSTANCE_FIELDS, Instance


class DPORow(Instance):
    prompt: str  # the verifier prompt (question + candidates A-E + answer format)
    chosen: str  # a real verifier response whose last \boxed{} is the gold letter
    rejected: str  # a real verifier response that picks another letter or no valid one
    rejected_answer: str  # the letter it picked, or "invalid"
    judge_model: str  # the model that wrote `chosen`
    rejected_judge_model: str  # the model that wrote `rejected`
    prompt_variant: Literal["think", "no_think"]


DPO_SCHEMA = pa.schema(
    [
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("chosen", pa.string(), nullable=False),
        pa.field("rejected", pa.string(), nullable=False),
        pa.field("rejected_answer", pa.string(), nullable=False),
        pa.field("judge_model", pa.string(), nullable=False),
        pa.field("rejected_judge_model", pa.string(), nullable=False),
        pa.field("prompt_variant", pa.string(), nullable=False),
    ]
    + INSTANCE_FIELDS
)
