"""Stage configs for assembly, adversarial edits and DPO (pydantic; loadable from YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from pipeline.common.config import left_out_at_defaults
from pipeline.common.verifier_prompt import check_one_wording
from schemas.instance import ANSWER_LETTERS

# easy: incorrect pass rates in [0, easy_max]; hard: near misses in [hard_min, hard_max].
Band = Literal["easy", "hard"]
# How candidates may be mixed in one instance: Aletheia's (one generator and one language),
# one language across generators, or anything of the problem.
Grouping = Literal["generator_language", "language", "mixed"]
# How a group's lists are chosen: Aletheia's (up to `max_combos_per_size` combinations of
# distinct incorrect pass rates per list size), or ours (one list per correct candidate,
# sizes balanced over the split by water-filling).
Selection = Literal["aletheia", "balanced"]
Origin = Literal["policy", "reference", "mutant"]
# Aletheia measured its caps with this tokenizer (src/cerebrm_datagen.py).
ALETHEIA_TOKENIZER = "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B"


class StageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def from_yaml(cls, path: str | Path) -> Self:
        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict):
            raise TypeError(f"{path}: expected a mapping at the top level")
        return cls.model_validate(data)


# How a split's lists are drawn from a group (aletheia selection): `train` follows
# Aletheia's src/cerebrm_datagen.py (per list size up to `max_combos_per_size` combinations
# of distinct incorrect pass rates, one code pick each); `listwise_eval` follows its
# src/listwise_eval_sets.py (per size up to `combos_per_size` combinations, or all, and up to
# `picks_per_combo` code picks per combination; no candidate token cap).
Construction = Literal["train", "listwise_eval"]
# Aletheia's listwise evaluation sets (src/listwise_eval_sets.py, commit 1431408):
# (combinations per list size, code picks per combination) by (tier, band);
# "all" = every combination. Heldout = weak-easy, Strong = strong-easy, Hard = weak-hard.
LISTWISE_EVAL_DRAWS: dict[tuple[str, str], tuple[int | Literal["all"], int]] = {
    ("weak", "easy"): (5, 3),  # MAX_COMBOS_WEAKEASY, MAX_PRODS_PER_LEN_WEAKEASY
    ("strong", "easy"): (3, 1),  # MAX_COMBOS_STRONGEASY, MAX_PRODS_PER_LEN_STRONGEASY
    ("weak", "hard"): ("all", 10),  # every combination, MAX_PRODS_PER_LEN_WEAKHARD
    ("strong", "hard"): ("all", 10),  # not built by Aletheia (hard is weak-only): same rule
}
# Aletheia's `test` split of each evaluation set: up to 250 rows per (num_candidates,
# language), drawn with a fixed seed (`subsample_equal`, n=250).
ALETHEIA_TEST_ROWS_PER_STRATUM = 250
TEST_SPLIT_SUFFIX = ".test"  # `heldout.test`: the table (and file stem) of Heldout's test split


def test_table_name(split_name: str) -> str:
    """The name of a split's `test` table in assembly's outputs (`heldout.test`)."""
    return split_name + TEST_SPLIT_SUFFIX


class SplitSpec(BaseModel):
    """One output split: which pool, which band, which problems, how many of what.

    Fields left None are resolved on load from the split's problems, tier and band to
    Aletheia's values (a dumped config shows the resolved ones).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The split's name (its table and file stem).")
    tier: Literal["weak", "strong"] = Field("weak", description="The candidates' tier.")
    band: Band = Field(
        "easy",
        description="easy: incorrect pass rates in [0, easy_max_pass_rate]; hard: near "
        "misses in [hard_min_pass_rate, hard_max_pass_rate].",
    )
    problems: Literal["train", "heldout"] = Field(
        "train", description="The problem split its instances come from."
    )
    construction: Construction | None = Field(
        None,
        description="How lists are drawn from a group; None = `train` for Train's problems, "
        "`listwise_eval` for held-out ones (Aletheia).",
    )
    combos_per_size: int | Literal["all"] | None = Field(
        None,
        description='listwise_eval: rate combinations drawn per list size ("all": every '
        "one); None = Aletheia's for the tier and band.",
    )
    picks_per_combo: int | None = Field(
        default=None,
        ge=1,
        description="listwise_eval: code picks per combination; None = Aletheia's for the "
        "tier and band.",
    )
    apply_candidate_cap: bool | None = Field(
        None,
        description="Whether the candidate token cap (max_candidate_tokens) applies; None = "
        "yes for `train` construction, no for `listwise_eval` (as Aletheia). The prompt cap "
        "applies to every split.",
    )
    test_rows_per_stratum: int | None = Field(
        default=None,
        ge=1,
        description="The published `test` split: at most this many rows per (list size, "
        "language), a seeded sample of `full`. None = 250 (Aletheia) for held-out problems, "
        "no test split for Train's.",
    )
    size_targets: dict[int, int] | None = Field(
        None,
        description="Wanted rows per list size; None = every list. Aletheia (Train): 12,500 "
        "per size, one row per prompt_id first (diversity), then other rows of those "
        "prompt_ids.",
    )
    list_sizes: list[int] | None = Field(
        None,
        description="List sizes kept; None = every size 2..max_candidates. [2] gives the "
        "pairs-only evaluation sets of Aletheia's earlier cerebrm_datagen.py.",
    )
    origins: list[Origin] | None = Field(
        None,
        description="Candidate origins this split may use; None = any. Aletheia's candidates "
        "are policy outputs only.",
    )
    min_rows_per_prompt_id: int = Field(
        default=1,
        ge=1,
        description="Keep a prompt_id only with at least this many rows of a list size "
        "(Aletheia's Train: 7).",
    )
    cap_per_stratum: int | None = Field(
        None,
        description="Ours: at most this many rows per (list size, language) stratum; None = "
        "no cap.",
    )
    max_instances_per_problem: int | None = Field(
        default=None, ge=1, description="At most this many instances per problem; None = any."
    )
    max_instances_per_group: int = Field(
        default=1,
        ge=1,
        description="balanced selection: instances drawn from one group, each with another "
        "correct candidate.",
    )

    @field_validator("size_targets")
    @classmethod
    def _sizes_in_range(cls, v: dict[int, int] | None) -> dict[int, int] | None:
        if v is not None:
            bad = [k for k in v if not 2 <= k <= len(ANSWER_LETTERS)]
            if bad:
                raise ValueError(
                    f"size_targets: list sizes {bad} are not in 2..{len(ANSWER_LETTERS)}"
                )
            if any(n < 0 for n in v.values()):
                raise ValueError("size_targets: counts must be >= 0")
        return v

    @field_validator("list_sizes")
    @classmethod
    def _list_sizes_in_range(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (not v or any(not 2 <= k <= len(ANSWER_LETTERS) for k in v)):
            raise ValueError(f"list_sizes: {v} must be a non-empty list of sizes in 2..5")
        return v

    @field_validator("combos_per_size")
    @classmethod
    def _combos_positive(cls, v: int | str | None) -> int | str | None:
        if isinstance(v, int) and v < 1:
            raise ValueError(f"combos_per_size: {v} must be >= 1 or 'all'")
        return v

    @model_validator(mode="after")
    def _resolve(self) -> SplitSpec:
        if self.construction is None:
            self.construction = "train" if self.problems == "train" else "listwise_eval"
        if self.construction == "listwise_eval":
            combos, picks = LISTWISE_EVAL_DRAWS[(self.tier, self.band)]
            if self.combos_per_size is None:
                self.combos_per_size = combos
            if self.picks_per_combo is None:
                self.picks_per_combo = picks
        elif self.combos_per_size is not None or self.picks_per_combo is not None:
            raise ValueError(
                f"split {self.name}: combos_per_size / picks_per_combo apply to construction "
                "listwise_eval only (train uses the config's max_combos_per_size, one pick)"
            )
        if self.apply_candidate_cap is None:
            self.apply_candidate_cap = self.construction == "train"
        if self.problems == "heldout" and self.test_rows_per_stratum is None:
            self.test_rows_per_stratum = ALETHEIA_TEST_ROWS_PER_STRATUM
        if self.problems == "train" and self.test_rows_per_stratum is not None:
            raise ValueError(
                f"split {self.name}: test_rows_per_stratum: only evaluation splits (problems: "
                "heldout) are published with a test split"
            )
        return self

    @property
    def has_test_split(self) -> bool:
        return self.test_rows_per_stratum is not None


def default_splits() -> list[SplitSpec]:
    """Aletheia's four sets: Train = weak easy lists of 2-5 (src/cerebrm_datagen.py), 12,500
    per size, prompt_ids with more than 6 rows; Heldout (weak-easy), Strong (strong-easy)
    and Hard (weak-hard) = listwise evaluation sets of 2-5 (src/listwise_eval_sets.py), each
    with a `test` split of up to 250 rows per (list size, language) and a `full` one."""
    return [
        SplitSpec(
            name="train",
            tier="weak",
            band="easy",
            problems="train",
            size_targets={n: 12_500 for n in range(2, 6)},
            min_rows_per_prompt_id=7,
        ),
        SplitSpec(name="heldout", tier="weak", band="easy", problems="heldout"),
        SplitSpec(
            name="strong", tier="strong", band="easy", problems="heldout", origins=["policy"]
        ),
        SplitSpec(name="hard", tier="weak", band="hard", problems="heldout"),
    ]


class AssembleConfig(StageConfig):
    seed: int = Field(0, description="Seed of the draws; a run config gives its own unless set.")
    build_id: str = Field(
        "dev", description="Written to every row; a run config gives its build id unless set."
    )
    grouping: Grouping = Field(
        "generator_language",
        description="How candidates may be mixed in one instance: one generator and one "
        "language (Aletheia), one language across generators, or anything of the problem.",
    )
    selection: Selection = Field(
        "aletheia",
        description="How a group's lists are chosen: Aletheia's (up to max_combos_per_size "
        "combinations of distinct incorrect pass rates per list size), or balanced (ours: one "
        "list per correct candidate, sizes balanced over the split).",
    )
    max_combos_per_size: int = Field(
        default=3,
        ge=1,
        description="aletheia selection, `train` construction: combinations of distinct "
        "incorrect pass rates sampled per list size (Aletheia's MAX_COMBOS_PER_LEN), and for "
        "the hard band the pairs per group.",
    )
    spare_incorrect_rates: int = Field(
        default=1,
        ge=0,
        description="aletheia selection: a list of n candidates needs n - 1 + this many "
        "distinct incorrect pass rates in its group (Aletheia: 1); 0 lets a group with a "
        "single incorrect rate yield a pair.",
    )
    # Token caps, measured with `tokenizer`. When the tokenizer cannot be loaded (offline,
    # not cached) the caps are skipped with a warning and `token_caps.applied: false` in the
    # stats, or the stage fails when `require_tokenizer` is set.
    tokenizer: str | None = Field(
        ALETHEIA_TOKENIZER,
        description="The tokenizer that measures the token caps (a Hub name or a local path).",
    )
    require_tokenizer: bool = Field(
        False,
        description="Fail when the tokenizer cannot be loaded, instead of skipping the caps "
        "with a warning.",
    )
    max_candidate_tokens: int | None = Field(
        default=800,
        ge=1,
        description="Candidates over this many tokens are left out of splits with "
        "apply_candidate_cap (Aletheia: 800, Train).",
    )
    max_prompt_tokens: int | None = Field(
        default=4096,
        ge=1,
        description="Rows whose verifier prompt is over this many tokens are dropped from "
        "every split (Aletheia: 4096).",
    )
    prompt_template: str | None = Field(
        None,
        description="The user template of the verifier prompt measured for the cap (both "
        "styles; the longer counts), as the DPO rows' prompts; None = our wording.",
    )
    system_template: str | None = Field(
        None, description="The instruct system-turn template file; None = our wording."
    )
    aletheia_src: str | None = Field(
        None,
        description="A checkout of Aletheia's code (or one of its prompt files): the prompts "
        "measured for the cap are then in Aletheia's own wording (its src/prompts.py read with "
        "`ast`); excludes the templates. None = the project's wording.",
    )
    statement_cut: Literal["headings", "aletheia"] = Field(
        "headings",
        description="The problem statement a row's `query` shows: headings, the ingested "
        "`prompt_statement` (sample sections cut by heading, whitespace tidied; "
        "`ingest.normalize`); aletheia, Aletheia's cut (`cerebrm_datagen.py`, "
        "`listwise_eval_sets.py`): the full statement up to its first `\\nExample\\n` or "
        "`\\nExamples\\n` line, stripped. It changes every prompt, its token count and so "
        "which rows pass `max_prompt_tokens`.",
    )
    min_candidates: int = Field(default=2, ge=2, le=5, description="Smallest list size.")
    max_candidates: int = Field(default=5, ge=2, le=5, description="Largest list size.")
    easy_max_pass_rate: float = Field(
        default=0.5, ge=0.0, lt=1.0, description="easy band: highest incorrect pass rate."
    )
    hard_min_pass_rate: float = Field(
        default=0.7, ge=0.0, lt=1.0, description="hard band: lowest incorrect pass rate."
    )
    hard_max_pass_rate: float = Field(
        default=0.9, ge=0.0, lt=1.0, description="hard band: highest incorrect pass rate."
    )
    one_incorrect_per_pass_rate: bool = Field(
        True,
        description="Aletheia's diversity rule: at most one incorrect candidate per distinct "
        "pass rate.",
    )
    exclude_verdicts: list[str] = Field(
        default_factory=list,
        description='Incorrect verdicts never used (e.g. ["CE"] to leave out programs that do '
        "not compile).",
    )
    splits: list[SplitSpec] = Field(
        default_factory=default_splits,
        description="The output splits; default: Aletheia's Train, Heldout, Strong and Hard.",
    )
    eval_problems: Literal["heldout", "not_in_train"] = Field(
        "heldout",
        description="The problems of the `problems: heldout` splits: those the split stage "
        "assigned to heldout, or (Aletheia's rule, `splits.heldout_rule: not_in_train`, "
        "which a run config passes on) every problem whose near-duplicate cluster has no "
        "row in a `problems: train` split, decided after those are built.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # Left out at its default, so configs written before the field keep their keys.
        late = {"eval_problems": "heldout", "aletheia_src": None, "statement_cut": "headings"}
        return left_out_at_defaults(handler(self), late)

    @model_validator(mode="after")
    def _consistent(self) -> AssembleConfig:
        if self.min_candidates > self.max_candidates:
            raise ValueError("min_candidates must be <= max_candidates")
        if self.hard_min_pass_rate > self.hard_max_pass_rate:
            raise ValueError("hard_min_pass_rate must be <= hard_max_pass_rate")
        check_one_wording(self.aletheia_src, self.prompt_template, self.system_template)
        if "SE" in self.exclude_verdicts or "AC" in self.exclude_verdicts:
            raise ValueError("exclude_verdicts: AC and SE are handled by the stage itself")
        names = [s.name for s in self.splits]
        if len(set(names)) != len(names):
            raise ValueError(f"splits: duplicate split names {names}")
        clash = sorted(set(names) & {test_table_name(n) for n in names})
        if clash:
            raise ValueError(f"splits: {clash} would clash with a split's test table name")
        return self
