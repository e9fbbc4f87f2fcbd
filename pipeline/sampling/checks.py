"""SAMPLE's preflight check, and the model and backend checks DPO's verifier models share.

Without downloading anything: every model a stage loads resolves as a local folder, a Hub id
in the local Hugging Face cache or one the Hub answers for (asked only when the cache lacks
it and HF_HUB_OFFLINE is not set), or is a folder an earlier stage builds (`ctx.built`);
vLLM's environment exists; an OpenAI-compatible server named by `base_url` lists the model
at `GET /v1/models` and its key variable is set. `require_served_sources` asks the same of
the servers when a run starts (pipeline/model_refs.py)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.common.stage import CheckContext, Finding
from pipeline.errors import near_path
from pipeline.model_refs import (
    TOKENIZER_FILES,
    download_hint,
    hub_availability,
    in_hf_cache,
    looks_like_path,
    require_served,
    served_message,
    served_problem,
)

if TYPE_CHECKING:
    from pipeline.sampling.config import SampleConfig

LOCAL_BACKENDS = {"transformers", "vllm"}  # backends that load the model themselves


def resolve_model(ref: str, files: tuple[str, ...] = ("config.json",)) -> str | None:
    """Where a model reference resolves without the network ('local folder', 'HF cache'),
    or None."""
    path = Path(ref).expanduser()
    if path.exists():
        return "local folder"
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1:
        return None  # a path, not a Hub id
    return "HF cache" if in_hf_cache(ref, files) else None


def check_model(
    who: str, ref: str, ctx: CheckContext, files: tuple[str, ...] = ("config.json",)
) -> list[Finding]:
    """A model (or tokenizer: `files`) `who` loads: built by an earlier stage, a local
    folder, in the HF cache, or (online) on the Hub, which the stage then downloads."""
    if Path(ref).expanduser().resolve() in ctx.built:
        return []
    if looks_like_path(ref) and not Path(ref).expanduser().exists():
        return [  # `hf download` takes a Hub id, never a path
            Finding(
                "models",
                f"{who}: no model folder at {ref}{near_path(ref)}; fix the path, or give a Hub "
                "id (namespace/name) and download it first (hf download namespace/name)",
            )
        ]
    where, why = hub_availability(ref, files)
    if why:
        return [
            Finding("models", f"{who}: {ref!r} is {why}; {download_hint(ref)}", unavailable=True)
        ]
    if where == "the Hub":
        return [
            Finding("models", f"{who}: {ref!r} is downloaded from the Hub when it loads", False)
        ]
    return []


def check_backend(who: str, b: Any, model: str) -> list[Finding]:
    """A backend's own needs: vLLM's interpreter, a server that serves `model`, its key
    variable. Policy sources and DPO judges share these options, so they share this check."""
    out: list[Finding] = []
    pythons = []
    if b.type == "vllm":
        if b.python is None and b.engine == "vllm" and importlib.util.find_spec("vllm") is None:
            out.append(
                Finding(
                    "models",
                    f"{who}: backend vllm without `python:` needs vllm "
                    "in this environment; set backend.python to vLLM's own interpreter",
                )
            )
        pythons.append(b.python)
    if b.type == "openai":
        if b.serve is not None:
            pythons.append(b.serve.python)
        if b.api_key_env and not os.environ.get(b.api_key_env):
            out.append(Finding("models", f"{who}: the key variable {b.api_key_env} is not set"))
        elif b.base_url and b.serve is None:
            out += check_server(who, b.base_url, model, b.api_key_env)
    for py in pythons:
        if py and not Path(py).exists():
            out.append(
                Finding(
                    "models",
                    f"{who}: the vLLM environment's interpreter {py} "
                    "does not exist; build it (docs/scale.md) or fix backend.python",
                )
            )
        elif py:  # vLLM itself is not installed on our machines: the path is all we check
            out.append(Finding("models", f"{who}: vLLM runs in {py} (not imported here)", False))
    return out


def check_server(who: str, url: str, model: str, api_key_env: str | None = None) -> list[Finding]:
    """The server at `url` answers and lists `model` (GET /v1/models, a few seconds)."""
    key = os.environ.get(api_key_env) if api_key_env else None
    why = served_problem(url, model, key)
    if why is None:
        return []
    return [
        Finding(
            "models",
            served_message(f"{who}.backend.base_url", url, model, why),
            unavailable=True,
        )
    ]


def require_served_sources(pairs: Iterable[tuple[str, Any, str]]) -> None:
    """When a run starts, before any input is read: each (who, backend, model) whose backend
    is an OpenAI-compatible server the run does not launch itself lists the model, else a
    ModelUnavailable naming the first that does not."""
    for who, b, model in pairs:
        if b.type == "openai" and b.serve is None and b.base_url:
            require_served(f"{who}.backend.base_url", b.base_url, model, b.api_key_env)


def check_sample(sample: SampleConfig, ctx: CheckContext) -> list[Finding]:
    """The policy sources' models (and their filters' tokenizers), then their backends."""
    out: list[Finding] = []
    models = [s for s in sample.sources if s.kind == "model"]
    for src in models:
        if src.backend.type in LOCAL_BACKENDS:
            out += check_model(f"sample.{src.name}", src.model, ctx)
        if src.filters is not None:
            who = f"sample.{src.name}.filters.tokenizer"
            out += check_model(who, src.filters.tokenizer, ctx, TOKENIZER_FILES)
    for src in models:
        out += check_backend(f"sample.{src.name}", src.backend, src.model)
    return out
