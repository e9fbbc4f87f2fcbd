"""`aletheia train --show-example N`: the first N training examples exactly as the trainer
will see them (the convention of axolotl's preprocess debug view), in seconds: the tokenizer
is loaded, never the weights.

Per example: the decoded prompt tokens, the decoded loss tokens (DPO: chosen and rejected),
the token counts, and whether the method's `max_length` cuts the sequence. The rows go through
the trainers' own code (pipeline.train.data, pipeline.train.sequences, the training tokenizer)
and are tokenized as TRL tokenizes text rows, so what is shown is what is trained
(tests/train/test_think_kept.py compares the two). RAFT, STaR and ReST-EM train on responses
they sample: the newest episode's kept samples when an episode has sampled, else an
illustrative response (marked so) in the shape the prompt asks for. GRPO and RLVR sample
their completions while training: the prompt is shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import THINK_PREFILL
from pipeline.train.config import TrainConfig

SEQUENCE_METHODS = ("dpo", "sft", "raft", "star", "restem")


@dataclass
class Example:
    label: str  # which row
    prompt_ids: list[int]
    parts: dict[str, list[int]] = field(default_factory=dict)  # loss tokens by name
    note: str | None = None


@dataclass
class Showing:
    header: list[str]
    tokenizer: Any
    examples: list[Example]
    max_length: int | None = None
    truncation_mode: str = "keep_start"


def _trl_args(cfg: TrainConfig) -> dict[str, Any]:
    """The method's TRL fields as its trainer gets them (section, then trainer_overrides)."""
    if cfg.method in ("raft", "star", "restem"):
        from pipeline.train.raft import episode_sft_args
        from pipeline.train.self_training import as_raft

        args = episode_sft_args(as_raft(cfg))
    else:
        args = getattr(cfg, cfg.method).trl_args()
    return {**args, **cfg.trainer_overrides}


def _label(row: dict[str, Any], i: int) -> str:
    ident = row.get("instance_id") or row.get("prompt_id") or row.get("problem_id")
    return f"row {i}" + (f" ({ident})" if ident else "")


def _table(cfg: TrainConfig, n: int) -> Any:
    limit = min(n, cfg.data.limit) if cfg.data.limit else n
    return read_config(cfg.data.dir, cfg.data.config, limit, cfg.data.split)


def illustrative_response(row: dict[str, Any], style: str) -> str:
    """A stand-in for a sampled response, in the shape the prompt asks for."""
    box = "\\boxed{" + row["chosen_answer"] + "}"
    if style == "think":
        return f"{THINK_PREFILL}(the model's reasoning, sampled during training)\n</think>\n{box}"
    return f"Analysis: (the model's analysis, sampled during training)\nFinal Answer: {box}"


def _newest_samples(cfg: TrainConfig) -> tuple[int, list[dict[str, Any]]] | None:
    from pipeline.train.raft import SAMPLES_FILE, episode_dir

    for episode in reversed(range(cfg.raft.episodes)):
        path = episode_dir(cfg, episode) / SAMPLES_FILE
        if path.exists():
            samples = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
            return episode, [s for s in samples if s.get("kept")]
    return None


def _conversations(cfg: TrainConfig, n: int) -> tuple[Any, list[str], list[str | None]]:
    """The first `n` rows the sequence trainer reads, conversational, with labels and notes."""
    from datasets import Dataset

    from pipeline.train.data import preference_rows, prompt_and_response, sft_rows

    spec = cfg.prompt.spec()
    if cfg.method == "dpo" or (cfg.method == "sft" and cfg.sft.dataset is None):
        table = _table(cfg, n)
        rows = table.to_pylist()
        data = (preference_rows if cfg.method == "dpo" else sft_rows)(table, spec)
        return data, [_label(r, i) for i, r in enumerate(rows)], [None] * len(rows)
    if cfg.method == "sft":
        from pipeline.train.sft_data import external_sft_rows

        limit = min(n, cfg.data.limit) if cfg.data.limit else n
        data = external_sft_rows(
            cfg.model_copy(update={"data": cfg.data.model_copy(update={"limit": limit})})
        )
        return data, [f"sft.dataset row {i}" for i in range(len(data))], [None] * len(data)

    from pipeline.train.raft import episode_rows, sft_dataset
    from pipeline.train.self_training import as_raft

    view = as_raft(cfg)
    rows = episode_rows(view)
    found = _newest_samples(view)
    if found is not None and found[1]:
        episode, kept = found
        kept = kept[:n]
        data = sft_dataset(view, rows, kept)
        note = f"a kept response sampled in episode {episode}"
        return data, [_label(rows[s["row"]], s["row"]) for s in kept], [note] * len(kept)
    out, labels = [], []
    for i, row in enumerate(rows[:n]):
        prompt, turn = prompt_and_response(row, i, spec, illustrative_response(row, spec.style))
        out.append({"prompt": prompt, "completion": turn})
        labels.append(_label(row, i))
    note = (
        f"illustrative response: {cfg.method} trains on responses it samples; the newest "
        "episode's kept ones are shown once an episode has sampled"
    )
    return Dataset.from_list(out), labels, [note] * len(out)


def _sequence_showing(cfg: TrainConfig, n: int) -> Showing:
    from pipeline.train.sequences import as_text, split_tokens, template_behaviour
    from pipeline.train.tokenizer import training_tokenizer

    args = _trl_args(cfg)
    tok = training_tokenizer(cfg.model, args.get("pad_token"))
    data, labels, notes = _conversations(cfg, n)
    behaviour = template_behaviour(tok.tokenizer)
    texts = as_text(data, tok.tokenizer)
    names = ["chosen", "rejected"] if cfg.method == "dpo" else ["completion"]
    examples = []
    eos = tok.tokenizer.eos_token or ""
    for row, label, note in zip(texts, labels, notes, strict=True):
        # TRL ends a text completion with EOS where it lacks one (an `sft.dataset` text row)
        ends = [row[k] if row[k].endswith(eos) else row[k] + eos for k in names]
        prompt_ids, completions = split_tokens(tok.tokenizer, row["prompt"], ends)
        examples.append(
            Example(label, prompt_ids, dict(zip(names, completions, strict=True)), note)
        )
    said = {
        "keeps": "keeps an assistant turn as written",
        "drops": "drops the reasoning before </think> from an assistant turn (as R1-Distill's)",
        "rewrites": "rewrites an assistant turn (re-spaces or moves the reasoning)",
    }[behaviour]
    header = [
        f"{cfg.name}: method {cfg.method}, model {cfg.model}",
        (
            f"chat template: {said}; the project renders each sequence itself (the prompt as "
            "generation sees it, then the response as written, then EOS), so the loss keeps "
            "every token of it"
        ),
        f"tokenizer: {tok.describe()}",
    ]
    return Showing(header, tok.tokenizer, examples, args.get("max_length"),
                   args.get("truncation_mode") or "keep_start")  # fmt: skip


def _prompt_showing(cfg: TrainConfig, n: int) -> Showing:
    """GRPO / RLVR: the prompts as the GRPO trainer tokenizes them; completions are sampled."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(cfg.model)
    table = _table(cfg, n)
    if cfg.method == "grpo":
        from pipeline.train.data import verifier_prompt_rows

        data = verifier_prompt_rows(table, cfg.prompt.spec(), tokenizer)
        budget, template_kwargs = cfg.grpo.max_completion_length, {}
    else:
        from pipeline.train.rlvr import question_rows, thinking_args

        data = question_rows(table, cfg.rlvr.language)
        budget = cfg.rlvr.max_completion_length
        template_kwargs = thinking_args(cfg.rlvr.enable_thinking).get("chat_template_kwargs", {})
    note = f"completion: sampled during training (at most {budget} tokens), continuing the prompt"
    examples = []
    for i, (row, prompt) in enumerate(zip(table.to_pylist(), data["prompt"], strict=True)):
        if isinstance(prompt, str):  # a Think prompt, its pre-fill rendered (data.py)
            ids = tokenizer(text=prompt)["input_ids"]
        else:
            ids = tokenizer.apply_chat_template(
                prompt, add_generation_prompt=True, tokenize=True, return_dict=True,
                **template_kwargs,
            )["input_ids"]  # fmt: skip
        examples.append(Example(_label(row, i), list(ids), note=note))
    header = [f"{cfg.name}: method {cfg.method}, model {cfg.model}"]
    return Showing(header, tokenizer, examples)


def showing(cfg: TrainConfig, n: int) -> Showing:
    """The first `n` examples of `cfg`'s training data as its trainer will see them."""
    if cfg.method in SEQUENCE_METHODS:
        return _sequence_showing(cfg, n)
    return _prompt_showing(cfg, n)


def _cut(prompt: int, loss: int, max_length: int | None, mode: str) -> tuple[int, str]:
    """(loss tokens kept, what max_length did), as TRL's truncation does it."""
    total = prompt + loss
    if max_length is None or total <= max_length:
        limit = "no max_length" if max_length is None else f"max_length {max_length}"
        return loss, f"{total} tokens with the prompt, within {limit}: not cut"
    over = total - max_length
    if mode == "keep_start":
        if prompt >= max_length:
            return 0, f"CUT: the prompt alone fills max_length {max_length}; TRL drops the row"
        return loss - over, (
            f"CUT: {total} tokens with the prompt > max_length {max_length}; the last {over} "
            "loss tokens are not trained on"
        )
    return loss, f"CUT: {total} tokens > max_length {max_length}; the first {over} tokens go"


def format_showing(s: Showing) -> str:
    """The examples as text: decoded tokens, counts, cuts."""

    def decode(ids: list[int]) -> str:
        return s.tokenizer.decode(ids, skip_special_tokens=False)

    lines = list(s.header)
    for k, ex in enumerate(s.examples, 1):
        lines += ["", f"=== example {k} of {len(s.examples)}: {ex.label} ==="]
        if ex.note:
            lines.append(f"({ex.note})")
        lines += [f"--- prompt: {len(ex.prompt_ids)} tokens (no loss) ---", decode(ex.prompt_ids)]
        for name, ids in ex.parts.items():
            kept, cut = _cut(len(ex.prompt_ids), len(ids), s.max_length, s.truncation_mode)
            shown = ids[:kept] if s.truncation_mode == "keep_start" else ids
            lines += [f"--- {name}: {len(ids)} loss tokens; {cut} ---", decode(shown)]
    return "\n".join(lines)


def show_examples(cfg: TrainConfig, n: int) -> str:
    return format_showing(showing(cfg, n))
