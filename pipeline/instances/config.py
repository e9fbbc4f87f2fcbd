"""Stage configs for assembly, adversarial edits and DPO (pydantic; loadable from YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pipeline.common.verifier_prompt import PromptSpec, PromptStyle
from pipeline.instances.adversarial.catalogue import ALETHEIA_ADV, bias_types
from pipeline.judge.stage import JudgeConfig
from pipeline.sampling.config import BackendOptions, ModelSource, TransformersOptions
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

    @model_validator(mode="after")
    def _consistent(self) -> AssembleConfig:
        if self.min_candidates > self.max_candidates:
            raise ValueError("min_candidates must be <= max_candidates")
        if self.hard_min_pass_rate > self.hard_max_pass_rate:
            raise ValueError("hard_min_pass_rate must be <= hard_max_pass_rate")
        if "SE" in self.exclude_verdicts or "AC" in self.exclude_verdicts:
            raise ValueError("exclude_verdicts: AC and SE are handled by the stage itself")
        names = [s.name for s in self.splits]
        if len(set(names)) != len(names):
            raise ValueError(f"splits: duplicate split names {names}")
        clash = sorted(set(names) & {test_table_name(n) for n in names})
        if clash:
            raise ValueError(f"splits: {clash} would clash with a split's test table name")
        return self


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
        "Default: the six of Aletheia's published Adv set.",
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


class JudgeModelSpec(BaseModel):
    """A verifier model whose responses become DPO traces, with the same backend options
    as a policy source (pipeline/sampling/config.py), built by the same `make_backend`.

    Shorthand kept from earlier configs: `model_path: P` means `model: P`, and
    `backend: transformers` (a bare word) means `backend: {type: transformers}`.
    `backend: {type: vllm}` is UNTESTED HERE (vLLM cannot be installed on our machines):
    such a judge is validated and preflighted (its interpreter), not run.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The id stored in judge_model.")
    model: str | None = Field(
        None,
        description="A local folder, a Hub id, or the model name a server serves; None = "
        "`name`. `model_path` is its older name.",
    )
    revision: str | None = Field(None, description="The model's revision.")
    backend: BackendOptions = Field(
        default_factory=TransformersOptions,
        description="How the model generates, as a policy source's backend (a bare word: "
        "its type).",
    )
    chat_template: str | None = Field(
        None, description="Chat template override: inline Jinja text or a path to a file."
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "model_path" in data:
            path = data.pop("model_path")
            if data.get("model") not in (None, path):
                raise ValueError("give model or model_path (the older name), not both")
            data["model"] = path
        if isinstance(data.get("backend"), str):  # `backend: transformers`
            data["backend"] = {"type": data["backend"]}
        return data

    @property
    def model_ref(self) -> str:
        return self.model or self.name

    def source(self) -> ModelSource:
        """This judge as a model source, for `make_backend` (the tier is not used)."""
        return ModelSource(
            name=self.name,
            model=self.model_ref,
            revision=self.revision,
            tier="strong",
            backend=self.backend,
            chat_template=self.chat_template,
        )


class DPOConfig(StageConfig):
    """DPO pairs from real verifier responses.

    `construction: aletheia` (default, `src/thinkdpo_pairs.py`): every judge samples
    `samples_per_judge` unconstrained responses; chosen is a correct one drawn at random
    (any judge), its text cut after the first `</think>` and closed with `\\boxed{gold}`
    (`chosen_source: sampled`); where no judge answered correctly, a trace of
    `strong_judge` gets the gold answer spliced in the same way (`gold_spliced`), unless
    the regeneration round (`regenerate`) brings a correct response (`regenerated`).
    Rejected comes from `rejected_judges` with balanced quotas; a response with no valid
    answer counts as rejected. `construction: on_policy` (ours, earlier): chosen and
    rejected both as sampled, from the same judge where possible; an instance with no
    correct response is skipped or resampled from `fallback_judge`.
    """

    seed: int = Field(0, description="Seed of the draws; a run config gives its own unless set.")
    name: str = Field("dpo", description="The output file stem: dpo, mixed_dpo.")
    split: str | None = Field(None, description="None = keep each instance's split.")
    judges: list[JudgeModelSpec] = Field(
        default_factory=list, description="Verifier models whose responses become the pairs."
    )
    variants: list[PromptStyle] = Field(
        default_factory=lambda: ["think"], description="Prompt styles a pair is made in."
    )
    prompt_template: str | None = Field(
        None,
        description="A user-turn template file with {question} {candidates} {valid_options}; "
        "None = ours.",
    )
    system_template: str | None = Field(
        None, description="instruct only: the system-turn template file; None = ours."
    )
    construction: Literal["aletheia", "on_policy"] = Field(
        "aletheia",
        description="aletheia: chosen a correct sampled response (or a gold splice), rejected "
        "from rejected_judges; on_policy (ours): both as sampled, same judge where possible.",
    )
    strong_judge: str | None = Field(
        None,
        description="aletheia: the judge whose trace gets the gold answer spliced in where no "
        "judge was right (Aletheia: DeepSeek-R1); None = the last of `judges`.",
    )
    rejected_judges: list[str] | None = Field(
        None,
        description="aletheia: the judges rejected traces come from, with equal quotas "
        "(Aletheia: the 1.5B, 7B and 14B distills); None = every judge but the strong one "
        "(all if only one).",
    )
    samples_per_judge: int = Field(
        default=4, ge=1, description="Responses each judge samples per instance (Aletheia's K)."
    )
    temperature: float = Field(0.6, description="Sampling temperature (Aletheia's).")
    top_p: float = Field(1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(
        default=16384, ge=1, description="Most tokens per response (Aletheia's)."
    )
    pairs_per_instance: int = Field(
        default=1,
        ge=1,
        description="on_policy: pairs per instance and variant (aletheia makes one).",
    )
    fallback: Literal["skip", "strong_judge"] = Field(
        "skip",
        description="on_policy: where no judge picked the correct letter: skip, or sample "
        "fallback_judge.",
    )
    fallback_judge: JudgeModelSpec | None = Field(
        None, description="on_policy: the judge sampled by fallback strong_judge."
    )
    fallback_samples: int = Field(
        default=8, ge=1, description="on_policy: responses the fallback judge samples."
    )
    regenerate: bool | None = Field(
        None,
        description="Aletheia's regeneration round: every judge samples the instances where "
        "every response was wrong (or every one right) once more, before pairing, so a "
        "correct response can replace a gold splice. None = on for construction aletheia, off "
        "for on_policy (with both on, regeneration comes first).",
    )
    constrain_answer: bool = Field(
        False,
        description="Constrained decoding to end in a valid \\boxed{X} (ours); Aletheia "
        "samples freely.",
    )
    batch_size: int = Field(
        default=64, ge=1, description="Requests sent to a judge's backend at once."
    )

    @model_validator(mode="after")
    def _consistent(self) -> DPOConfig:
        if self.fallback == "strong_judge" and self.fallback_judge is None:
            raise ValueError("fallback 'strong_judge' needs fallback_judge")
        names = [j.name for j in self.judges]
        every = names + ([self.fallback_judge.name] if self.fallback_judge else [])
        if len(set(every)) != len(every):
            raise ValueError(f"judges: names must be unique (fallback_judge included): {every}")
        if self.strong_judge is not None and names and self.strong_judge not in names:
            raise ValueError(f"strong_judge: {self.strong_judge!r} is not one of judges {names}")
        unknown = sorted(set(self.rejected_judges or []) - set(names)) if names else []
        if unknown:
            raise ValueError(f"rejected_judges: {unknown} are not among judges {names}")
        if self.rejected_judges == []:
            raise ValueError("rejected_judges: empty; leave it out for the default")
        if self.system_template and "instruct" not in self.variants:
            raise ValueError("system_template: only the instruct variant has a system turn")
        return self

    @property
    def regenerates(self) -> bool:
        """Whether the regeneration round runs (see `regenerate`)."""
        return self.construction == "aletheia" if self.regenerate is None else self.regenerate

    def prompt_spec(self, style: PromptStyle) -> PromptSpec:
        return PromptSpec(
            style=style,
            template=self.prompt_template,
            system_template=self.system_template if style == "instruct" else None,
        )
