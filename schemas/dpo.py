"""DPO rows: an instance + a chosen verifier response (picks the correct candidate)
and a rejected one (does not). `chosen_answer` stays the gold letter, as in Aletheia.

`prompt`, `chosen` and `rejected` are in TRL's conversational preference format, so
`DPOTrainer` applies the model's chat template to them: `prompt` is the conversation the
verifier was shown, without the assistant pre-fill (Think: the user turn; Instruct: the
system and user turns); `chosen` and `rejected` are one assistant message each, holding the
whole assistant turn (the Think pre-fill `<think>\n` included). A trainer renders the prompt
with a generation prompt and appends the turn, which is the token sequence generation saw
(the pre-fill continued). `chosen_source` says where chosen came from: `sampled` (a correct
response, in Aletheia's construction cut after its first `</think>` and closed with
`\boxed{gold}`), `regenerated` (the same, from the regeneration round that samples again
the instances no judge got right) or `gold_spliced` (no judge was right in any round: the
strong judge's reasoning with the gold answer spliced in), so users can filter.

Schema versions (in the Parquet metadata, `aletheia.schema_version`):
  1  `prompt` the user turn and `chosen` / `rejected` the assistant turns, as plain strings
     (files without the metadata)
  2  the three as chat messages (TRL's conversational format)
"""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa
from typing_extensions import TypedDict

from schemas.instance import INSTANCE_FIELDS, Instance
from schemas.tables import SchemaError, validate_table


class Message(TypedDict):
    role: str  # system | user | assistant
    content: str


class DPORow(Instance):
    prompt: list[Message]  # the verifier prompt's turns (question + candidates + answer format)
    chosen: list[Message]  # [assistant turn whose answer is the gold letter] (see chosen_source)
    rejected: list[Message]  # [a real verifier turn that picks another letter or no valid one]
    chosen_source: Literal["sampled", "regenerated", "gold_spliced"]
    rejected_answer: str  # the letter it picked, or "invalid"
    judge_model: str  # the model that wrote `chosen`
    rejected_judge_model: str  # the model that wrote `rejected`
    prompt_variant: Literal["think", "instruct"]


DPO_SCHEMA_VERSION = 2
# A chat message as `datasets` and TRL read it ({"role": ..., "content": ...}).
MESSAGES = pa.list_(pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())]))
DPO_SCHEMA = pa.schema(
    [
        pa.field("prompt", MESSAGES, nullable=False),
        pa.field("chosen", MESSAGES, nullable=False),
        pa.field("rejected", MESSAGES, nullable=False),
        pa.field("chosen_source", pa.string(), nullable=False),
        pa.field("rejected_answer", pa.string(), nullable=False),
        pa.field("judge_model", pa.string(), nullable=False),
        pa.field("rejected_judge_model", pa.string(), nullable=False),
        pa.field("prompt_variant", pa.string(), nullable=False),
    ]
    + INSTANCE_FIELDS,
    metadata={
        b"aletheia.schema": b"dpo",
        b"aletheia.schema_version": str(DPO_SCHEMA_VERSION).encode(),
    },
)


def turn_text(messages: list[Message] | list[dict[str, Any]]) -> str:
    """The text of a `chosen` / `rejected` value: its one assistant message's content."""
    return messages[-1]["content"] if messages else ""


def dpo_table(table: pa.Table, name: str = "dpo") -> pa.Table:
    """A DPO table read from a file, checked and cast to the current schema; a version-1 file
    (plain-string prompt and responses) is a SchemaError naming the file and what to do."""
    if "prompt" in table.column_names and pa.types.is_string(table.schema.field("prompt").type):
        raise SchemaError(
            f"{name}: a DPO file of schema version 1 (prompt, chosen and rejected as plain "
            f"strings); version {DPO_SCHEMA_VERSION} stores them as chat messages (TRL's conversational "
            "format): rebuild the dpo configs with this version (the dpo pairs stage)"
        )
    return validate_table(table, DPO_SCHEMA, name=name)


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
