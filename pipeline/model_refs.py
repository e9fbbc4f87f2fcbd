"""Whether a model reference can load, checked before torch and transformers are imported.

`--model out/demo/train/dpo/fianl` used to fail 15 seconds in, deep inside the Hub client,
with "Repo id must be in the form 'repo_name' or 'namespace/repo_name'". A reference that
reads as a path and does not exist is a one-line error here, with the nearest existing
name; one that reads as a Hub id is left to the loader (it may be downloaded), unless the
Hub is off (`HF_HUB_OFFLINE`) and it is not in the local cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import UserError, near_path

MODEL_FILES = ("config.json", "adapter_config.json")  # full weights, or a LoRA adapter


def looks_like_path(ref: str) -> bool:
    """A filesystem path rather than a Hub id (`namespace/name` or `name`)."""
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1 or "\\" in ref:
        return True
    head = ref.split("/", 1)[0]
    return "/" in ref and Path(head).is_dir()  # `out/final` where ./out exists


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}


def _in_hf_cache(ref: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(ref, "config.json"), str)
    except Exception:  # noqa: BLE001 - a malformed id is simply not cached
        return False


def _model_subfolders(folder: Path) -> list[str]:
    """Subfolders (one or two levels down) that hold a model: what the user likely meant."""
    found = []
    for depth in ("*", "*/*"):
        for sub in sorted(folder.glob(depth)):
            if sub.is_dir() and any((sub / f).is_file() for f in MODEL_FILES):
                found.append(str(sub))
    return found[:5]


def require_model(ref: str | Path, where: str) -> None:
    """Raise a UserError naming `where` (an option or a config key) when `ref` cannot load."""
    text = str(ref)
    path = Path(text).expanduser()
    if path.is_file():
        raise UserError(f"{where}: {text} is a file; give the model's folder (with config.json)")
    if path.is_dir():
        if not any((path / f).is_file() for f in MODEL_FILES):
            inside = _model_subfolders(path)
            hint = f"; models inside it: {', '.join(inside)}" if inside else ""
            raise UserError(f"{where}: {text} holds no config.json, so it is not a model{hint}")
        return
    if looks_like_path(text):
        raise UserError(
            f"{where}: no such path {text}{near_path(path)}; give a model folder "
            "(config.json inside) or a Hub id namespace/name"
        )
    if _hub_offline() and not _in_hf_cache(text):
        raise UserError(
            f"{where}: {text} is not a local folder and not in the local HF cache, and "
            f"HF_HUB_OFFLINE is set; download it first (hf download {text}) or give a folder"
        )


def model_files(ref: str | Path) -> list[Path]:
    """What a stage's key hashes of a model: a local folder's top-level files, sorted (its
    weights, config and tokenizer); a Hub id, none (its name is in the stage's call)."""
    folder = Path(ref).expanduser()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file())
