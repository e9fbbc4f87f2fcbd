"""The one narrow interface every generation backend implements (docs/architecture.md).

Policy sampling (candidates) and verifier-response sampling (DPO) both go through it,
so a backend written once serves both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


def continues_final_message(messages: list[dict[str, str]] | None) -> bool:
    """True when the last chat turn is the assistant's: a pre-fill (e.g. the verifier's
    `<think>\\n`) that generation continues instead of opening a new assistant turn."""
    return bool(messages) and messages[-1].get("role") == "assistant"  # type: ignore[index]


class GenerationRequest(BaseModel):
    """One prompt, `n` samples. Exactly one of `prompt` (raw text) or `messages` (chat).

    When `messages` ends with an assistant turn, every backend continues that turn (chat
    template rendered with `continue_final_message`, no new generation prompt), and the
    generated text does NOT repeat the pre-fill: callers that score the whole turn prepend it
    (`pipeline.common.verifier_prompt.prefill`), as TRL does for reward functions.
    """

    model_config = ConfigDict(extra="forbid")

    request_id: str
    prompt: str | None = None
    messages: list[dict[str, str]] | None = None
    n: int = Field(default=1, ge=1)
    temperature: float = 0.8
    top_p: float = 0.95
    max_tokens: int = Field(default=1024, ge=1)
    seed: int | None = None
    # When set, the completion must end in `\boxed{X}` with X one of these (constrained
    # decoding: the model still chooses X itself). Used for verifier responses.
    answer_choices: list[str] | None = None
    # Extra variables for the chat template (e.g. Qwen3's `enable_thinking`); chat requests only.
    chat_template_kwargs: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_prompt(self) -> GenerationRequest:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError(f"request {self.request_id}: give exactly one of prompt or messages")
        return self


class Generation(BaseModel):
    text: str
    finish_reason: str  # stop | length | error:<reason>
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class GenerationResult(BaseModel):
    request_id: str
    model: str
    model_revision: str | None = None
    backend: str
    generations: list[Generation]


class Backend(ABC):
    """A source of completions. Implementations: openai, vllm, transformers."""

    name: str

    @abstractmethod
    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        """Yield one result per request (any order; match on request_id)."""

    def close(self) -> None:
        """Release servers, subprocesses or GPU memory."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
