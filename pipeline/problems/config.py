"""Knobs of the ingest stage, with defaults that suit real contest sources."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class NormalizeConfig(BaseModel):
    """How `prompt_statement` is derived from the full `statement` (which is always kept)."""

    model_config = ConfigDict(extra="forbid")

    cut_sample_io: bool = Field(
        True,
        description='Drop the "Examples" / "Sample Input 1" / "Example 2:" ... sections.',
    )
    cut_headings: list[str] = Field(
        default_factory=lambda: [
            r"examples?",
            r"sample",
            r"samples",
            r"sample\s+(test\s*(case)?s?|input|output|explanation)s?",
            r"(input|output)\s+examples?",
            r"sample\s+(input|output)\s+and\s+(output|explanation)",
            r"explanation",
            r"example\s+explanation",
        ],
        description="Headings that start a section to cut: case-insensitive regexes matched "
        "against a whole line, numbering and a trailing ':' allowed. A cut section ends at the "
        "next known heading.",
    )
    collapse_whitespace: bool = Field(
        True, description="Runs of blanks -> one space, 3+ newlines -> one blank line."
    )


class IngestConfig(BaseModel):
    """Everything `ingest` depends on besides its sources; part of the stage cache key."""

    model_config = ConfigDict(extra="forbid")

    split: str = Field(
        "train", description="Dataset split read when a spec names none (`kind:loc#split`)."
    )
    limit_per_source: int | None = Field(
        None,
        ge=1,
        description="Read only the first N rows of each source (a smaller real run); None = "
        "all of them.",
    )
    include_generated_tests: bool = Field(
        True, description="Keep code_contests' `generated_tests`."
    )
    max_tests_per_problem: int | None = Field(
        None, description="Keep the first N tests (counted); None = all."
    )
    max_solutions_per_language: int | None = Field(
        10, description="Reference candidates kept per language; None = all."
    )
    default_time_limit_s: float = Field(
        2.0, description="Time limit per test when the source gives none."
    )
    default_memory_limit_mb: int = Field(
        256, description="Memory limit when the source gives none."
    )
    # Limits outside these bounds are "absurd": the row is quarantined, not clamped. The
    # defaults are what the sandbox can honour per test (JudgeRequest: time <= 60 s,
    # 16 MB <= memory <= 1024 MB), so every ingested problem can be judged as stated.
    min_time_limit_s: float = Field(
        0.05, description="Smallest time limit accepted; below it the row is quarantined."
    )
    max_time_limit_s: float = Field(
        60.0,
        description="Largest time limit accepted (the sandbox's per-test cap); above it the "
        "row is quarantined, not clamped.",
    )
    min_memory_limit_mb: int = Field(
        16,
        description="Smallest memory limit accepted (the sandbox's floor); below it the row "
        "is quarantined.",
    )
    max_memory_limit_mb: int = Field(
        1024,
        description="Largest memory limit accepted (the sandbox's cap); above it the row is "
        "quarantined, not clamped.",
    )
    normalize: NormalizeConfig = Field(
        default_factory=NormalizeConfig,
        description="How `prompt_statement` is derived from the full statement.",
    )
    quarantine_raw_chars: int = Field(
        2000, description="How much of an offending row a quarantine row keeps for debugging."
    )
    datasets_cache_dir: str | None = Field(
        None, description="Passed to datasets.load_dataset as its cache_dir."
    )
