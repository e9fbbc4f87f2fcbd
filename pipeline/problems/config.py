"""Knobs of the ingest stage, with defaults that suit real contest sources."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class NormalizeConfig(BaseModel):
    """How `prompt_statement` is derived from the full `statement` (which is always kept)."""

    model_config = ConfigDict(extra="forbid")

    cut_sample_io: bool = True  # drop "Examples" / "Sample Input 1" / "Example 2:" ... sections
    # Headings (case-insensitive regexes matched against a whole line, numbering and a trailing
    # ':' allowed) that start a section to cut. A cut section ends at the next known heading.
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
        ]
    )
    collapse_whitespace: bool = True  # runs of blanks -> one space, 3+ newlines -> a blank line


class IngestConfig(BaseModel):
    """Everything `ingest` depends on besides its sources; part of the stage cache key."""

    model_config = ConfigDict(extra="forbid")

    split: str = "train"  # dataset split read when a spec names none (`kind:loc#split`)
    # Read only the first N rows of each source (a smaller real run); None = all of them.
    limit_per_source: int | None = Field(None, ge=1)
    include_generated_tests: bool = True  # code_contests `generated_tests`
    max_tests_per_problem: int | None = None  # keep the first N tests (counted), None = all
    max_solutions_per_language: int | None = 10  # reference candidates kept per language
    default_time_limit_s: float = 2.0  # when the source gives none
    default_memory_limit_mb: int = 256
    # Limits outside these bounds are "absurd": the row is quarantined, not clamped. The
    # defaults are what the sandbox can honour per test (JudgeRequest: time <= 60 s,
    # 16 MB <= memory <= 1024 MB), so every ingested problem can be judged as stated.
    min_time_limit_s: float = 0.05
    max_time_limit_s: float = 60.0
    min_memory_limit_mb: int = 16
    max_memory_limit_mb: int = 1024
    normalize: NormalizeConfig = Field(default_factory=NormalizeConfig)
    quarantine_raw_chars: int = 2000  # how much of an offending row to keep for debugging
    datasets_cache_dir: str | None = None  # passed to datasets.load_dataset
