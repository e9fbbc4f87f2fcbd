"""The published dataset's shape: its splits as tables, the build manifest, and the Hub
folder's shards.

The configs themselves (names, schemas, sides, the card's descriptions) are listed once in
schemas/dataset_configs.py; reading a published folder back is pipeline/common/hub_folder.py.
The local folder is laid out exactly as it is pushed: `README.md` (the card), one
folder of size-sharded Parquet files per config, `assets/` (the card's plots) and
`details/` (the card's long parts: the run config, whole example rows, candidate tables). A
training config has one split, `train`; an evaluation config two, as Aletheia's
evaluation sets: `test` (up to 250 rows per list size and language) and `full` (every
row). A shard's name starts with its split (`heldout/test-00000-of-00001.parquet`), and
the card's YAML header maps each split to its shards.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from pipeline.common.hub_folder import read_config_file
from pipeline.common.parquet import read_parquet, write_parquet
from schemas.dataset_configs import CONFIG_BY_NAME, CONFIG_NAMES, CONFIGS, DatasetConfig

MANIFEST = "build.json"


class BuildManifest(BaseModel):
    """What a build produced and how: written by the `manifest` node (pipeline/publish/
    manifest.py), read by `publish`.

    Paths are relative to the build folder (the flow's work dir) so a build can be moved.
    """

    model_config = ConfigDict(extra="forbid")

    build_id: str
    pipeline_version: str
    run_config: dict[str, Any] = Field(default_factory=dict)
    seeds: dict[str, int] = Field(default_factory=dict)
    sandbox_image: str | None = None
    tables: dict[str, str]  # config name -> Parquet file (or folder): its train / full split
    # evaluation config -> its `test` split's file; an evaluation config without one
    # (Adv, built from Heldout's test split; a build made before test splits) publishes
    # its rows as both `test` and `full`
    test_tables: dict[str, str] = Field(default_factory=dict)
    # split assignments (cluster ids): recorded for provenance; publishing re-derives
    # invariant 2 from the rows it ships and does not read them
    assignments: str | None = None
    # Each stage's stats: written by builds before the manifest was a node; read, never
    # written (every stage's marker keeps its own).
    stage_stats: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def write(self, build_dir: str | Path) -> Path:
        path = Path(build_dir) / MANIFEST
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
        return path

    @classmethod
    def read(cls, build_dir: str | Path) -> BuildManifest:
        path = Path(build_dir) / MANIFEST
        if not path.exists():
            raise FileNotFoundError(
                f"{path} not found: `--build` must be a build's work folder (its `manifest` "
                "node writes build.json)"
            )
        return cls.model_validate_json(path.read_text())


def default_tag(manifest: BuildManifest) -> str:
    """The release tag of a build pushed without one: v<pipeline version>-<build id>."""
    return f"v{manifest.pipeline_version}-{manifest.build_id[:12]}"


def load_tables(build_dir: str | Path, manifest: BuildManifest) -> dict[str, pa.Table]:
    """Read every config's table, checked and cast to its explicit schema."""
    unknown = sorted(set(manifest.tables) - set(CONFIG_NAMES))
    if unknown:
        raise ValueError(f"{MANIFEST}: unknown config(s) {unknown}; known: {list(CONFIG_NAMES)}")
    tables: dict[str, pa.Table] = {}
    for cfg in CONFIGS:
        rel = manifest.tables.get(cfg.name)
        if rel is None:
            continue
        tables[cfg.name] = read_config_file(Path(build_dir) / rel, cfg.name)
    return tables


def load_test_tables(build_dir: str | Path, manifest: BuildManifest) -> dict[str, pa.Table]:
    """Each evaluation config's `test` table named in the manifest, checked and cast."""
    wrong = sorted(n for n in manifest.test_tables if CONFIG_BY_NAME.get(n) is None)
    wrong += sorted(
        n for n in manifest.test_tables if n in CONFIG_BY_NAME and CONFIG_BY_NAME[n].side != "eval"
    )
    if wrong:
        raise ValueError(f"{MANIFEST}: test_tables names {wrong}, which are not evaluation configs")
    return {
        name: read_parquet(Path(build_dir) / rel, CONFIG_BY_NAME[name].schema)
        for name, rel in sorted(manifest.test_tables.items())
    }


def split_tables(
    tables: dict[str, pa.Table], test_tables: dict[str, pa.Table]
) -> dict[str, dict[str, pa.Table]]:
    """config -> split -> rows, as published: `train` for a training config; `test` and
    `full` for an evaluation config (`test` = `full` where the build has no test table)."""
    out: dict[str, dict[str, pa.Table]] = {}
    for cfg in CONFIGS:
        table = tables.get(cfg.name)
        if table is None:
            continue
        if cfg.side == "train":
            out[cfg.name] = {"train": table}
        else:
            out[cfg.name] = {"test": test_tables.get(cfg.name, table), "full": table}
    return out


def shard_bounds(table: pa.Table, max_shard_bytes: int) -> list[tuple[int, int]]:
    """Split rows into contiguous shards of at most ~max_shard_bytes (in-memory Arrow size)."""
    if table.num_rows == 0:
        return [(0, 0)]
    n = max(1, math.ceil(table.nbytes / max_shard_bytes))
    n = min(n, table.num_rows)
    per = math.ceil(table.num_rows / n)
    return [(i, min(i + per, table.num_rows)) for i in range(0, table.num_rows, per)]


def shard_name(split: str, index: int, count: int) -> str:
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def write_config_shards(
    table: pa.Table,
    cfg: DatasetConfig,
    out_dir: Path,
    max_shard_bytes: int,
    split: str | None = None,
) -> list[Path]:
    """Write one split of a config (default: its default split) as size-bounded shards with
    the config's explicit schema."""
    split = split or cfg.split
    if split not in cfg.splits:
        raise ValueError(f"config {cfg.name} has no split {split!r}; it has {list(cfg.splits)}")
    bounds = shard_bounds(table, max_shard_bytes)
    paths = []
    for i, (lo, hi) in enumerate(bounds):
        path = out_dir / cfg.name / shard_name(split, i, len(bounds))
        paths.append(write_parquet(table.slice(lo, hi - lo), path, cfg.schema))
    return paths


def list_files(folder: Path) -> list[str]:
    """Repo-relative POSIX paths of every file in the folder, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
