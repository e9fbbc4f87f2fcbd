"""Sample verifier responses through a generation backend, as rows of the responses file.

Per instance: one listwise prompt (all candidates) with K samples, and, for lists of 3+
candidates when `pairwise` is on, one 2-candidate prompt per pair (i < j) with one sample
(Aletheia's round robin). Messages go to the backend unchanged: a Think prompt ends with the
assistant prefill `<think>\\n`, which the backend continues.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.protocol import round_robin_pairs
from pipeline.evaluate.responses import ResponseRow
from pipeline.sampling.backends.base import Backend, GenerationRequest

log = logging.getLogger(__name__)


def prompt_spec(cfg: EvalConfig) -> PromptSpec:
    return PromptSpec(
        style=cfg.style, template=cfg.prompt_template, system_template=cfg.system_template
    )


def _requests(rows: list[dict[str, Any]], split: str, cfg: EvalConfig) -> list[GenerationRequest]:
    spec = prompt_spec(cfg)
    requests = []
    for i, r in enumerate(rows):
        cands, langs = r["candidates"], r["candidate_languages"]
        prompts: list[tuple[str, list[str], list[str], int]] = [("list", cands, langs, cfg.k)]
        if cfg.pairwise:
            prompts += [
                (f"{a},{b}", [cands[a], cands[b]], [langs[a], langs[b]], 1)
                for a, b in round_robin_pairs(r["num_candidates"])
            ]
        for tag, c, lang, n in prompts:
            try:
                messages = build_messages(r["query"], c, lang, spec)
            except ValueError as e:
                raise ValueError(f"{split} row {i} (prompt_id={r['prompt_id']}): {e}") from e
            requests.append(
                GenerationRequest(
                    request_id=f"{split}:{i}:{tag}",
                    messages=messages,
                    n=n,
                    temperature=cfg.temperature,
                    top_p=cfg.top_p,
                    max_tokens=cfg.max_new_tokens,
                    seed=cfg.seed,
                )
            )
    return requests


def sample_split(
    backend: Backend, rows: list[dict[str, Any]], split: str, cfg: EvalConfig
) -> list[ResponseRow]:
    """Every response for one split, as responses-file rows (failed generations read as invalid)."""
    requests = _requests(rows, split, cfg)
    wanted = {q.request_id: q.n for q in requests}
    got: dict[str, list[str]] = {}
    errors: list[str] = []
    # The backend escapes the model path in its bar's label, so paths like /tmp/x are safe.
    for result in backend.generate(requests, progress=cfg.progress):
        got[result.request_id] = [g.text for g in result.generations]
        errors += [
            g.finish_reason for g in result.generations if g.finish_reason.startswith("error")
        ]
    short = [rid for rid, n in wanted.items() if len(got.get(rid, [])) != n]
    if short:
        raise RuntimeError(
            f"{split}: backend {backend.name} returned no/short results for {short[:10]}"
        )
    total = sum(wanted.values())
    # A split where every generation failed measures nothing (e.g. a budget past the context).
    if errors and len(errors) == total:
        raise RuntimeError(
            f"{split}: every generation failed, e.g. {errors[0]} "
            "(for a context overflow, lower EvalConfig.max_new_tokens / --max-new-tokens)"
        )
    if errors:
        log.warning(
            "%s: %d of %d generations failed (scored invalid), e.g. %s",
            split,
            len(errors),
            total,
            errors[0],
        )
    out = []
    for rid, texts in got.items():
        _, row, tag = rid.split(":", 2)
        pair = None if tag == "list" else tuple(int(x) for x in tag.split(","))
        for s, text in enumerate(texts):
            out.append(
                ResponseRow(
                    split=split, instance_id=rows[int(row)]["instance_id"],
                    pair=pair, sample=s, response=text,
                )
            )  # fmt: skip
    order = {r["instance_id"]: i for i, r in enumerate(rows)}
    out.sort(key=lambda r: (order[r.instance_id], r.pair or (-1, -1), r.sample))
    return out


def transformers_backend(model: str | Path, cfg: EvalConfig) -> Backend:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, device=cfg.device, dtype=cfg.dtype, batch_size=cfg.batch_size)
