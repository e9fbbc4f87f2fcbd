"""Sampling verifier responses for instances through the generation backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.instances.config import DPOConfig
from pipeline.instances.dpo.parse import parse_boxed_answer
from pipeline.instances.dpo.prompt import build_verifier_messages
from pipeline.sampling.backends.base import Backend, GenerationRequest
from pipeline.sampling.seeds import derive_seed
from schemas.instance import ANSWER_LETTERS


@dataclass(frozen=True)
class Response:
    """One real verifier response and the letter it picked (None: invalid)."""

    prompt_id: str
    variant: str
    judge_model: str
    sample_index: int
    text: str
    answer: str | None
    finish_reason: str


def _request_id(prompt_id: str, variant: str, judge: str) -> str:
    return f"{prompt_id}|{variant}|{judge}"


def verifier_requests(
    rows: Sequence[Mapping[str, Any]], variant: str, judge: str, config: DPOConfig, n: int
) -> list[GenerationRequest]:
    """One request (n samples) per instance for one judge and prompt variant."""
    out = []
    for row in rows:
        k = row["num_candidates"]
        out.append(
            GenerationRequest(
                request_id=_request_id(row["instance_id"], variant, judge),
                messages=build_verifier_messages(
                    row["query"],
                    row["candidates"],
                    row["candidate_languages"],
                    variant,  # type: ignore[arg-type]
                ),
                n=n,
                temperature=config.temperature,
                top_p=config.top_p,
                max_tokens=config.max_tokens,
                seed=derive_seed(config.seed, row["instance_id"], variant, judge),
                answer_choices=list(ANSWER_LETTERS[:k]) if config.constrain_answer else None,
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
    progress: bool = True,
) -> dict[str, list[Response]]:
    """instance_id -> this judge's responses. Backend errors (finish_reason error:...) are not
    responses a verifier gave, so they are dropped here and counted by the caller."""
    by_id = {row["instance_id"]: row for row in rows}
    out: dict[str, list[Response]] = {pid: [] for pid in by_id}
    requests = verifier_requests(rows, variant, judge, config, n)
    for start in range(0, len(requests), config.batch_size):
        chunk = requests[start : start + config.batch_size]
        for result in backend.generate(chunk, progress=progress):
            prompt_id = result.request_id.split("|", 1)[0]
            k = by_id[prompt_id]["num_candidates"]
            for i, gen in enumerate(result.generations):
                out[prompt_id].append(
                    Response(
                        prompt_id=prompt_id,
                        variant=variant,
                        judge_model=judge,
                        sample_index=i,
                        text=gen.text,
                        answer=parse_boxed_answer(gen.text, k),
                        finish_reason=gen.finish_reason,
                    )
                )
    for responses in out.values():
        responses.sort(key=lambda r: r.sample_index)  # arrival order does not matter
    return out
