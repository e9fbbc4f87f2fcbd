"""Knobs of the split stage (all part of its cache key)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from pipeline.common.config import left_out_at_defaults

if TYPE_CHECKING:  # the MinHash code (datasketch, scipy) loads only when deduplicating
    from pipeline.splits.dedup import DedupParams


class NearDupConfig(BaseModel):
    """How two problems are judged near-duplicates: one definition for the split stage and
    for the publish re-check (pipeline/publish/checks.py), so the two cannot drift apart."""

    model_config = ConfigDict(extra="forbid")

    shingle_size: int = Field(5, ge=1, description="Words per shingle (n-gram) for MinHash.")
    threshold: float = Field(
        0.7,
        gt=0.0,
        le=1.0,
        description="Exact Jaccard similarity at which two problems are near-duplicates.",
    )
    lsh_threshold: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="LSH threshold proposing candidate pairs (capped at `threshold`); each "
        "proposal is verified by exact Jaccard.",
    )
    num_perm: int = Field(128, ge=16, description="MinHash permutations.")
    shingles_within_sentences: bool = Field(
        True,
        description="Shingles stay within a sentence, so reordered sentences keep the same "
        "shingles.",
    )

    def dedup_params(self) -> DedupParams:
        from pipeline.splits.dedup import DedupParams

        return DedupParams(
            shingle_size=self.shingle_size,
            threshold=self.threshold,
            lsh_threshold=min(self.lsh_threshold, self.threshold),
            num_perm=self.num_perm,
            within_sentences=self.shingles_within_sentences,
        )


# Where the evaluation splits' problems come from: `clusters`, a seeded share of the
# near-duplicate clusters drawn before sampling (ours, the default); `not_in_train`,
# Aletheia's rule (`src/listwise_eval_sets.py` filters out Train's prompt_ids): every
# problem whose cluster has no row in Train, decided at assembly.
HeldoutRule = Literal["clusters", "not_in_train"]


class SplitConfig(NearDupConfig):
    seed: int = Field(
        0, description="Seed of the heldout draw; a run config gives its own seed unless set."
    )
    heldout_fraction: float = Field(
        0.1, ge=0.0, le=1.0, description="Share of the eligible clusters that go to heldout."
    )
    heldout_rule: HeldoutRule = Field(
        "clusters",
        description="Which problems the evaluation splits draw from. clusters: a "
        "`heldout_fraction` of the near-duplicate clusters, drawn before sampling (the "
        "default). not_in_train: Aletheia's rule, every problem not in Train: this stage "
        "sends every cluster to train, and assembly builds the evaluation splits from the "
        "clusters none of whose problems has a Train row (so a near-duplicate of a Train "
        "problem never reaches them; invariant 2). Excludes `heldout_fraction` and "
        "`eval_after`.",
    )
    text_field: Literal["prompt_statement", "statement"] = Field(
        "prompt_statement",
        description="The text near-duplicates are found on (prompt_statement: sample I/O cut).",
    )
    # Decontamination
    benchmarks: list[str] = Field(
        default_factory=list,
        description="Benchmark files (or `mbpp[:LOCATION][#SPLIT]` specs) whose word n-grams "
        "contaminate a problem; see pipeline/splits/decontam.py.",
    )
    decontam_ngram: int = Field(
        8, ge=1, description="Words per n-gram shared with a benchmark that contaminate."
    )
    decontaminate_clusters: bool = Field(
        True, description="Also drop Train near-duplicates of a contaminated problem."
    )
    eval_after: dt.date | None = Field(
        None,
        description="Date cut (the LiveCodeBench way): only clusters whose members are all "
        "dated strictly after it may go to heldout; dated-before and undated problems go to "
        "train. None = no cut.",
    )
    train_questions_query: Literal["statement", "prompt_statement"] = Field(
        "statement",
        description="The column a Train-Questions row's query comes from (the statement when "
        "it is empty).",
    )

    @model_validator(mode="after")
    def _rule_fits(self) -> SplitConfig:
        if self.heldout_rule == "not_in_train":
            if "heldout_fraction" in self.model_fields_set:
                raise ValueError(
                    "heldout_fraction: heldout_rule not_in_train draws no share of clusters "
                    "(the evaluation splits take every problem not in Train); leave it out"
                )
            if self.eval_after is not None:
                raise ValueError(
                    "eval_after: the date cut chooses heldout clusters by date; heldout_rule "
                    "not_in_train takes every problem not in Train; use one of them"
                )
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # Left out at its default, so configs written before the field keep their stage
        # keys and build ids.
        return left_out_at_defaults(handler(self), {"heldout_rule": "clusters"})

    @property
    def drawn_heldout_fraction(self) -> float:
        """The share of clusters this stage sends to heldout (none under not_in_train)."""
        return 0.0 if self.heldout_rule == "not_in_train" else self.heldout_fraction
