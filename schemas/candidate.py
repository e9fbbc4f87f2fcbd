"""Candidates: one program for one problem, with where it came from (docs/architecture.md, "Contracts")."""

from __future__ import annotations

from typing import Literal

import pyarrow as pa

from schemas.common import Language, Record

Origin = Literal["policy", "reference", "mutant"]
Tier = Literal["weak", "strong"]
# How the code was obtained from the completion; anything but ok/fallback has no program.
Extraction = Literal["ok", "fallback", "no_code", "wrong_language", "not_applicable"]


class Candidate(Record):
    candidate_id: str  # schemas.ids.candidate_id_for(language, code)
    problem_id: str
    language: Language
    code: str  # empty only when extraction failed (see `extraction`)
    completion: str | None = None  # raw model text; None for reference / mutant
    extraction: Extraction = "not_applicable"
    origin: Origin
    generator: str  # model id, "reference:<source>", or "mutant:<operator>"
    generator_revision: str | None = None
    tier: Tier
    backend: str | None = None  # openai | vllm | transformers | None for non-model origins
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    sample_index: int = 0
    prompt_sha: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    parent_candidate_id: str | None = None  # mutants: the program mutated
    mutation: str | None = None  # mutants: the operator applied
    reference_correct: bool | None = None  # references: what the source claims


CANDIDATE_FIELDS: list[pa.Field] = [
    pa.field("candidate_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("language", pa.string(), nullable=False),
    pa.field("code", pa.string(), nullable=False),
    pa.field("completion", pa.string()),
    pa.field("extraction", pa.string(), nullable=False),
    pa.field("origin", pa.string(), nullable=False),
    pa.field("generator", pa.string(), nullable=False),
    pa.field("generator_revision", pa.string()),
    pa.field("tier", pa.string(), nullable=False),
    pa.field("backend", pa.string()),
    pa.field("temperature", pa.float64()),
    pa.field("top_p", pa.float64()),
    pa.field("max_tokens", pa.int32()),
    pa.field("seed", pa.int64()),
    pa.field("sample_index", pa.int32(), nullable=False),
    pa.field("prompt_sha", pa.string()),
    pa.field("prompt_tokens", pa.int32()),
    pa.field("completion_tokens", pa.int32()),
    pa.field("finish_reason", pa.string()),
    pa.field("parent_candidate_id", pa.string()),
    pa.field("mutation", pa.string()),
    pa.field("reference_correct", pa.bool_()),
]
CANDIDATE_SCHEMA = pa.schema(CANDIDATE_FIELDS)
