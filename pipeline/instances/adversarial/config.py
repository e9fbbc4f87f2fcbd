"""The adversarial sets' config: `AdversarialConfig` (a run config's `mixed:` and `adv:`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.instances.adversarial.catalogue import ALETHEIA_ADV, bias_types
from pipeline.instances.config import StageConfig
from pipeline.judge.config import JudgeConfig

MIXED_DEFAULTS: dict[str, Any] = {
    "share": 0.25,
    "copy_per_bias": False,
    "bias_types": None,
    "drop_selected_without_edit": False,
}


class AdversarialConfig(StageConfig):
    seed: int = Field(0, description="Seed of the draws; a run config gives its own unless set.")
    split: str = Field(
        "adv",
        description="The output split: adv (every instance) or mixed (a share; brings "
        "Mixed's defaults for every key not set).",
    )
    share: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Share of the instances that get edits."
    )
    construction: Literal["per_row", "per_candidate"] = Field(
        "per_row",
        description="per_row (Aletheia): one bias type per row, on every incorrect candidate "
        "(pro) or the correct one (anti); per_candidate (ours, earlier): a drawn type per "
        "candidate.",
    )
    copy_per_bias: bool = Field(
        True,
        description="per_row: one copy of each picked row per bias type (Adv, as Aletheia), "
        "or one type per picked row (Mixed).",
    )
    bias_types: list[str] | None = Field(
        default_factory=lambda: list(ALETHEIA_ADV),
        description="Bias types that may be used (catalogue names); None = all of them. "
        "Default: Adv the six of Aletheia's published Adv set, Mixed None.",
    )
    edit_correct: bool = Field(
        True, description="per_candidate: an anti-bias edit on the correct candidate."
    )
    edit_incorrect: bool = Field(
        True, description="per_candidate: a pro-bias edit on every incorrect candidate."
    )
    drop_selected_without_edit: bool = Field(
        True,
        description="An instance picked for edits whose every edit was rejected is left out "
        "(counted; Adv), or kept unedited (Mixed).",
    )
    build_id: str | None = Field(None, description="None = keep the input's build_id.")
    judge: JudgeConfig = Field(
        default_factory=lambda: JudgeConfig(progress=False),
        description="How edited programs are judged: must match the settings the candidates "
        "were judged with, or pass rates cannot match.",
    )
    rejudge_unchanged: bool = Field(
        False,
        description="Re-judge an edit proven to leave the program unchanged (comments or "
        "layout only; adversarial/unchanged.py), which otherwise keeps its original's verdict "
        "without a sandbox run (counted carried_unchanged).",
    )

    @field_validator("bias_types")
    @classmethod
    def _known_types(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            bias_types(v)  # raises on unknown names
            if not v:
                raise ValueError(
                    "bias_types: empty; leave it out (or null) for the whole catalogue"
                )
        return v

    @model_validator(mode="before")
    @classmethod
    def _mixed_defaults(cls, data: Any) -> Any:
        """`split: mixed` brings Mixed's defaults for every key it does not set: a 25% share
        of Train, one bias type per picked row drawn from the whole catalogue, the other
        rows kept unedited."""
        if isinstance(data, dict) and data.get("split") == "mixed":
            data = {**MIXED_DEFAULTS, **data}
        return data

    @classmethod
    def mixed(cls, **kw: object) -> AdversarialConfig:
        return cls(**{"split": "mixed", **kw})  # type: ignore[arg-type]
