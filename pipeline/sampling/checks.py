"""SAMPLE's preflight check, and the model and backend checks DPO's verifier models share.

Without touching the network: every model a stage loads resolves as a local folder or a Hub
id already in the local Hugging Face cache (never fetched here), or is a folder an earlier
stage builds (`ctx.built`); vLLM's environment exists; an OpenAI-compatible server named by
`base_url` accepts connections and its key variable is set."""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pipeline.common.stage import CheckContext, Finding

if TYPE_CHECKING:
    from pipeline.sampling.config import SampleConfig

LOCAL_BACKENDS = {"transformers", "vllm"}  # backends that load the model themselves


def resolve_model(ref: str) -> str | None:
    """Where a model reference resolves ('local folder', 'HF cache'), or None. No network."""
    path = Path(ref).expanduser()
    if path.exists():
        return "local folder"
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1:
        return None  # a path, not a Hub id
    from huggingface_hub import try_to_load_from_cache

    try:
        hit = try_to_load_from_cache(ref, "config.json")
    except Exception:  # noqa: BLE001 - an invalid repo id resolves nowhere
        return None
    return "HF cache" if isinstance(hit, str) else None


def check_model(who: str, ref: str, ctx: CheckContext) -> list[Finding]:
    """A model `who` loads: built by an earlier stage, a local folder, or in the HF cache."""
    if Path(ref).expanduser().resolve() in ctx.built or resolve_model(ref) is not None:
        return []
    from pipeline.errors import near_path
    from pipeline.model_refs import looks_like_path

    if looks_like_path(ref):  # `hf download` takes a Hub id, never a path
        return [
            Finding(
                "models",
                f"{who}: no model folder at {ref}{near_path(ref)}; fix the path, or give a Hub "
                "id (namespace/name) and download it first (hf download namespace/name)",
            )
        ]
    return [
        Finding(
            "models",
            f"{who}: {ref!r} is not in the local HF cache (nor a local folder); download it "
            f"first (hf download {ref}) or give a model folder",
        )
    ]


def check_backend(who: str, b: Any) -> list[Finding]:
    """A backend's own needs: vLLM's interpreter, a reachable server, its key variable.
    Policy sources and DPO judges share these options, so they share this check."""
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
        elif b.base_url:
            out += check_server(who, b.base_url)
        if b.api_key_env and not os.environ.get(b.api_key_env):
            out.append(Finding("models", f"{who}: the key variable {b.api_key_env} is not set"))
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


def check_server(who: str, url: str) -> list[Finding]:
    parsed = urlparse(url)
    host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=2):
            return []
    except OSError as e:
        return [
            Finding(
                "models",
                f"{who}: nothing answers at {url} ({e.strerror or e}); "
                "start the server (vllm serve ...) before the build",
                unavailable=True,
            )
        ]


def check_sample(sample: SampleConfig, ctx: CheckContext) -> list[Finding]:
    """The policy sources' models (and their filters' tokenizers), then their backends."""
    out: list[Finding] = []
    models = [s for s in sample.sources if s.kind == "model"]
    for src in models:
        if src.backend.type in LOCAL_BACKENDS:
            out += check_model(f"sample.{src.name}", src.model, ctx)
        if src.filters is not None:
            out += check_model(f"sample.{src.name}.filters.tokenizer", src.filters.tokenizer, ctx)
    for src in models:
        out += check_backend(f"sample.{src.name}", src.backend)
    return out
