"""Stage caching: an output is a pure function of (stage, version, config, inputs, seed).

A finished stage writes `_stage.json` (its key and stats) into its output folder
last, so a folder without it is unfinished and is redone; one with a matching key
is reused and the stage executes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pipeline.common.hashing import canonical_json, sha256_files, sha256_text

MARKER = "_stage.json"


def stage_key(
    stage: str,
    version: str,
    config: BaseModel | dict[str, Any] | None,
    inputs: Iterable[str | Path] = (),
    seed: int | None = None,
) -> str:
    return sha256_text(
        stage, version, canonical_json(config or {}), sha256_files(inputs), str(seed)
    )


def is_done(out_dir: str | Path, key: str) -> bool:
    marker = Path(out_dir) / MARKER
    if not marker.exists():
        return False
    try:
        return json.loads(marker.read_text())["key"] == key
    except (ValueError, KeyError):
        return False


def mark_done(out_dir: str | Path, key: str, stage: str, stats: dict[str, Any]) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (MARKER + ".tmp")
    tmp.write_text(json.dumps({"stage": stage, "key": key, "stats": stats}, indent=2, default=str))
    tmp.replace(out / MARKER)


def read_stats(out_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(out_dir) / MARKER).read_text())["stats"]
