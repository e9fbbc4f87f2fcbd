"""Where the sandbox keeps its host-side files (verdict cache, root fs tar, process-engine builds)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """ALETHEIA_CACHE_DIR, else <repo>/.cache when running from a checkout, else ~/.cache/aletheia."""
    env = os.environ.get("ALETHEIA_CACHE_DIR")
    if env:
        return Path(env) / "sandbox"
    repo = HERE.parent
    if (repo / "pyproject.toml").exists():
        return repo / ".cache" / "sandbox"
    return Path.home() / ".cache" / "aletheia" / "sandbox"
