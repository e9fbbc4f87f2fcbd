"""Sampling verifier responses for instances through the generation backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.common.answers import answer_choices, parse_answer
from pipeline.common.progress import track
from pipeline.common.verifier_prompt import build_messages, prefill
from pipeline.instances.dpo.config import DPOConfig
from pipeline.sampling.backends.base import Backend, GenerationRequest
from pipeline.sampling.seeds import derive_seed


@dataclass(frozen=True)
class Response:
    """One real verifier response and the letter it picked (None: no valid answer).

    `text` is the whole assistant turn: the prompt's pre-fill (Think: `<think>\\n`) and
    what the model generated after it."""

    instance_id: str
    variant: str
    judge_model: str
    sample_index: int
    text: str
    answer: str | None
    finish_reason: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    round: str = "judges"  # the sampling round that wrote it: judges, regenerate, fallback


def _request_id(instance_id: str, variant: str, judge: str) -> str:
    return f"{instance_id}|{variant}|{judge}"


def verifier_messages(
    row: Mapping[str, Any], variant: str, config: DPOConfig
) -> list[dict[str, str]]:
    """The chat messages one instance is shown with (the one prompt module's)."""
    return build_messages(
        row["query"],
        row["candidates"],
        row["candidate_languages"],
        config.prompt_spec(variant),  # type: ignore[arg-type]
    )


def request_seed(seed: int, instance_id: str, variant: str, judge: str, round_: str) -> int:
    """The sampling seed of one request. The regeneration round asks the same judge about the
    same instance again, so it needs seeds of its own (the first round's are kept as they
    were, so existing responses stay valid)."""
    parts: tuple[object, ...] = (seed, instance_id, variant, judge)
    return derive_seed(*parts, round_) if round_ == "regenerate" else derive_seed(*parts)


def verifier_requests(
    rows: Sequence[Mapping[str, Any]],
    variant: str,
    judge: str,
    config: DPOConfig,
    n: int,
    round_: str = "judges",
) -> list[GenerationRequest]:
    """One request (n samples) per instance for one judge and prompt variant."""
    out = []
    for row in rows:
        k = row["num_candidates"]
        out.append(
            GenerationRequest(
                request_id=_request_id(row["instance_id"], variant, judge),
                messages=verifier_messages(row, variant, config),
                n=n,
                temperature=config.temperature,
                top_p=config.top_p,
                max_tokens=config.max_tokens,
                seed=request_seed(config.seed, row["instance_id"], variant, judge, round_),
                answer_choices=(
                    answer_choices(k, config.answer_format) if config.constrain_answer else None
                ),
            )
        )
    return out


def sample_responses(
    rows: Sequence[Mapping[str, Any]],
    backend: Backend,
    judge: str,
    variant: str,
    config: DPOConfig,
    n: int,
    *,
    round_: str = "judges",
    progress: bool = True,
) -> dict[str, list[Response]]:
    """instance_id -> this judge's responses. Backend errors (finish_reason error:...) are
    kept here, marked, and left out of pairs by the callers (they are not responses)."""
    by_id = {row["instance_id"]: row for row in rows}
    out: dict[str, list[Response]] = {iid: [] for iid in by_id}
    requests = verifier_requests(rows, variant, judge, config, n, round_)
    tracker = track("responses", len(requests) * n)
    for start in range(0, len(requests), config.batch_size):
        chunk = requests[start : start + config.batch_size]
        pre = {r.request_id: prefill(r.messages or []) for r in chunk}
        for result in backend.generate(chunk, progress=progress):
            instance_id = result.request_id.split("|", 1)[0]
            tracker.advance(len(result.generations))
            k = by_id[instance_id]["num_candidates"]
            for i, gen in enumerate(result.generations):
                text = pre[result.request_id] + gen.text
                out[instance_id].append(
                    Response(
                        instance_id=instance_id,
                        variant=variant,
                        judge_model=judge,
                        sample_index=i,
                        text=text,
                        answer=parse_answer(text, k),
                        finish_reason=gen.finish_reason,
                        prompt_tokens=gen.prompt_tokens,
                        completion_tokens=gen.completion_tokens,
                        round=round_,
                    )
                )
    for responses in out.values():
        responses.sort(key=lambda r: r.sample_index)  # arrival order does not matter
    return out
