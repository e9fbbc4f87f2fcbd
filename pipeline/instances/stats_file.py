"""The stats.json an instances stage writes beside its tables (the marker keeps them too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATS_FILE = "stats.json"


def write_stats(out_dir: Path, stats: dict[str, Any], name: str = STATS_FILE) -> Path:
    path = Path(out_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stats, indent=2, sort_keys=True, default=str) + "\n")
    return path
