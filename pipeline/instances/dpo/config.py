"""The DPO stage's config: `DPOConfig` (a run config's `dpo:`) and its verifier models
(`JudgeModelSpec`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from pipeline.common.answers import AnswerFormat
from pipeline.common.config import left_out_at_defaults
from pipeline.common.verifier_prompt import PromptSpec, PromptStyle, check_one_wording
from pipeline.instances.config import StageConfig
from pipeline.sampling.config import BackendOptions, ModelSource, TransformersOptions

# How a rejected turn is kept (`DPOConfig.rejected_form`; pipeline/instances/dpo/cues.py says
# why): as the judge wrote it (Aletheia's), only ones that picked a (wrong) letter, or those
# closed the way a chosen turn is, so both turns of a pair share one form.
RejectedForm = Literal["as_sampled", "answered", "closed"]


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
    aletheia_src: str | None = Field(
        None,
        description="A checkout of Aletheia's code (or one of its prompt files): the rows' "
        "prompt is then Aletheia's own wording (its src/prompts.py read with `ast`, never "
        "run); excludes the templates. None = ours. A run config gives its own unless set.",
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
    answer_format: AnswerFormat = Field(
        "letter",
        description="The answer form our prompt asks for and the gold splice writes: "
        "`\\boxed{A}`, or Aletheia's cerebrm-era `\\boxed{[[A]]}` (bracketed; constrained "
        "decoding then writes that form too). A run config gives `publish.answer_format` "
        "unless this is set.",
    )

    rejected_form: RejectedForm = Field(
        "as_sampled",
        description="aletheia: the rejected turn. as_sampled (Aletheia's): an incorrect "
        "response as the judge wrote it, a valid answer or none; answered: only responses "
        "that picked a wrong letter (an instance without one yields no pair); closed: as "
        "answered, and a Think turn cut after its first `</think>` and closed with "
        "`</think>\\n\\boxed{its letter}` as chosen turns are, so no format cue (`</think>`, "
        "box count) tells the two apart. The card's DPO cue table measures the cues.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # Left out at their defaults, so configs written before the fields keep their stage
        # keys and build ids.
        late = {"answer_format": "letter", "rejected_form": "as_sampled", "aletheia_src": None}
        return left_out_at_defaults(handler(self), late)

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
        if self.rejected_form != "as_sampled" and self.construction != "aletheia":
            raise ValueError(
                f"rejected_form: {self.rejected_form} is for construction aletheia; "
                "on_policy keeps both turns as sampled"
            )
        check_one_wording(self.aletheia_src, self.prompt_template, self.system_template)
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
            answer_format=self.answer_format,
            aletheia_src=self.aletheia_src,
        )
