"""Token counts for Aletheia's length caps: candidates (800) and the verifier prompt (4096).

Aletheia measured both with the DeepSeek-R1-Distill-Qwen tokenizer, the prompt rendered with
its chat template and the generation prompt. The tokenizer is configurable (a Hub name or a
local path). Offline, a Hub name that is not in the local cache cannot be loaded: the caller
decides between skipping the caps (with a warning) and failing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.common.stage import CheckContext, Finding
from pipeline.common.verifier_prompt import (
    PROMPT_STYLES,
    PromptSpec,
    build_messages,
    prefill,
    render_with_prefill,
)
from pipeline.errors import clip, near_path
from pipeline.model_refs import (
    TOKENIZER_FILES,
    ModelUnavailable,
    download_hint,
    hub_availability,
    looks_like_path,
)

log = logging.getLogger(__name__)

# Texts per tokenizer call: large enough for the fast tokenizer's threads, small enough that
# a batch's token ids stay a few megabytes.
BATCH_SIZE = 256


class TokenizerUnavailable(ModelUnavailable):
    """The configured tokenizer could not be loaded; one line saying which and why."""


def tokenizer_problem(name: str) -> str | None:
    """Why `name` cannot be had now, without loading it (None: a local folder, in the HF
    cache, or on a Hub that answers): no download, a few seconds at most."""
    if looks_like_path(name) and not Path(name).expanduser().exists():
        return (
            f"assemble.tokenizer: no folder at {name}{near_path(name)}; give a tokenizer "
            "folder or a Hub id (namespace/name)"
        )
    _, why = hub_availability(name, TOKENIZER_FILES)
    if not why:
        return None
    return f"assemble.tokenizer: {name!r} is {why}; {download_hint(name)}"


def measures_caps(config: Any) -> bool:
    """Whether assembly loads its tokenizer: a tokenizer is named and a token cap is set."""
    caps = config.max_candidate_tokens is not None or config.max_prompt_tokens is not None
    return config.tokenizer is not None and caps


def check_tokenizer(config: Any, ctx: CheckContext) -> list[Finding]:
    """ASSEMBLE's tokenizer, when caps are measured: fatal with `require_tokenizer`, else a
    note that the caps will be skipped. A folder an earlier node builds is not looked for."""
    name = config.tokenizer
    if not measures_caps(config) or Path(name).expanduser().resolve() in ctx.built:
        return []
    problem = tokenizer_problem(name)
    if problem is None:
        return []
    if config.require_tokenizer:
        return [Finding("models", problem, unavailable=True)]
    return [Finding("models", f"{problem} (token caps skipped: require_tokenizer is off)", False)]


@lru_cache(maxsize=8)
def _load_or_error(name: str) -> Any:
    """The tokenizer, or the exception that says why not. Failures are cached too. The Hub
    is tried only when it answers for `name` (one quick request), so an offline or
    unreachable Hub is one line at once, not a minute of retries and a traceback."""
    from transformers import AutoTokenizer

    try:  # the local cache (or a local path) first; the Hub only when that fails
        return AutoTokenizer.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError) as exc:
        log.info("tokenizer %r not available locally (%s); trying the Hub", name, exc)
    problem = tokenizer_problem(name)
    if problem is not None:
        return TokenizerUnavailable(problem)
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:  # offline, or a bad path / repo id: "not here"
        return TokenizerUnavailable(
            f"tokenizer {name!r} cannot be loaded ({type(exc).__name__}: {clip(str(exc), 300)}); "
            "set `assemble.tokenizer` to a local path (the demo uses the tiny local one) or "
            "download it into the Hugging Face cache"
        )


def _load(name: str) -> Any:
    got = _load_or_error(name)
    if isinstance(got, TokenizerUnavailable):
        raise got
    return got


def measured_styles(aletheia_src: str | None = None) -> tuple[str, ...]:
    """The prompt styles the cap measures: Think and Instruct; with Aletheia's wording, the
    Instruct one only where its prompt file has an Instruct system turn (Aletheia's own cap,
    `_count_prompt_tokens`, measured Think-style prompts only)."""
    if aletheia_src:
        from pipeline.common.aletheia_prompts import read_aletheia_prompts

        if read_aletheia_prompts(aletheia_src).instruct_system is None:
            return ("think",)
    return PROMPT_STYLES


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens of code and of rendered verifier prompts with one tokenizer."""

    name: str

    @property
    def tokenizer(self) -> Any:
        return _load(self.name)

    def count_texts(self, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> list[int]:
        """Tokens per text, special tokens counted as Aletheia did (the call adds BOS).

        One tokenizer call per `batch_size` texts: a fast tokenizer encodes a batch in Rust and
        spreads it over free cores; only the lengths are kept. Where the encoding itself
        dominates (long prompts, busy cores) this gains little: bench/bench_tokens.py measured
        1.02x on the shared 2-core machine."""
        out: list[int] = []
        for start in range(0, len(texts), batch_size):
            enc = self.tokenizer(
                list(texts[start : start + batch_size]),
                return_attention_mask=False,
                return_token_type_ids=False,
            )
            out += [len(x) for x in enc["input_ids"]]
        return out

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt text a model sees: the chat template up to the generation prompt, then
        the assistant prefill (Think). Without a chat template, the turns joined plainly."""
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            return render_with_prefill(messages, tok)
        pre = prefill(messages)
        head = messages[:-1] if pre else messages
        return "\n\n".join(m["content"] for m in head) + pre

    def prompt_texts(
        self,
        query: str,
        candidates: list[str],
        languages: list[str],
        template: str | None = None,
        system_template: str | None = None,
        aletheia_src: str | None = None,
    ) -> list[str]:
        """The rendered Think and Instruct prompts of one row (Aletheia measured the longest
        of its prompt variants), in the wording the templates or `aletheia_src` give."""
        texts = []
        for style in measured_styles(aletheia_src):
            spec = PromptSpec(
                style=style,  # type: ignore[arg-type]
                template=template,
                system_template=system_template if style == "instruct" else None,
                aletheia_src=aletheia_src,
            )
            texts.append(self.render(build_messages(query, candidates, languages, spec)))
        return texts

    def prompt_tokens(
        self,
        query: str,
        candidates: list[str],
        languages: list[str],
        template: str | None = None,
        system_template: str | None = None,
        aletheia_src: str | None = None,
    ) -> int:
        """The longest of the Think and Instruct prompts for one row."""
        texts = self.prompt_texts(
            query, candidates, languages, template, system_template, aletheia_src
        )
        return max(self.count_texts(texts))

    def prompt_tokens_many(
        self,
        rows: Iterable[tuple[str, list[str], list[str]]],
        template: str | None = None,
        system_template: str | None = None,
        batch_size: int = BATCH_SIZE,
        aletheia_src: str | None = None,
    ) -> list[int]:
        """`prompt_tokens` of each (query, candidates, languages) row, in order: the rows are
        rendered, then tokenised `batch_size` texts per tokenizer call (same counts as one row
        at a time; tests/instances/test_tokens.py compares the two)."""
        styles = len(measured_styles(aletheia_src))
        out: list[int] = []
        chunk: list[str] = []

        def flush() -> None:
            counts = self.count_texts(chunk, batch_size)
            out.extend(max(counts[i : i + styles]) for i in range(0, len(counts), styles))
            chunk.clear()

        for query, candidates, languages in rows:
            chunk += self.prompt_texts(
                query, candidates, languages, template, system_template, aletheia_src
            )
            if len(chunk) >= batch_size:
                flush()
        if chunk:
            flush()
        return out


def load_counter(name: str | None, *, required: bool) -> tuple[TokenCounter | None, str | None]:
    """A counter for `name`, or (None, why) when there is no tokenizer and it is not required."""
    if name is None:
        return None, "no tokenizer configured"
    counter = TokenCounter(name)
    try:
        counter.tokenizer  # noqa: B018 - load now, so the failure is reported here
    except TokenizerUnavailable as exc:
        if required:
            raise
        log.warning("token caps skipped: %s", exc)
        return None, str(exc)
    return counter, None
