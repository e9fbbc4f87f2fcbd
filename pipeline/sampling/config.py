"""Policy pool configs (YAML in configs/pools/): model sources and non-model origins."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from schemas.common import Language

ALL_LANGUAGES: list[Language] = ["python", "cpp", "java"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- backends
class TransformersOptions(_Strict):
    type: Literal["transformers"] = "transformers"
    device: str | None = None  # None: cuda when available, else cpu
    dtype: str | None = None  # e.g. bfloat16; None: bf16 on GPU, fp32 on CPU
    batch_size: int = Field(8, ge=1)  # sequences decoded together
    # Requests without answer_choices: `loop` (a sample's text does not depend on its batch)
    # or `generate` (transformers' generate over length-sorted batches: fast on a GPU).
    decoder: Literal["loop", "generate"] = "loop"
    # generate: tokens a batch may reach, rows x (longest prompt + budget); None: from the
    # free GPU memory (a fixed 65536 on a CPU)
    max_batch_tokens: int | None = Field(None, ge=1)
    # CPU threads torch uses while this backend generates (None: torch's default, one per
    # core). Tiny models on a small or shared machine run faster on one thread than on
    # threads waiting for each other, and their floats then do not depend on the core count.
    threads: int | None = Field(None, ge=1)


class ServeOptions(_Strict):
    """Launch `vllm serve` for this source (UNTESTED HERE: vLLM cannot be installed on our machines)."""

    python: str  # vLLM environment's interpreter
    tensor_parallel_size: int = 1
    gpus: list[int] | None = None
    extra_args: list[str] = Field(default_factory=list)
    startup_timeout_s: float = 1800.0


class OpenAIOptions(_Strict):
    type: Literal["openai"] = "openai"
    base_url: str | None = None  # required unless `serve` launches a server
    api_key_env: str | None = None  # name of the environment variable holding the key
    concurrency: int = Field(16, ge=1)
    max_retries: int = Field(6, ge=0)
    timeout_s: float = 600.0
    server_honours_n: bool | None = None  # None: detect
    guided: Literal["structured_outputs", "guided_regex"] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    serve: ServeOptions | None = None

    @model_validator(mode="after")
    def _where(self) -> OpenAIOptions:
        if (self.base_url is None) == (self.serve is None):
            raise ValueError("openai backend: give exactly one of base_url or serve")
        return self


class VLLMOptions(_Strict):
    type: Literal["vllm"] = "vllm"
    python: str | None = None  # vLLM environment's interpreter (None: this one)
    gpus: list[int] | None = None
    tensor_parallel_size: int = Field(1, ge=1)
    engine: Literal["vllm", "transformers"] = "vllm"  # transformers: tests of the worker I/O layer
    engine_args: dict[str, Any] = Field(default_factory=dict)
    chunk_size: int = Field(64, ge=1)


BackendOptions = Annotated[
    TransformersOptions | OpenAIOptions | VLLMOptions, Field(discriminator="type")
]


# --------------------------------------------------------------------------- sources
class TokenFilter(_Strict):
    """Aletheia's filters: drop prompts over M and completions over N tokens of a named tokenizer."""

    tokenizer: str  # a local path or hub id (already in the local cache)
    max_prompt_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)


class ModelSource(_Strict):
    kind: Literal["model"] = "model"
    name: str  # the generator id written to candidates (e.g. Qwen/Qwen2.5-Coder-7B-Instruct)
    model: str  # path, hub id or served model name
    revision: str | None = None
    tier: Literal["weak", "strong"]
    backend: BackendOptions = Field(default_factory=TransformersOptions)
    languages: list[Language] = Field(default_factory=lambda: list(ALL_LANGUAGES))
    samples_per_problem: int = Field(4, ge=1)  # per language
    temperature: float = Field(0.8, ge=0)
    top_p: float = Field(0.95, gt=0, le=1)
    max_tokens: int = Field(2048, ge=1)
    seed: int = 0
    chat_template: str | None = None  # override: inline Jinja text or a path to a file
    system_prompt: bool = True
    # Extra chat-template variables, e.g. {enable_thinking: false} for Qwen3 (which thinks
    # unless told not to); None: nothing passed.
    chat_template_kwargs: dict[str, Any] | None = None
    filters: TokenFilter | None = None
    shard_requests: int = Field(64, ge=1)  # requests per resumable shard

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # Left out while unset, so configs written before the field keep their hashes
        # (source fingerprints, stage keys, build ids).
        data = handler(self)
        if isinstance(data, dict) and data.get("chat_template_kwargs") is None:
            data.pop("chat_template_kwargs", None)
        return data

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
    kind: Literal["reference"] = "reference"
    tier: Literal["weak", "strong"] = "weak"
    languages: list[Language] = Field(default_factory=lambda: list(ALL_LANGUAGES))


class MutantSource(_Strict):
    """Mutants of the sources' correct reference solutions."""

    kind: Literal["mutant"] = "mutant"
    tier: Literal["weak", "strong"] = "weak"
    languages: list[Language] = Field(default_factory=lambda: list(ALL_LANGUAGES))
    operators: list[str] | None = None  # None: the default set
    per_candidate: int = Field(3, ge=1)
    seed: int = 0


Source = Annotated[ModelSource | ReferenceSource | MutantSource, Field(discriminator="kind")]


class SampleConfig(_Strict):
    sources: list[Source]
    progress: bool = True

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
