"""A random model whose greedy text depends on the whole prompt, for tests of batching.

The tiny random Qwen2 (pipeline.models.tiny) is nearly uniform: its greedy continuation of a
chat prompt is one token repeated, the same for every prompt, so two decoders could agree on
it even if one padded or positioned prompts wrongly. Its 2-D weights multiplied by 8 give
sharp attention and continuations that change token by token and prompt by prompt (seen:
ten greedy tokens of four prompts, all different), while staying a real model on real code paths.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SCALE = 8.0


def sharpen(tiny_model_dir: Path, out: Path, *, scale: float = SCALE) -> Path:
    """`tiny_model_dir`'s model with its matrices scaled, and its tokenizer, in `out`."""
    if (out / "config.json").exists():
        return out
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(scale)
    model.save_pretrained(out)
    for f in tiny_model_dir.iterdir():
        if f.name.startswith(("tokenizer", "chat_template", "special_tokens")):
            shutil.copy(f, out / f.name)
    return out
