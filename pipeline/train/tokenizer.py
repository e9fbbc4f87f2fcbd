"""The tokenizer a verifier trainer (DPO, SFT, RAFT, STaR, ReST-EM) gets: the model's own, with a
pad token that is not EOS.

With pad = EOS (DeepSeek-R1-Distill's tokenizer, or none, which TRL fills with EOS) any code
that masks labels by the pad id also masks the EOS that ends each response, and the model
never learns to stop; Aletheia sets a separate pad id for its DPO, GenRM, STaR and ReST-EM
runs. The pad is picked, in order:

1. the section's TRL `pad_token`, when the config sets one;
2. the tokenizer's own pad, when it is not EOS;
3. a special token of the vocabulary named as a pad (`<|vision_pad|>`, `<|fim_pad|>`,
   `<|finetune_right_pad_id|>`, ...): no new token, the model's embeddings unchanged;
4. a new `<|pad|>` token: in an embedding row the model already has (Qwen's matrices have
   spare rows), or, only where it has none, with the embeddings resized by one row.

The tokenizer is saved with the model (`common.save_final`), so the published model pads
the way it was trained. Only the tokenizer and `config.json` are read here (no weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NEW_PAD = "<|pad|>"


@dataclass
class TrainingTokenizer:
    tokenizer: Any
    pad_source: str  # config | model | vocabulary | added | added+resized
    embedding_rows: int | None  # the model's embedding rows (config.json), None if unknown

    @property
    def resize_to(self) -> int | None:
        """Rows the model's embeddings must grow to (None: they fit the tokenizer)."""
        n = len(self.tokenizer)
        return n if self.embedding_rows is not None and n > self.embedding_rows else None

    def describe(self) -> str:
        t = self.tokenizer
        what = {
            "config": "the config's pad_token",
            "model": "the tokenizer's own",
            "vocabulary": "a pad token of the vocabulary (no new token)",
            "added": "a new token in a spare embedding row (no resize)",
            "added+resized": f"a new token; the embeddings are resized to {len(t)} rows",
        }[self.pad_source]
        return f"pad {t.pad_token!r} (id {t.pad_token_id}, EOS {t.eos_token!r}): {what}"


def _embedding_rows(model: str) -> int | None:
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):
        return None
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return getattr(text, "vocab_size", None)


def _vocabulary_pad(tokenizer: Any) -> str | None:
    """A special token named as a pad, not EOS or BOS, lowest id first."""
    taken = {tokenizer.eos_token, tokenizer.bos_token}
    named = [
        (token.content, i)
        for i, token in sorted(tokenizer.added_tokens_decoder.items())
        if token.special and "pad" in token.content.lower() and token.content not in taken
    ]
    return named[0][0] if named else None


def training_tokenizer(model: str, pad_token: str | None = None) -> TrainingTokenizer:
    """The model's tokenizer with a pad token that is not EOS (the module's rules)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    rows = _embedding_rows(model)
    if pad_token is not None:
        if pad_token not in tok.get_vocab():
            raise ValueError(f"pad_token {pad_token!r} is not in {model}'s vocabulary")
        tok.pad_token = pad_token
        return TrainingTokenizer(tok, "config", rows)
    if tok.pad_token is not None and tok.pad_token_id != tok.eos_token_id:
        return TrainingTokenizer(tok, "model", rows)
    if (named := _vocabulary_pad(tok)) is not None:
        tok.pad_token = named
        return TrainingTokenizer(tok, "vocabulary", rows)
    tok.add_special_tokens({"pad_token": NEW_PAD})
    grew = rows is not None and len(tok) > rows
    return TrainingTokenizer(tok, "added+resized" if grew else "added", rows)


def resized_model(model: str, rows: int, init_kwargs: dict[str, Any] | None) -> Any:
    """The model loaded as TRL loads it (`model_init_kwargs`), its embeddings grown to `rows`."""
    from trl.trainer.utils import create_model_from_path

    loaded = create_model_from_path(model, **dict(init_kwargs or {}))
    loaded.resize_token_embeddings(rows)
    return loaded
