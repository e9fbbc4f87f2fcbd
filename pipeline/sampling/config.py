"""Policy pool configs (YAML in configs/pools/): model sources and non-model origins."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from pipeline.common.config import left_out_at_defaults
from schemas.common import Language

ALL_LANGUAGES: list[Language] = ["python", "cpp", "java"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- backends
class TransformersOptions(_Strict):
    type: Literal["transformers"] = Field(
        "transformers", description="Generate in this process with transformers."
    )
    device: str | None = Field(None, description="None = cuda when available, else cpu.")
    dtype: str | None = Field(
        None, description="e.g. bfloat16; None = bf16 on a GPU, fp32 on a CPU."
    )
    batch_size: int = Field(8, ge=1, description="Sequences decoded together.")
    decoder: Literal["loop", "generate"] = Field(
        "loop",
        description="For requests without answer_choices: `loop` (a sample's text does not "
        "depend on its batch) or `generate` (transformers' generate over length-sorted "
        "batches: fast on a GPU).",
    )
    max_batch_tokens: int | None = Field(
        None,
        ge=1,
        description="generate: tokens a batch may reach, rows x (longest prompt + budget); "
        "None = from the free GPU memory (a fixed 65536 on a CPU).",
    )
    threads: int | None = Field(
        None,
        ge=1,
        description="CPU threads torch uses while this backend generates; None = torch's "
        "default (one per core). Tiny models on a small or shared machine run faster on one "
        "thread, and their floats then do not depend on the core count.",
    )


class ServeOptions(_Strict):
    """Launch `vllm serve` for this source (UNTESTED HERE: vLLM cannot be installed on our machines)."""

    python: str = Field(description="The vLLM environment's interpreter.")
    tensor_parallel_size: int = Field(1, description="GPUs one model is split across.")
    gpus: list[int] | None = Field(
        None, description="GPU indices the server may use; None = all visible."
    )
    extra_args: list[str] = Field(
        default_factory=list, description="More `vllm serve` arguments, as they are."
    )
    startup_timeout_s: float = Field(
        1800.0, description="Seconds to wait for the server to answer before giving up."
    )


class OpenAIOptions(_Strict):
    type: Literal["openai"] = Field(
        "openai", description="An OpenAI-compatible HTTP server (vLLM, SGLang, hosted APIs)."
    )
    base_url: str | None = Field(
        None, description="The server's URL; required unless `serve` launches a server."
    )
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the API key."
    )
    concurrency: int = Field(16, ge=1, description="Requests in flight at once.")
    max_retries: int = Field(6, ge=0, description="Retries of a failed request.")
    timeout_s: float = Field(600.0, description="Seconds one request may take.")
    server_honours_n: bool | None = Field(
        None,
        description="Whether the server returns `n` choices per request; None = find out "
        "from the first answer.",
    )
    guided: Literal["structured_outputs", "guided_regex"] | None = Field(
        None,
        description="The server's guided-decoding field, needed for answer_choices: "
        "structured_outputs (vLLM >= 0.10) or guided_regex (older vLLM); None = none.",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="More request-body fields, sent as they are."
    )
    serve: ServeOptions | None = Field(
        None, description="Launch `vllm serve` for this source instead of using `base_url`."
    )

    @model_validator(mode="after")
    def _where(self) -> OpenAIOptions:
        if (self.base_url is None) == (self.serve is None):
            raise ValueError("openai backend: give exactly one of base_url or serve")
        return self


class VLLMOptions(_Strict):
    type: Literal["vllm"] = Field(
        "vllm", description="Offline vLLM in a worker process (UNTESTED HERE)."
    )
    python: str | None = Field(
        None, description="The vLLM environment's interpreter; None = this one."
    )
    gpus: list[int] | None = Field(
        None, description="GPU indices the worker may use; None = all visible."
    )
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs one model is split across.")
    engine: Literal["vllm", "transformers"] = Field(
        "vllm", description="transformers: tests of the worker's I/O layer without vLLM."
    )
    engine_args: dict[str, Any] = Field(
        default_factory=dict, description="More vLLM engine arguments, passed as they are."
    )
    chunk_size: int = Field(64, ge=1, description="Requests the worker generates per chunk.")


BackendOptions = Annotated[
    TransformersOptions | OpenAIOptions | VLLMOptions, Field(discriminator="type")
]


# --------------------------------------------------------------------------- sources
class TokenFilter(_Strict):
    """Aletheia's filters: drop prompts over M and completions over N tokens of a named tokenizer."""

    tokenizer: str = Field(
        description="The tokenizer that counts: a local path or hub id (already in the local "
        "cache)."
    )
    max_prompt_tokens: int | None = Field(
        None, ge=1, description="Drop prompts over this many tokens; None = no cap."
    )
    max_completion_tokens: int | None = Field(
        None, ge=1, description="Drop completions over this many tokens; None = no cap."
    )


class ModelSource(_Strict):
    kind: Literal["model"] = Field("model", description="Candidates sampled from a model.")
    name: str = Field(
        description="The generator id written to candidates (e.g. Qwen/Qwen2.5-Coder-7B-Instruct)."
    )
    model: str = Field(description="A local path, a hub id or a served model name.")
    revision: str | None = Field(
        None,
        description="The model's revision; for a fitted policy (`policies`) set by the fit.",
    )
    tier: Literal["weak", "strong"] = Field(
        description="The candidates' tier: which instance splits may use them (assemble.splits)."
    )
    backend: BackendOptions = Field(
        default_factory=TransformersOptions,
        description="How the model generates (by `type`: transformers, openai, vllm).",
    )
    languages: list[Language] = Field(
        default_factory=lambda: list(ALL_LANGUAGES), description="Languages sampled."
    )
    samples_per_problem: int = Field(4, ge=1, description="Samples per problem and language.")
    temperature: float = Field(0.8, ge=0, description="Sampling temperature.")
    top_p: float = Field(0.95, gt=0, le=1, description="Nucleus sampling mass.")
    max_tokens: int = Field(2048, ge=1, description="Most tokens generated per sample.")
    seed: int = Field(0, description="Sampling seed.")
    chat_template: str | None = Field(
        None, description="Chat template override: inline Jinja text or a path to a file."
    )
    system_prompt: bool = Field(True, description="Send the system turn.")
    chat_template_kwargs: dict[str, Any] | None = Field(
        None,
        description="Extra chat-template variables, e.g. {enable_thinking: false} for Qwen3 "
        "(which thinks unless told not to); None = nothing passed.",
    )
    filters: TokenFilter | None = Field(
        None, description="Aletheia's token-length filters; None = none."
    )
    shard_requests: int = Field(64, ge=1, description="Requests per resumable shard.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # Left out while unset, so configs written before the field keep their hashes
        # (source fingerprints, stage keys, build ids).
        return left_out_at_defaults(handler(self), {"chat_template_kwargs": None})

    def chat_template_text(self) -> str | None:
        if self.chat_template is None:
            return None
        p = Path(self.chat_template)
        return (
            p.read_text(encoding="utf-8")
            if "{" not in self.chat_template and p.is_file()
            else (self.chat_template)
        )


class ReferenceSource(_Strict):
    kind: Literal["reference"] = Field(
        "reference", description="The problems' own reference solutions as candidates."
    )
    tier: Literal["weak", "strong"] = Field("weak", description="The pool they join.")
    languages: list[Language] = Field(
        default_factory=lambda: list(ALL_LANGUAGES), description="Languages taken."
    )


class MutantSource(_Strict):
    """Mutants of the sources' correct reference solutions."""

    kind: Literal["mutant"] = Field(
        "mutant", description="Mutants of the correct reference solutions as candidates."
    )
    tier: Literal["weak", "strong"] = Field("weak", description="The pool they join.")
    languages: list[Language] = Field(
        default_factory=lambda: list(ALL_LANGUAGES), description="Languages mutated."
    )
    operators: list[str] | None = Field(
        None,
        description="Mutation operators (pipeline/sampling/mutants.py); None = the default set.",
    )
    per_candidate: int = Field(3, ge=1, description="Most distinct mutants per reference solution.")
    seed: int = Field(0, description="Seed of the mutation choices.")


Source = Annotated[ModelSource | ReferenceSource | MutantSource, Field(discriminator="kind")]


class SampleConfig(_Strict):
    sources: list[Source] = Field(
        description="The policy pool: model sources, references and mutants (by `kind`)."
    )
    progress: bool = Field(
        True, description="Show the stage's progress (display only: not in the build id)."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> SampleConfig:
        names = [s.name for s in self.sources if isinstance(s, ModelSource)]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"model source names must be unique; repeated: {sorted(dup)}")
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> SampleConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping with `sources`")  # noqa: TRY004 - bad content
        return cls.model_validate(data)
