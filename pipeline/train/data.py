"""Dataset rows (published Parquet configs) -> the HF `datasets` each TRL trainer reads.

The published layout is one folder of Parquet shards per config, the shards of each split
named after it (`<dir>/<config>/<split>-*.parquet`, see pipeline/publish/layout.py): a
training config has `train`, an evaluation config `test` (the default) and `full`. A
folder without split-named shards, or a single `<dir>/<config>.parquet` file, is read
whole as the config's default split.
Rows are checked against the lead's schemas on read, so a wrong column fails here with
the file's name rather than deep inside a trainer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from datasets import Dataset

from pipeline.common.answers import gold_letter
from pipeline.common.parquet import read_parquet
from pipeline.common.verifier_prompt import PromptSpec, build_messages, prefill
from pipeline.publish.layout import CONFIG_BY_NAME, split_files
from schemas import DPO_SCHEMA, INSTANCE_SCHEMA, TRAIN_QUESTIONS_SCHEMA
from schemas.problem import train_questions_table

_SCHEMAS = {
    "train": INSTANCE_SCHEMA,
    "mixed": INSTANCE_SCHEMA,
    "heldout": INSTANCE_SCHEMA,
    "strong": INSTANCE_SCHEMA,
    "hard": INSTANCE_SCHEMA,
    "adv": INSTANCE_SCHEMA,
    "dpo": DPO_SCHEMA,
    "mixed_dpo": DPO_SCHEMA,
    "train_questions": TRAIN_QUESTIONS_SCHEMA,
}


def config_path(data_dir: str | Path, config: str) -> Path:
    data_dir = Path(data_dir)
    for candidate in (data_dir / config, data_dir / f"{config}.parquet"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"dataset config {config!r} not found under {data_dir} "
        f"(looked for {data_dir / config}/ and {data_dir / config}.parquet)"
    )


def split_paths(data_dir: str | Path, config: str, split: str | None = None) -> list[Path]:
    """The files of one split of a config (None: its default split, `train` or `test`)."""
    cfg = CONFIG_BY_NAME[config]
    split = split or cfg.split
    if split not in cfg.splits:
        raise ValueError(
            f"dataset config {config!r} has no split {split!r}; its splits: {list(cfg.splits)}"
        )
    path = config_path(data_dir, config)
    if path.is_dir():
        files = split_files(path.parent, config, split)
        if files:
            return files
        named = {s: split_files(path.parent, config, s) for s in cfg.splits}
        if not any(named.values()) and split == cfg.split:  # an older folder: one split
            return [path]
        have = [s for s, f in named.items() if f]
        raise FileNotFoundError(
            f"dataset config {config!r} under {data_dir} has no {split!r} split "
            f"(no {path}/{split}-*.parquet; splits there: {have or 'none'})"
        )
    if split != cfg.split:
        raise FileNotFoundError(
            f"{path} is one file, read as the {cfg.split!r} split of {config!r}; "
            f"the {split!r} split needs the published folder layout ({config}/{split}-*.parquet)"
        )
    return [path]


def read_config(
    data_dir: str | Path, config: str, limit: int | None = None, split: str | None = None
) -> pa.Table:
    """One split of a published config (None: `train`, or `test` for an evaluation set),
    checked against its schema; `limit`: the first N rows."""
    if config not in _SCHEMAS:
        raise ValueError(f"unknown dataset config {config!r}; known: {sorted(_SCHEMAS)}")
    paths = split_paths(data_dir, config, split)
    if config == "train_questions":  # older schema versions: read or refused with the reason
        parts = [train_questions_table(read_parquet(p), name=str(p)) for p in paths]
    else:
        parts = [read_parquet(p, _SCHEMAS[config]) for p in paths]
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    if table.num_rows == 0:
        which = split or CONFIG_BY_NAME[config].split
        raise ValueError(
            f"dataset config {config!r}, split {which!r}, under {data_dir} has no rows"
        )
    return table.slice(0, limit) if limit else table


def _messages(r: dict[str, Any], i: int, spec: PromptSpec) -> list[dict[str, str]]:
    try:
        return build_messages(r["query"], r["candidates"], r["candidate_languages"], spec)
    except ValueError as e:
        raise ValueError(f"row {i} (prompt_id={r.get('prompt_id')}): {e}") from e


def render_prefilled(messages: list[dict[str, str]], tokenizer: Any) -> str:
    """A prompt ending in an assistant prefill, rendered as text that generation continues.

    TRL 1.16's GRPO renders conversational prompts with `add_generation_prompt=True`, which
    closes a final assistant turn and opens a new one, so the prefill would not be continued;
    Aletheia's (older) TRL continued it. Text prompts keep Aletheia's behaviour. A BOS token the
    template writes is dropped when the tokenizer adds its own, so it is not doubled.
    """
    text = tokenizer.apply_chat_template(messages, tokenize=False, continue_final_message=True)
    bos = getattr(tokenizer, "bos_token", None)
    if bos and text.startswith(bos) and tokenizer("").input_ids[:1] == [tokenizer.bos_token_id]:
        text = text[len(bos) :]
    return text


def verifier_prompt_rows(table: pa.Table, spec: PromptSpec, tokenizer: Any) -> Dataset:
    """GRPO rows: the verifier prompt plus the columns the rewards read (gold letter, pass rates,
    the prefill that the rewards put back in front of each completion)."""
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(table.to_pylist()):
        messages = _messages(r, i, spec)
        pre = prefill(messages)
        rows.append(
            {
                "prompt": render_prefilled(messages, tokenizer) if pre else messages,
                "prefill": pre,
                "prompt_id": r["prompt_id"],
                "chosen_answer": gold_letter(r["chosen_answer"]),  # `A` or `[[A]]` rows
                "num_candidates": r["num_candidates"],
                "pass_rates": list(r["pass_rates"]),
            }
        )
    return Dataset.from_list(rows)


_STYLE_OF_VARIANT = {"think": "think", "instruct": "instruct", "no_think": "instruct"}


def prompt_and_response(r: dict[str, Any], i: int, spec: PromptSpec, response: str):
    """(prompt messages without the prefill, the assistant turn with it): TRL's DPO and SFT
    render the prompt with a generation prompt, so the prefill travels in the response and the
    token sequence is the one generation sees."""
    style = _STYLE_OF_VARIANT.get(r.get("prompt_variant") or spec.style)
    if style != spec.style:
        raise ValueError(
            f"row {i} (prompt_id={r.get('prompt_id')}): field prompt_variant: {r['prompt_variant']!r} "
            f"responses, but the config's prompt.style is {spec.style!r}"
        )
    messages = _messages(r, i, spec)
    pre = prefill(messages)
    head = messages[:-1] if pre else messages
    body = response if response.startswith(pre) else pre + response
    return head, [{"role": "assistant", "content": body}]


def preference_rows(table: pa.Table, spec: PromptSpec) -> Dataset:
    """DPO rows in TRL's conversational preference format (prompt / chosen / rejected), the
    prompt rebuilt from the instance columns with the shared verifier prompt."""
    rows = []
    for i, r in enumerate(table.to_pylist()):
        prompt, chosen = prompt_and_response(r, i, spec, r["chosen"])
        _, rejected = prompt_and_response(r, i, spec, r["rejected"])
        rows.append({"prompt": prompt, "chosen": chosen, "rejected": rejected})
    return Dataset.from_list(rows)


def sft_rows(table: pa.Table, spec: PromptSpec) -> Dataset:
    """SFT on the chosen verifier responses (prompt-completion format: loss on the response)."""
    rows = []
    for i, r in enumerate(table.to_pylist()):
        prompt, completion = prompt_and_response(r, i, spec, r["chosen"])
        rows.append({"prompt": prompt, "completion": completion})
    return Dataset.from_list(rows)
