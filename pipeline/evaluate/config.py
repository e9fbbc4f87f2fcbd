"""Evaluation settings (YAML-loadable like the training configs). Defaults: Aletheia's protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)

from pipeline.common.config import left_out_at_defaults
from pipeline.common.verifier_prompt import check_one_wording
from pipeline.sampling.config import BackendOptions, TransformersOptions

EVAL_SPLITS: tuple[str, ...] = ("heldout", "strong", "hard", "adv")
# Once top-level fields; now the transformers backend's own options (moved there on load).
MOVED_TO_BACKEND: tuple[str, ...] = ("device", "dtype", "batch_size")


# Rows a generate-decoder batch may hold: high enough that the KV-cache budget (40% of the free
# GPU memory) decides, not the count. Each step costs the model's Python and launches once
# for the whole batch, so fewer, larger batches are faster while the cache fits (on the H200,
# the demo's 2,496 evaluation sequences in one batch; docs/scale.md, "Evaluation speed").
EVAL_BATCH_ROWS = 4096


def default_backend() -> TransformersOptions:
    """This process's transformers backend, decoding with the generate decoder in large
    length-sorted batches (up to EVAL_BATCH_ROWS sequences, the KV cache within the free GPU
    memory)."""
    return TransformersOptions(decoder="generate", batch_size=EVAL_BATCH_ROWS)


def with_eval_defaults(backend: Any) -> Any:
    """Transformers options given as a mapping start from the evaluation's defaults (the
    generate decoder, EVAL_BATCH_ROWS sequences), not the sampling stage's (its per-token loop)."""
    if isinstance(backend, dict) and backend.get("type", "transformers") == "transformers":
        return default_backend().model_dump() | backend
    return backend


def backend_option(text: str) -> BackendOptions:
    """`--backend`: a backend type (`transformers`: the evaluation's default, `vllm`, `openai`
    needs a URL), an http(s) URL of an OpenAI-compatible server, or a YAML mapping of options."""
    text = text.strip()
    if text.startswith(("http://", "https://")):
        data: Any = {"type": "openai", "base_url": text}
    elif text in ("transformers", "vllm", "openai"):
        data = {"type": text}
    else:
        data = yaml.safe_load(text)
        if not isinstance(data, dict):
            raise ValueError(
                f"--backend {text!r}: give transformers, vllm, a server URL or a YAML mapping "
                "such as '{type: openai, base_url: http://127.0.0.1:8000/v1}'"
            )
    try:
        return TypeAdapter(BackendOptions).validate_python(with_eval_defaults(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "backend"
        raise ValueError(f"--backend {text!r}: {where}: {err['msg']}") from None


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    splits: list[str] = Field(
        default_factory=lambda: list(EVAL_SPLITS),
        description="The evaluation configs to score (heldout, strong, hard, adv).",
    )
    split: Literal["test", "full"] = Field(
        "test",
        description="Which split of each evaluation config is scored: `test` (Aletheia's: up "
        "to 250 rows per list size and language) or `full` (every row).",
    )
    k: int = Field(
        default=8, ge=1, description="Listwise responses per instance (top-1 reads the first)."
    )
    style: Literal["think", "instruct"] = Field(
        "think", description="The verifier prompt's style (pipeline.common.verifier_prompt)."
    )
    prompt_template: str | None = Field(
        None, description="User-turn template file; None = our wording."
    )
    system_template: str | None = Field(
        None, description="Instruct system-turn template file; None = our wording."
    )
    answer_rule: Literal["after_think", "first_box"] = Field(
        "after_think",
        description="How an answer is read: after_think, the first box after the last "
        "</think> (the training reward's rule, `src/rewards.py`: a box inside the thinking "
        "is no answer); first_box, the first box of the whole completion with `[[X]]` "
        "unwrapped as `src/evaluate.py` does (Aletheia's evaluation scripts, "
        "`evaluate_ckpt.py`). The report says which rule it used.",
    )
    aletheia_src: str | None = Field(
        None,
        description="A checkout of Aletheia's code (or one of its prompt files): the prompt "
        "is then Aletheia's own wording, read from its src/prompts.py with `ast`, never run "
        "(pipeline/common/aletheia_prompts.py); excludes prompt_template / system_template. "
        "None = the project's wording. The report names the wording used.",
    )
    answer_format: Literal["letter", "bracketed"] | None = Field(
        None,
        description="The answer form our prompt asks for: `\\boxed{X}`, or `\\boxed{[[X]]}` "
        "(Aletheia's cerebrm-era prompts; constrained decoding then writes that form). None "
        "= the form of the evaluated rows' `chosen_answer` (a run config gives "
        "`publish.answer_format`). Both forms are read either way.",
    )
    pairwise: bool = Field(
        True,
        description="Round-robin pair prompts for lists of 3+ (Aletheia's ranking metrics: "
        "tau-b, NDCG, transitivity).",
    )
    temperature: float = Field(0.6, description="Sampling temperature (Aletheia's evaluation).")
    top_p: float = Field(0.95, description="Nucleus sampling (Aletheia's evaluation).")
    max_new_tokens: int = Field(
        default=16384, ge=1, description="Response budget in tokens (Aletheia's default)."
    )
    limit: int | None = Field(
        default=None, ge=1, description="First N instances per split (smoke runs); None = all."
    )
    seed: int = Field(0, description="Seed every prompt's own seed is derived from.")
    invalid_flag_above: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="A split whose share of invalid answers (listwise responses, or pair "
        "answers) is above this is flagged in the report: its accuracy is mostly 'no answer' "
        "and its ranking metrics rest on few lists.",
    )
    backend: BackendOptions = Field(
        default_factory=default_backend,
        description="How responses are generated: a sampling backend's options, as a pool "
        "source's `backend` (type transformers | openai | vllm); `model` is then a folder, a "
        "hub id or a served model's name.",
    )
    progress: bool = Field(True, description="A progress bar while responses are generated.")
    constrain_answer: bool = Field(
        False,
        description="Ours, not Aletheia's (it samples freely): each response is free text, "
        "then `\\boxed{X}` with X a valid letter the model picks (constrained decoding, as "
        "`dpo.constrain_answer`). For models never trained on the format, whose free answers "
        "never parse; their scores then sit near the random baseline.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # Unset, left out: a run config's `evaluate:` dump (its card's copy) stays as it was.
        return left_out_at_defaults(handler(self), {"aletheia_src": None})

    @model_validator(mode="after")
    def _one_wording(self) -> EvalConfig:
        check_one_wording(self.aletheia_src, self.prompt_template, self.system_template)
        return self

    @model_validator(mode="before")
    @classmethod
    def _moved_variant(cls, data: Any) -> Any:
        if isinstance(data, dict) and "variant" in data:
            raise ValueError("variant is now style (think | instruct; no_think is now instruct)")
        return data

    @model_validator(mode="before")
    @classmethod
    def _moved_backend_options(cls, data: Any) -> Any:
        """Transformers options start from the evaluation's defaults; device / dtype /
        batch_size at the top level (older configs) go into the default transformers backend,
        and beside an explicit `backend` they are ambiguous."""
        if not isinstance(data, dict):
            return data
        if "backend" in data:
            data = data | {"backend": with_eval_defaults(data["backend"])}
        if not any(k in data for k in MOVED_TO_BACKEND):
            return data
        moved = {k: data[k] for k in MOVED_TO_BACKEND if k in data}
        if "backend" in data:
            raise ValueError(
                f"{', '.join(moved)}: set them inside backend (backend: {{type: transformers, "
                f"{', '.join(f'{k}: ...' for k in moved)}}}), not beside it"
            )
        rest = {k: v for k, v in data.items() if k not in moved}
        return rest | {"backend": default_backend().model_dump() | moved}

    @classmethod
    def from_yaml(cls, path: str | Path) -> EvalConfig:
        return cls.model_validate(yaml.safe_load(Path(path).read_text()) or {})
