"""Publishing's config sections: `PublishConfig` (a run config's `publish:`, with the
invariant checks' `CheckConfig`) and `HubSection` (where, and whether, the release is pushed)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from pipeline.common.answers import AnswerFormat
from pipeline.common.config import Section, left_out_at_defaults
from pipeline.splits.config import NearDupConfig
from schemas.dataset_configs import CONFIG_NAMES

DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024  # well under the Hub's per-file comfort zone


class CheckConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    near_dup: NearDupConfig = Field(
        default_factory=NearDupConfig,
        description="What counts as a near-duplicate across splits: the split stage's own "
        "definition (threshold 0.7, LSH proposals verified by exact Jaccard), through the "
        "same code; a build with other split knobs passes them here too (flows/build.py).",
    )


class PublishConfig(BaseModel):
    """How the Hub folder is laid out and what it must contain; part of the cache key."""

    model_config = ConfigDict(extra="forbid")

    max_shard_bytes: int = Field(
        DEFAULT_MAX_SHARD_BYTES,
        gt=0,
        description="Most bytes (in-memory Arrow size) of one Parquet shard of a split.",
    )
    require_configs: list[str] = Field(
        default_factory=lambda: list(CONFIG_NAMES),
        description="Configs that must be present and non-empty, or publishing refuses.",
    )
    pretty_name: str = Field(
        "Aletheia (regenerated)", description="The dataset's name on its card."
    )
    license: str | None = Field(
        None,
        description="The card's license; None = the sources' license when they share one, "
        'else "other".',
    )
    checks: CheckConfig = Field(
        default_factory=CheckConfig, description="The invariants checked before publishing."
    )
    answer_format: AnswerFormat = Field(
        "letter",
        description="chosen_answer (and DPO's rejected_answer) as the bare letter `A`, or as "
        "Aletheia's `[[A]]` for users who feed the rows to Aletheia's own scripts.",
    )
    modification_labels: Literal["project", "aletheia"] = Field(
        "project",
        description="Adv / Mixed rows' `modification` as our bias type names (`authority`, "
        "...), or as Aletheia's labels for the six types its Adv set has "
        "(`authority_bias_rejected`, ...; src/rq4_datagen.py), so filters written for "
        "Aletheia's data match; other types keep their names.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # Left out at its default: the card's run config and the stage key stay as they were.
        return left_out_at_defaults(handler(self), {"modification_labels": "project"})


class HubSection(Section):
    repo_id: str | None = Field(
        None, description="The Hub dataset repo, namespace/name; None = the local folder only."
    )
    push: bool = Field(
        False,
        description="Push the folder to `repo_id` (token: HF_TOKEN in the environment, never "
        "in the config).",
    )
    endpoint: str | None = Field(
        None, description="The Hub's URL; None = HF_ENDPOINT or https://huggingface.co."
    )
    private: bool = Field(False, description="Create the repo private.")
    tag: str | None = Field(
        None, description="The release tag; None = v<pipeline version>-<build id>."
    )
