"""Sample K verifier responses per instance through a generation backend and read their picks."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.metrics import Judged
from pipeline.instances.dpo.parse import parse_boxed_answer
from pipeline.instances.dpo.prompt import build_verifier_messages
from pipeline.sampling.backends.base import Backend, GenerationRequest

log = logging.getLogger(__name__)


def sample_split(
    backend: Backend,
    rows: list[dict[str, Any]],
    split: str,
    cfg: EvalConfig,
    responses_path: Path | None = None,
) -> list[Judged]:
    """One request per instance with n = K; every response is kept in `responses_path` (JSONL)."""
    requests = []
    for i, r in enumerate(rows):
        try:
            messages = build_verifier_messages(
                r["query"], r["candidates"], r["candidate_languages"], cfg.variant
            )
        except ValueError as e:
            raise ValueError(f"{split} row {i} (prompt_id={r['prompt_id']}): {e}") from e
        requests.append(
            GenerationRequest(
                request_id=f"{split}:{i}",
                messages=messages,
                n=cfg.k,
                temperature=cfg.temperature,
                top_p=cfg.top_p,
                max_tokens=cfg.max_new_tokens,
                seed=cfg.seed,
            )
        )
    texts: dict[int, list[str]] = {}
    errors: list[str] = []
    # progress=False: the transformers backend's bar puts the model path inside rich markup,
    # which fails on paths like /tmp/x (reported); evaluate() logs per split instead.
    for result in backend.generate(requests, progress=False):
        texts[int(result.request_id.split(":", 1)[1])] = [g.text for g in result.generations]
        errors += [
            g.finish_reason for g in result.generations if g.finish_reason.startswith("error")
        ]
    missing = [i for i in range(len(rows)) if i not in texts or len(texts[i]) != cfg.k]
    if missing:
        raise RuntimeError(
            f"{split}: backend {backend.name} returned no/short results for rows {missing[:10]}"
        )
    # A failed generation is scored as an invalid answer; a split where all of them failed
    # measures nothing, so it is an error (e.g. max_new_tokens past the model's context).
    if errors and len(errors) == len(rows) * cfg.k:
        raise RuntimeError(
            f"{split}: every generation failed, e.g. {errors[0]} "
            "(for a context overflow, lower EvalConfig.max_new_tokens / --max-new-tokens)"
        )
    if errors:
        log.warning(
            "%s: %d of %d generations failed (scored invalid), e.g. %s",
            split, len(errors), len(rows) * cfg.k, errors[0],
        )  # fmt: skip

    judged = []
    for i, r in enumerate(rows):
        picks = tuple(parse_boxed_answer(t, r["num_candidates"]) for t in texts[i])
        judged.append(
            Judged(
                prompt_id=r["prompt_id"],
                gold=r["chosen_answer"],
                pass_rates=tuple(r["pass_rates"]),
                picks=picks,
                adversarial=tuple(r["adversarial"]),
                problem_id=r["problem_id"],
            )
        )
    if responses_path is not None:
        responses_path.parent.mkdir(parents=True, exist_ok=True)
        with responses_path.open("w") as f:
            for i, j in enumerate(judged):
                f.write(
                    json.dumps(
                        {
                            "prompt_id": j.prompt_id,
                            "gold": j.gold,
                            "picks": j.picks,
                            "responses": texts[i],
                        }
                    )
                    + "\n"
                )
    return judged


def transformers_backend(model: str | Path, cfg: EvalConfig) -> Backend:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, device=cfg.device, dtype=cfg.dtype, batch_size=cfg.batch_size)
