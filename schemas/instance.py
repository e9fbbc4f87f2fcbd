"""Instances: one problem + 2-5 candidates, exactly one correct (docs/architecture.md, "Contracts").

The first thirteen columns are Aletheia's field names and types (`prompt_id` is the
problem's id, shared by all its instances, as Aletheia's scripts group and filter by it;
integers are int64 as `datasets` writes Python ints; `modification` is the bias type of
an Adv/Mixed row, as in Aletheia's rq4 rows). The rest is provenance, led by
`instance_id`, the stable hash that names one row.
"""

from __future__ import annotations

from typing import Literal

import pyarrow as pa

from schemas.common import Record

ANSWER_LETTERS: tuple[str, ...] = ("A", "B", "C", "D", "E")


class Instance(Record):
    # Aletheia's fields
    prompt_id: str  # the problem's id, shared by every instance of the problem
    query: str  # the problem statement shown to the verifier (normalised)
    generator: str  # the candidates' generator, or "mixed"
    language: str  # the candidates' language, or "mixed"
    num_candidates: int
    candidates: list[str]
    chosen_position: int  # 0-based index of the one correct candidate
    chosen_answer: str  # its letter, ANSWER_LETTERS[chosen_position]
    pass_rates: list[float]
    easy_hard: Literal["easy", "hard"]
    weak_strong: Literal["weak", "strong"]
    source: str
    modification: str | None = None  # Adv/Mixed rows: the row's bias type; None elsewhere
    # provenance
    instance_id: str  # stable hash of (problem, ordered candidates, split): names the row
    # Adv/Mixed rows: the instance_id of the row they were edited from (how evaluation pairs
    # an Adv row with its Heldout original for flip rates); None elsewhere
    source_instance_id: str | None = None
    problem_id: str
    candidate_ids: list[str]
    candidate_origins: list[str]
    candidate_generators: list[str]
    candidate_languages: list[str]
    verdicts: list[str]
    adversarial: list[str | None]  # per candidate: the bias type applied, or None
    split: str  # train | heldout | strong | hard | adv | mixed
    build_id: str


AL_FIELDS: list[pa.Field] = [
    pa.field("prompt_id", pa.string(), nullable=False),
    pa.field("query", pa.string(), nullable=False),
    pa.field("generator", pa.string(), nullable=False),
    pa.field("language", pa.string(), nullable=False),
    pa.field("num_candidates", pa.int64(), nullable=False),
    pa.field("candidates", pa.list_(pa.string()), nullable=False),
    pa.field("chosen_position", pa.int64(), nullable=False),
    pa.field("chosen_answer", pa.string(), nullable=False),
    pa.field("pass_rates", pa.list_(pa.float64()), nullable=False),
    pa.field("easy_hard", pa.string(), nullable=False),
    pa.field("weak_strong", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("modification", pa.string(), nullable=True),
]
PROVENANCE_FIELDS: list[pa.Field] = [
    pa.field("instance_id", pa.string(), nullable=False),
    pa.field("source_instance_id", pa.string(), nullable=True),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("candidate_ids", pa.list_(pa.string()), nullable=False),
    pa.field("candidate_origins", pa.list_(pa.string()), nullable=False),
    pa.field("candidate_generators", pa.list_(pa.string()), nullable=False),
    pa.field("candidate_languages", pa.list_(pa.string()), nullable=False),
    pa.field("verdicts", pa.list_(pa.string()), nullable=False),
    pa.field("adversarial", pa.list_(pa.string()), nullable=False),
    pa.field("split", pa.string(), nullable=False),
    pa.field("build_id", pa.string(), nullable=False),
]
INSTANCE_FIELDS = AL_FIELDS + PROVENANCE_FIELDS
INSTANCE_SCHEMA = pa.schema(INSTANCE_FIELDS)
