"""The highest-mean-log-prob baseline for samples that do not carry their log-probabilities:
score each completion under the policy that wrote it.

A policy evaluation keeps each sample's completion text, not its token log-probabilities, so
this scores the completion again, teacher-forced, after the same chat prompt the sampling
stage built (`chat_messages`, the system turn included, as `evaluate-policy` sends it),
through the transformers backend's own loading and prompt rendering. The mean is over the
completion's tokens at temperature 1 (the model's distribution, not the sampling
temperature's), which is what the baseline ranks by. Writes a JSONL the Best-of-N samples
reader takes (`mean_logprob` per sample).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.bestofn.samples import POLICY_SAMPLES
from pipeline.errors import UserError
from schemas.problem import Problem


def mean_logprob(backend: Any, messages: list[dict[str, str]], completion: str) -> float | None:
    """The mean log-probability of `completion`'s tokens after `messages` (None: empty)."""
    import torch

    from pipeline.sampling.backends.base import GenerationRequest

    target = backend.encode(completion)
    if not target:
        return None
    prompt = backend.encode(
        backend.render_prompt(GenerationRequest(request_id="score", messages=messages))
    )
    ids = torch.tensor([prompt + target], device=backend.device)
    with torch.no_grad():
        logits = backend.model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
    logp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, len(prompt) :, None])
    return float(logp.mean())


def score_policy_samples(
    policy: str | Path,
    problems: dict[str, Problem],
    evaluation: Path,
    out: Path,
    *,
    device: str | None = None,
    system_prompt: bool = True,
) -> Path:
    """`evaluation`'s samples (an evaluate-policy folder) with each completion's mean token
    log-probability under `policy`, as a JSONL at `out`."""
    import pyarrow.parquet as pq

    from pipeline.sampling.backends.transformers_backend import TransformersBackend
    from pipeline.sampling.prompts import chat_messages

    path = Path(evaluation) / POLICY_SAMPLES
    if not path.is_file():
        raise UserError(f"{evaluation}: no {POLICY_SAMPLES} (an evaluate-policy report folder)")
    rows = pq.read_table(path, columns=["problem_id", "sample_index", "code", "completion"])
    backend = TransformersBackend(policy, device=device)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as f:
            for r in rows.to_pylist():
                messages = chat_messages(problems[r["problem_id"]], "python", system=system_prompt)
                row = {
                    "problem_id": r["problem_id"],
                    "sample_index": r["sample_index"],
                    "code": r["code"] or "",
                    "language": "python",
                    "mean_logprob": mean_logprob(backend, messages, r["completion"] or ""),
                }
                f.write(json.dumps(row) + "\n")
    finally:
        backend.close()
    return out
