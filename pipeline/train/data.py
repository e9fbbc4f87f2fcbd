"""Dataset rows (published Parquet configs, read by pipeline/common/hub_folder.py) -> the
HF `datasets` each TRL trainer reads.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from datasets import Dataset

from pipeline.common.answers import gold_letter
from pipeline.common.verifier_prompt import (
    PromptSpec,
    build_messages,
    preference_turns,
    prefill,
    render_with_prefill,
)


def _messages(r: dict[str, Any], i: int, spec: PromptSpec) -> list[dict[str, str]]:
    try:
        return build_messages(r["query"], r["candidates"], r["candidate_languages"], spec)
    except ValueError as e:
        raise ValueError(f"row {i} (prompt_id={r.get('prompt_id')}): {e}") from e


def render_prefilled(messages: list[dict[str, str]], tokenizer: Any) -> str:
    """A prompt ending in an assistant prefill, rendered as text that generation continues.

    TRL 1.16's GRPO renders conversational prompts with `add_generation_prompt=True`, which
    closes a final assistant turn and opens a new one, so the prefill would not be continued;
    Aletheia's (older) TRL continued it. Text prompts keep Aletheia's behaviour: the generation
    prompt, then the prefill (`render_with_prefill`). A BOS token the template writes is dropped
    when the tokenizer adds its own, so it is not doubled.
    """
    return without_template_bos(render_with_prefill(messages, tokenizer), tokenizer)


def without_template_bos(text: str, tokenizer: Any) -> str:
    """`text` without the BOS its chat template wrote when the tokenizer adds one itself
    (R1-Distill's template and tokenizer both do): tokenized, it starts with one BOS."""
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


def rows_of_style(table: pa.Table, style: str) -> pa.Table:
    """A DPO config's rows whose responses answer a prompt of `style`, where the config holds
    pairs of several styles (a build with `dpo.variants: [think, instruct]`): a verifier is
    trained on one. A config with no row of `style` is returned whole, so the trainer's check
    names the rows' style."""
    if "prompt_variant" not in table.column_names:
        return table
    variants = table.column("prompt_variant").to_pylist()
    keep = [i for i, v in enumerate(variants) if _STYLE_OF_VARIANT.get(v or style) == style]
    return table.take(keep) if keep else table


def _check_style(r: dict[str, Any], i: int, spec: PromptSpec) -> None:
    """A row's responses answer a prompt of one style; the config must train that style."""
    style = _STYLE_OF_VARIANT.get(r.get("prompt_variant") or spec.style)
    if style != spec.style:
        raise ValueError(
            f"row {i} (prompt_id={r.get('prompt_id')}): field prompt_variant: {r['prompt_variant']!r} "
            f"responses, but the config's prompt.style is {spec.style!r}"
        )


def prompt_and_response(r: dict[str, Any], i: int, spec: PromptSpec, response: str):
    """(prompt messages without the prefill, the assistant turn with it), the prompt rebuilt
    from the instance columns (RAFT's own samples): `preference_turns`."""
    _check_style(r, i, spec)
    return preference_turns(_messages(r, i, spec), response)


def _published_turns(r: dict[str, Any], i: int, spec: PromptSpec) -> tuple[list, list, list]:
    """A DPO row's (prompt, chosen, rejected) as published: the messages TRL reads from the
    Hub config, so this trainer and a user's `DPOTrainer` train on the same sequences. The
    config's prompt style must be the rows'; templates it names must rebuild the rows' prompt
    (a template is never silently ignored)."""
    _check_style(r, i, spec)
    for field in ("prompt", "chosen", "rejected"):
        turns = r[field]
        if not turns or not all(isinstance(m, dict) and "role" in m for m in turns):
            raise ValueError(
                f"row {i} (prompt_id={r.get('prompt_id')}): field {field}: expected chat "
                f"messages, got {str(turns)[:80]!r}"
            )
    # the config names a wording: the rows' must be it
    if spec.template or spec.system_template or spec.aletheia_src:
        expected, _ = preference_turns(_messages(r, i, spec), "")
        if r["prompt"] != expected:
            raise ValueError(
                f"row {i} (prompt_id={r.get('prompt_id')}): field prompt: not the prompt that "
                "the config's prompt.prompt_template / prompt.system_template / "
                "prompt.aletheia_src build from the row; the responses answered the published "
                "prompt: set the wording the DPO build used, or none to train on the prompt as "
                "published"
            )
    return r["prompt"], r["chosen"], r["rejected"]


def preference_rows(table: pa.Table, spec: PromptSpec) -> Dataset:
    """DPO rows in TRL's conversational preference format (prompt / chosen / rejected), as
    the dpo configs publish them."""
    rows = []
    for i, r in enumerate(table.to_pylist()):
        prompt, chosen, rejected = _published_turns(r, i, spec)
        rows.append({"prompt": prompt, "chosen": chosen, "rejected": rejected})
    return Dataset.from_list(rows)


def sft_rows(table: pa.Table, spec: PromptSpec) -> Dataset:
    """SFT on the chosen verifier responses (prompt-completion format: loss on the response)."""
    rows = []
    for i, r in enumerate(table.to_pylist()):
        prompt, chosen, _ = _published_turns(r, i, spec)
        rows.append({"prompt": prompt, "completion": chosen})
    return Dataset.from_list(rows)
