"""The completion budget a policy's context allows, and why samples failed, by reason.

`evaluate-policy` on a tiny fitted policy (a 285-token context) with the default 512-token
budget failed every sample with `prompt_too_long (23 + 512 tokens > 285)` and then a
traceback. Now a budget the user did not choose is cut to what the context leaves after
the longest prompt, with a warning; a chosen one is kept, and samples that still fail are
counted per reason in one line.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pipeline.policy_eval.config import PolicyEvalConfig
from schemas.problem import Problem

log = logging.getLogger(__name__)

# What to do about a failure reason (the backends' `error:<reason>` finish reasons).
HINTS = {
    "prompt_too_long": "give a smaller --max-tokens or a model with a longer context",
}


def model_context(model: str) -> int | None:
    """The model's context in tokens (`max_position_embeddings`), or None when unknown."""
    from transformers import AutoConfig

    try:
        cfg = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):  # no config here: the sampler reports it itself
        return None
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    value = getattr(text, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) else None


def longest_prompt(model: str, problems: Sequence[Problem], system: bool) -> int | None:
    """Tokens in the longest prompt the sampler will send, rendered as the transformers
    backend renders it (chat template, generation prompt); None without a chat template."""
    from transformers import AutoTokenizer

    from pipeline.sampling.prompts import chat_messages

    tok = AutoTokenizer.from_pretrained(model)
    if not tok.chat_template:
        return None
    longest = 0
    for p in problems:
        text = tok.apply_chat_template(
            chat_messages(p, "python", system=system), tokenize=False, add_generation_prompt=True
        )
        longest = max(longest, len(tok.encode(text, add_special_tokens=False)))
    return longest


def fit_max_tokens(config: PolicyEvalConfig, problems: Sequence[Problem]) -> PolicyEvalConfig:
    """`config` with an unset `max_tokens` cut to the room the context leaves after the
    longest prompt (the transformers backend, whose context is known here). A budget the
    user set is theirs: kept, and an overlong sample fails with its reason."""
    if "max_tokens" in config.model_fields_set or config.backend.type != "transformers":
        return config
    context = model_context(config.model)
    longest = longest_prompt(config.model, problems, config.system_prompt) if context else None
    if context is None or longest is None or context - longest >= config.max_tokens:
        return config
    room = context - longest
    if room < 1:
        from pipeline.errors import UserError

        raise UserError(
            f"--model {config.model}: its context ({context} tokens) has no room after the "
            f"longest prompt ({longest} tokens); use a model with a longer context"
        )
    log.warning(
        "max_tokens: the default %d does not fit %s's context of %d tokens after the longest "
        "prompt (%d tokens); using %d (--max-tokens sets it)",
        config.max_tokens,
        config.model,
        context,
        longest,
        room,
    )
    return config.model_copy(update={"max_tokens": room})


class FailureTally:
    """Wraps a backend factory; counts the error finish reasons of every generation."""

    def __init__(self, factory: Callable[[Any], Any]) -> None:
        self.factory = factory
        self.reasons: Counter[str] = Counter()
        self.example: dict[str, str] = {}  # reason -> one full finish reason

    def __call__(self, source: Any) -> _Watched:
        return _Watched(self.factory(source), self)

    def add(self, finish_reason: str) -> None:
        body = finish_reason.removeprefix("error:").strip()
        # The reason is what comes before its details: `prompt_too_long (23 + 512 ...)`,
        # `http_400: ...`, `gave up after 2 retries: ...`.
        reason = re.split(r" \(|:", body, maxsplit=1)[0].strip()[:60] or "error"
        self.reasons[reason] += 1
        self.example.setdefault(reason, body)

    def summary(self) -> str:
        """`prompt_too_long x6 (e.g. prompt_too_long (23 + 512 tokens > 285): give ...)`."""
        parts = []
        for reason, n in self.reasons.most_common():
            hint = f": {HINTS[reason]}" if reason in HINTS else ""
            parts.append(f"{reason} x{n} (e.g. {self.example[reason]}{hint})")
        return "; ".join(parts) or "no error reason was given"


class _Watched:
    """A backend whose results pass through FailureTally on their way to the sampler."""

    def __init__(self, inner: Any, tally: FailureTally) -> None:
        self.inner, self.tally = inner, tally

    def generate(self, requests: Sequence[Any], *, progress: bool = True) -> Iterator[Any]:
        for result in self.inner.generate(requests, progress=progress):
            for g in result.generations:
                if g.finish_reason.startswith("error"):
                    self.tally.add(g.finish_reason)
            yield result

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
