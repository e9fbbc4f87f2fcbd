"""A stand-in for DeepSeek-R1-Distill-Qwen's tokenizer on the tiny model (no Hub download here).

It reproduces, in our own Jinja, what matters of R1-Distill's tokenizer for training:

- the chat template writes BOS itself, and the tokenizer adds BOS too;
- an assistant turn is rendered as only the text after its last `</think>`, between
  `<｜Assistant｜>` and `<｜end▁of▁sentence｜>` (EOS): the reasoning is dropped;
- the generation prompt is `<｜Assistant｜><think>\\n`;
- the pad token is EOS, and the vocabulary holds an unused `<|vision_pad|>` special token.

`pad_named=False` leaves the pad-named token out, so a trainer must add a pad token (and,
the tiny model having no spare embedding row, resize the embeddings).
"""

from __future__ import annotations

import shutil
from pathlib import Path

BOS, EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
USER, ASSISTANT = "<｜User｜>", "<｜Assistant｜>"
VISION_PAD = "<|vision_pad|>"

# Our own wording of the behaviour above (not R1-Distill's template text).
R1_LIKE_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- for m in messages if m['role'] == 'system' -%}{{- m['content'] -}}{%- endfor -%}"
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'user' -%}{{- '" + USER + "' + m['content'] -}}"
    "{%- elif m['role'] == 'assistant' -%}"
    "{%- set shown = m['content'].split('</think>') | last -%}"
    "{{- '" + ASSISTANT + "' + shown + '" + EOS + "' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '" + ASSISTANT + "<think>\\n' -}}{%- endif -%}"
)


def make_r1_like(tiny_model: Path, out: Path, *, pad_named: bool = True) -> Path:
    """A copy of the tiny model whose tokenizer behaves as R1-Distill's (module docstring)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    shutil.copytree(tiny_model, out, dirs_exist_ok=True)
    tok = AutoTokenizer.from_pretrained(out)
    extra = [USER, ASSISTANT] + ([VISION_PAD] if pad_named else [])
    tok.add_special_tokens({"bos_token": BOS, "eos_token": EOS, "additional_special_tokens": extra})
    tok.pad_token = EOS
    tok.add_bos_token = True
    tok.chat_template = R1_LIKE_TEMPLATE
    assert tok("x").input_ids[0] == tok.bos_token_id  # the tokenizer adds BOS itself
    tok.save_pretrained(out)

    model = AutoModelForCausalLM.from_pretrained(out)
    model.resize_token_embeddings(len(tok))  # exactly: no spare row
    for config in (model.config, model.generation_config):
        config.bos_token_id, config.eos_token_id = tok.bos_token_id, tok.eos_token_id
        config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    return out
