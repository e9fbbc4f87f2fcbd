"""The tokenizer a verifier trainer (DPO, SFT, RAFT, STaR, ReST-EM) gets: the model's own, with a
pad token that is not EOS.

With pad = EOS (DeepSeek-R1-Distill's tokenizer; or none, which TRL fills with EOS) code that
masks labels by the pad id also masks the EOS that ends each response, and the model never
learns to stop; Aletheia sets a separate pad id for its DPO, GenRM, STaR and ReST-EM runs.
The pad is picked, in order:

1. the method section's TRL `pad_token`, when the config sets one;
2. the tokenizer's own pad, when it is not EOS;
3. a special token of the vocabulary named as a pad (`<|vision_pad|>`, `<|fim_pad|>`,
   `<|finetune_right_pad_id|>`, ...);
4. a new `<|pad|>` token in an embedding row the model already has (Qwen's matrices have
   spare rows past the tokenizer's last token);
5. another special token that the chat template never writes (then BOS): a padded position
   is masked out of attention and loss, so only its differing from EOS matters.

The model's embeddings are never resized (no model reaches beyond 5: a chat tokenizer has
special tokens besides EOS), so the weights keep their shape. The tokenizer is saved with the
model (`common.save_final`), so the published model pads as it was trained. Only the
tokenizer and `config.json` are read here, never the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NEW_PAD = "<|pad|>"


@dataclass
class TrainingTokenizer:
    tokenizer: Any
    pad_source: str  # config | model | vocabulary | added | special

    def describe(self) -> str:
        t = self.tokenizer
        what = {
            "config": "the config's pad_token",
            "model": "the tokenizer's own",
            "vocabulary": "a pad token of the vocabulary",
            "added": "a new token in a spare embedding row",
            "special": "a special token the chat template never writes",
        }[self.pad_source]
        return (
            f"pad {t.pad_token!r} (id {t.pad_token_id}; EOS {t.eos_token!r}): {what}; "
            "embeddings not resized"
        )


def _embedding_rows(model: str) -> int | None:
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):
        return None
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return getattr(text, "vocab_size", None)


def _specials(tokenizer: Any) -> list[str]:
    """The special tokens that are not EOS or BOS, lowest id first."""
    taken = {tokenizer.eos_token, tokenizer.bos_token}
    return [
        token.content
        for _, token in sorted(tokenizer.added_tokens_decoder.items())
        if token.special and token.content not in taken
    ]


def _written(tokenizer: Any) -> str:
    """A conversation and a generation prompt as the chat template renders them ('' without
    a template)."""
    if not getattr(tokenizer, "chat_template", None):
        return ""
    user = [{"role": "user", "content": "u"}]
    turns = [*user, {"role": "assistant", "content": "a"}]
    return tokenizer.apply_chat_template(turns, tokenize=False) + tokenizer.apply_chat_template(
        user, tokenize=False, add_generation_prompt=True
    )


def _unwritten_special(tokenizer: Any) -> str | None:
    """A special token (not EOS) that a rendered conversation never holds; else BOS."""
    written = _written(tokenizer)
    unwritten = [t for t in _specials(tokenizer) if t not in written]
    return unwritten[0] if unwritten else tokenizer.bos_token


def training_tokenizer(model: str, pad_token: str | None = None) -> TrainingTokenizer:
    """The model's tokenizer with a pad token that is not EOS (the module's rules)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    if pad_token is not None:
        if pad_token not in tok.get_vocab():
            raise ValueError(f"pad_token {pad_token!r} is not in {model}'s vocabulary")
        tok.pad_token = pad_token
        return TrainingTokenizer(tok, "config")
    if tok.pad_token is not None and tok.pad_token_id != tok.eos_token_id:
        return TrainingTokenizer(tok, "model")
    if named := [t for t in _specials(tok) if "pad" in t.lower()]:
        tok.pad_token = named[0]
        return TrainingTokenizer(tok, "vocabulary")
    rows = _embedding_rows(model)
    if rows is not None and len(tok) < rows:  # the new token's row is there already
        tok.add_special_tokens({"pad_token": NEW_PAD})
        return TrainingTokenizer(tok, "added")
    if (special := _unwritten_special(tok)) is None:
        raise ValueError(
            f"{model}: its tokenizer has no token to pad with besides EOS; set the method "
            "section's pad_token"
        )
    tok.pad_token = special
    return TrainingTokenizer(tok, "special")
