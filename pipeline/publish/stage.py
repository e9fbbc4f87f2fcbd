"""The publish stage: a build folder in, the Hub-ready folder out (card + shards + plots).

`build_hub_folder` reads the build manifest, re-checks the invariants on the exact
rows that would ship, every split of every config (refusing, with the offending rows
named, if one breaks), writes one folder of size-sharded Parquet per config (one shard
set per split), the plots and the card into a staging folder, and swaps it into place
only when complete.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from pipeline.common.answers import AnswerFormat
from pipeline.common.perms import as_if_created
from pipeline.common.stage import is_done, mark_done, read_stats, stage_key
from pipeline.publish.answer_format import tables_with_answer_format
from pipeline.publish.card import load_target, render_card
from pipeline.publish.card_info import dataset_info
from pipeline.publish.checks import CheckConfig, enforce, run_checks
from pipeline.publish.layout import (
    CONFIG_BY_NAME,
    CONFIG_NAMES,
    DEFAULT_MAX_SHARD_BYTES,
    MANIFEST,
    BuildManifest,
    list_files,
    load_tables,
    load_test_tables,
    replace_dir,
    split_tables,
    write_config_shards,
)

STAGE = "publish"
VERSION = "3"  # 2: evaluation configs as `test` + `full` splits; 3: measured card


class PublishConfig(BaseModel):
    """How the Hub folder is laid out and what it must contain; part of the cache key."""

    model_config = ConfigDict(extra="forbid")

    max_shard_bytes: int = Field(
        DEFAULT_MAX_SHARD_BYTES,
        gt=0,
        description="Most bytes (in-memory Arrow size) of one Parquet shard of a split.",
    )
    require_configs: list[str] = Field(
        default_factory=lambda: list(CONFIG_NAMES),
        description="Configs that must be present and non-empty, or publishing refuses.",
    )
    pretty_name: str = Field(
        "Aletheia (regenerated)", description="The dataset's name on its card."
    )
    license: str | None = Field(
        None,
        description="The card's license; None = the sources' license when they share one, "
        'else "other".',
    )
    checks: CheckConfig = Field(
        default_factory=CheckConfig, description="The invariants checked before publishing."
    )
    answer_format: AnswerFormat = Field(
        "letter",
        description="chosen_answer (and DPO's rejected_answer) as the bare letter `A`, or as "
        "Aletheia's `[[A]]` for users who feed the rows to Aletheia's own scripts.",
    )


class MissingConfigError(ValueError):
    pass


def _require(tables: dict[str, pa.Table], required: list[str]) -> None:
    unknown = [c for c in required if c not in CONFIG_BY_NAME]
    if unknown:
        raise ValueError(f"require_configs: unknown config(s) {unknown}")
    missing = [c for c in required if c not in tables]
    empty = [c for c in required if c in tables and tables[c].num_rows == 0]
    if missing or empty:
        raise MissingConfigError(
            f"refusing to publish: config(s) missing {missing} / empty {empty} "
            f"(required: {required}; set require_configs to publish a partial build)"
        )


def _repo_id(manifest: BuildManifest) -> str | None:
    """The run config's `hub.repo_id`, as the build recorded it."""
    hub = manifest.run_config.get("hub")
    return hub.get("repo_id") if isinstance(hub, dict) else None


def build_hub_folder(
    build_dir: str | Path,
    hub_dir: str | Path,
    config: PublishConfig | None = None,
    repo_id: str | None = None,
) -> dict[str, Any]:
    """Lay out the Hub folder for a build. Returns stats (rows and shards per config, checks).

    The card's load lines name `repo_id` (default: the build's `hub.repo_id`), or without
    one the folder as given here."""
    config = config or PublishConfig()
    build_dir, hub_dir = Path(build_dir), Path(hub_dir)
    manifest = BuildManifest.read(build_dir)
    load_from = load_target(repo_id or _repo_id(manifest), hub_dir)
    # Only the tables that ship: the re-check reads nothing else (no split-stage outputs).
    shipped = [*manifest.tables.values(), *manifest.test_tables.values()]
    inputs = [build_dir / MANIFEST] + [build_dir / p for p in shipped]
    state_dir = build_dir / STAGE
    key = stage_key(STAGE, VERSION, config, inputs) + f":{hub_dir.resolve()}:{load_from}"
    if is_done(state_dir, key) and (hub_dir / "README.md").exists():
        return read_stats(state_dir) | {"cached": True}

    fmt = config.answer_format  # every split is published in the same answer form
    tables = tables_with_answer_format(load_tables(build_dir, manifest), fmt)
    _require(tables, config.require_configs)
    test_tables = tables_with_answer_format(load_test_tables(build_dir, manifest), fmt)
    splits = split_tables(tables, test_tables)
    results = enforce(run_checks(tables, config.checks, splits))

    hub_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=hub_dir.parent, prefix=f".{hub_dir.name}.staging-"))
    shards = {
        name: sum(
            len(write_config_shards(t, CONFIG_BY_NAME[name], staging, config.max_shard_bytes, s))
            for s, t in by_split.items()
        )
        for name, by_split in splits.items()
    }
    from pipeline.publish.plots import write_plots  # matplotlib: only when publishing

    plots = write_plots(splits, staging / "assets")
    card = render_card(
        splits,
        manifest,
        results,
        plots,
        pretty_name=config.pretty_name,
        license=config.license,
        info=dataset_info(splits, staging),
        load_from=load_from,
    )
    (staging / "README.md").write_text(card, encoding="utf-8")
    as_if_created(staging)  # mkdtemp made it 0700: the published folder follows the umask
    replace_dir(staging, hub_dir)

    stats = {
        "hub_dir": str(hub_dir),
        "build_id": manifest.build_id,
        "rows": {name: t.num_rows for name, t in tables.items()},  # train / full
        "split_rows": {
            name: {s: t.num_rows for s, t in by_split.items()} for name, by_split in splits.items()
        },
        "shards": shards,
        "files": len(list_files(hub_dir)),
        "checks": [
            {"name": r.name, "invariant": r.invariant, "rows": r.checked_rows, "passed": r.passed}
            for r in results
        ],
    }
    mark_done(state_dir, key, STAGE, stats)
    return stats | {"cached": False}
