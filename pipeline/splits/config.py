"""Knobs of the split stage (all part of its cache key)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.splits.dedup import DedupParams


class NearDupConfig(BaseModel):
    """How two problems are judged near-duplicates: one definition for the split stage and
    for the publish re-check (pipeline/publish/checks.py), so the two cannot drift apart."""

    model_config = ConfigDict(extra="forbid")

    shingle_size: int = Field(5, ge=1)  # word n-grams for MinHash
    threshold: float = Field(0.7, gt=0.0, le=1.0)  # exact Jaccard to call two problems near-dups
    lsh_threshold: float = Field(0.5, gt=0.0, le=1.0)  # LSH candidate threshold (<= threshold)
    num_perm: int = Field(128, ge=16)
    shingles_within_sentences: bool = True  # reordered sentences keep the same shingles

    def dedup_params(self) -> DedupParams:
        return DedupParams(
            shingle_size=self.shingle_size,
            threshold=self.threshold,
            lsh_threshold=min(self.lsh_threshold, self.threshold),
            num_perm=self.num_perm,
            within_sentences=self.shingles_within_sentences,
        )


class SplitConfig(NearDupConfig):
    seed: int = 0
    heldout_fraction: float = Field(0.1, ge=0.0, le=1.0)  # of the eligible clusters
    # Near-duplicates (the knobs inherited from NearDupConfig), on this text:
    text_field: Literal["prompt_statement", "statement"] = "prompt_statement"  # samples cut
    # Decontamination
    benchmarks: list[str] = Field(default_factory=list)  # files; see pipeline/splits/decontam.py
    decontam_ngram: int = Field(8, ge=1)
    decontaminate_clusters: bool = True  # also drop Train near-dups of a contaminated problem
    # Date cut (the LiveCodeBench way): only clusters whose members are ALL dated strictly
    # after `eval_after` may go to heldout; dated-before and undated problems go to train.
    eval_after: dt.date | None = None
    # Train-Questions
    train_questions_query: Literal["statement", "prompt_statement"] = "statement"
