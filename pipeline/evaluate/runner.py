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

from pipeline.common.answers import answer_choices, column_answer_format
from pipeline.common.progress import track
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.evaluate.checkpoint import GenerationLog
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.protocol import round_robin_pairs
from pipeline.evaluate.responses import ResponseRow
from pipeline.sampling.backends.base import Backend, GenerationRequest
from pipeline.sampling.seeds import derive_seed

log = logging.getLogger(__name__)


def prompt_spec(cfg: EvalConfig, rows: list[dict[str, Any]] | None = None) -> PromptSpec:
    """The evaluation's prompt; it asks for the box form `cfg.answer_format` names, else the
    one the rows' `chosen_answer` is published in (`letter` without rows)."""
    form = cfg.answer_format
    if form is None:
        # rows without a gold answer (unlabelled) say nothing about the form
        form = column_answer_format(
            [r["chosen_answer"] for r in rows or [] if r.get("chosen_answer")]
        )
    return PromptSpec(
        style=cfg.style,
        template=cfg.prompt_template,
        system_template=cfg.system_template,
        answer_format=form,
        aletheia_src=cfg.aletheia_src,
    )


def eval_requests(
    rows: list[dict[str, Any]], split: str, cfg: EvalConfig
) -> list[GenerationRequest]:
    """A split's generation requests: the listwise prompt (K samples) per instance, and its
    round-robin pair prompts (one sample each) when `cfg.pairwise`."""
    spec = prompt_spec(cfg, rows)
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
                    # One seed per prompt, from the run's: prompts sharing a seed would draw
                    # the same random numbers, correlating samples across instances.
                    seed=derive_seed(cfg.seed, split, r["instance_id"], tag),
                    answer_choices=(
                        answer_choices(len(c), spec.answer_format) if cfg.constrain_answer else None
                    ),
                )
            )
    return requests


def sample_splits(
    backend: Backend,
    instances: dict[str, list[dict[str, Any]]],
    cfg: EvalConfig,
    partial: GenerationLog | None = None,
) -> list[ResponseRow]:
    """Every response for every split, as responses-file rows (failed generations read as
    invalid). All splits go to the backend in one call: the transformers backend then batches
    prompts of similar length across splits, and a server stays full to the end. With
    `partial`, prompts an interrupted run finished are reused and new ones logged there."""
    requests = [q for split, rows in instances.items() for q in eval_requests(rows, split, cfg)]
    wanted = {q.request_id: q.n for q in requests}
    todo, done = partial.reuse(requests) if partial else (requests, {})
    got: dict[str, list[str]] = {rid: texts for rid, (texts, _) in done.items()}
    errors: dict[str, list[str]] = {split: [] for split in instances}
    for rid, (_, reasons) in done.items():
        errors[rid.split(":", 1)[0]] += [r for r in reasons if r.startswith("error")]
    # Ticks for a flow's `[progress] evaluate ...` lines (nothing shown without a listener).
    tracker = track("responses", sum(q.n for q in todo))
    # The backend escapes the model path in its bar's label, so paths like /tmp/x are safe.
    for result in backend.generate(todo, progress=cfg.progress):
        tracker.advance(len(result.generations))
        if partial:
            partial.add(result)
        got[result.request_id] = [g.text for g in result.generations]
        errors[result.request_id.split(":", 1)[0]] += [
            g.finish_reason for g in result.generations if g.finish_reason.startswith("error")
        ]
    short = [rid for rid, n in wanted.items() if len(got.get(rid, [])) != n]
    if short:
        raise RuntimeError(f"backend {backend.name} returned no/short results for {short[:10]}")
    out: list[ResponseRow] = []
    for split, rows in instances.items():
        total = sum(n for rid, n in wanted.items() if rid.startswith(f"{split}:"))
        _check_errors(split, errors[split], total)
        out += _response_rows(
            split, rows, {rid: t for rid, t in got.items() if rid.startswith(f"{split}:")}
        )
    return out


def _check_errors(split: str, errors: list[str], total: int) -> None:
    # A split where every generation failed measures nothing (e.g. a budget past the context).
    if errors and len(errors) == total:
        raise RuntimeError(f"{split}: every generation failed, e.g. {errors[0]}{_hint(errors[0])}")
    if errors:
        log.warning(
            "%s: %d of %d generations failed (scored invalid), e.g. %s",
            split,
            len(errors),
            total,
            errors[0],
        )


def _hint(error: str) -> str:
    if "prompt_too_long" in error:
        return " (a context overflow: lower EvalConfig.max_new_tokens / --max-new-tokens)"
    if "continue_final_message" in error:
        return (
            " (the server cannot continue the Think prompt's `<think>` prefill: serve the model "
            "with vLLM or SGLang, or evaluate with style: instruct)"
        )
    return ""


def _response_rows(
    split: str, rows: list[dict[str, Any]], got: dict[str, list[str]]
) -> list[ResponseRow]:
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


def open_backend(model: str | Path, cfg: EvalConfig) -> Backend:
    """The backend `cfg.backend` names, opened by the sampling stage's factory (a transformers
    model loaded here, an OpenAI-compatible server, or offline vLLM workers)."""
    from pipeline.sampling.backends.factory import make_backend
    from pipeline.sampling.config import ModelSource

    # `tier` is a pool field with no meaning here; every other field the requests carry.
    source = ModelSource(name=str(model), model=str(model), tier="strong", backend=cfg.backend)
    return make_backend(source)
