"""DPO rows: an instance + a chosen verifier response (picks the correct candidate)
and a rejected one (does not). `chosen_answer` stays the gold letter, as in Aletheia.

`prompt` is the verifier's user turn; `chosen` and `rejected` are whole assistant turns
(the Think pre-fill `<think>\n` included). `chosen_source` says where chosen came from:
`sampled` (a correct response, in Aletheia's construction cut after its first `</think>`
and closed with `\boxed{gold}`), `regenerated` (the same, from the regeneration round
that samples again the instances no judge got right) or `gold_spliced` (no judge was right
in any round: the strong judge's reasoning with the gold answer spliced in), so users can
filter."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa

from schemas.instance import INSTANCE_FIELDS, Instance


class DPORow(Instance):
    prompt: str  # the verifier prompt (question + candidates A-E + answer format)
    chosen: str  # a verifier response whose answer is the gold letter (see chosen_source)
    rejected: str  # a real verifier response that picks another letter or no valid one
    chosen_source: Literal["sampled", "regenerated", "gold_spliced"]
    rejected_answer: str  # the letter it picked, or "invalid"
    judge_model: str  # the model that wrote `chosen`
    rejected_judge_model: str  # the model that wrote `rejected`
    prompt_variant: Literal["think", "instruct"]


DPO_SCHEMA = pa.schema(
    [
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("chosen", pa.string(), nullable=False),
        pa.field("rejected", pa.string(), nullable=False),
        pa.field("chosen_source", pa.string(), nullable=False),
        pa.field("rejected_answer", pa.string(), nullable=False),
        pa.field("judge_model", pa.string(), nullable=False),
        pa.field("rejected_judge_model", pa.string(), nullable=False),
        pa.field("prompt_variant", pa.string(), nullable=False),
    ]
    + INSTANCE_FIELDS
)


# One verifier response (one sample of one judge for one instance and prompt variant): what
# the DPO responses shards write and the pairs step reads. `text` is the whole assistant turn
# (pre-fill included); `answer` the letter it picked, null where none parses; `round` says
# which sampling round wrote it (`judges`; `regenerate`, the round that samples again the
# instances whose responses were all wrong or all right; `fallback`, on_policy's
# strong-judge round).
DPO_RESPONSE_SCHEMA = pa.schema(
    [
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("prompt_id", pa.string(), nullable=False),
        pa.field("variant", pa.string(), nullable=False),
        pa.field("judge_model", pa.string(), nullable=False),
        pa.field("round", pa.string(), nullable=False),
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("answer", pa.string(), nullable=True),
        pa.field("finish_reason", pa.string(), nullable=False),
        pa.field("prompt_tokens", pa.int64(), nullable=True),
        pa.field("completion_tokens", pa.int64(), nullable=True),
    ]
)
