"""The publish stage: a build folder in, the Hub-ready folder out (card + shards + plots).

`PUBLISH` (a `Stage` value, run by pipeline/common/runner.py) reads the build manifest,
re-checks the invariants on the exact rows that would ship, every split of every config
(refusing, with the offending rows named, if one breaks), and writes one folder of
size-sharded Parquet per config (one shard set per split), the plots, the card and the
card's long parts in `details/` (the run config, each config's first row, the candidate
tables). It is
`atomic`: the runner builds it in a hidden sibling and swaps it in whole, so a crash
mid-publish leaves the previous folder as it was. Every file in the folder ships, so its
marker stays beside it (`.<hub>.stage/`), and the key's extra part is the load target the
card names (`key.extra`). The build graph's `publish` node runs it on the `manifest`
node's build.json; `build_hub_folder` is `aletheia publish --build`'s entry (any build folder).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from pipeline.common.config import RunnerSection
from pipeline.common.perms import as_if_created
from pipeline.common.runner import run_stage
from pipeline.common.stage import Finished, Keying, ShardContext, Shown, Stage, Stats
from pipeline.publish.answer_format import tables_with_answer_format
from pipeline.publish.card import load_target, release_files, render_card
from pipeline.publish.card_info import dataset_info
from pipeline.publish.checks import enforce, run_checks
from pipeline.publish.config import PublishConfig
from pipeline.publish.labels import tables_with_modification_labels
from pipeline.publish.layout import (
    MANIFEST,
    BuildManifest,
    list_files,
    load_tables,
    load_test_tables,
    split_tables,
    write_config_shards,
)
from schemas.dataset_configs import CONFIG_BY_NAME

STAGE = "publish"
# 2: evaluation configs as `test` + `full` splits; 3: measured card; 4: the card's long parts
# in details/, the header without features
VERSION = "4"


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


class PublishCall(BaseModel):
    """What the publish stage reads, built at wiring time and never part of RunConfig: the
    run's `publish` section (a build copies its split stage's near-duplicate definition into
    `checks`: publish_config) and the Hub repo the card's load lines name."""

    model_config = ConfigDict(extra="forbid")

    publish: PublishConfig = Field(default_factory=PublishConfig)
    repo_id: str | None = None  # None: the build's own hub.repo_id, as its manifest recorded


def _repo_id(manifest: BuildManifest) -> str | None:
    """The run config's `hub.repo_id`, as the build recorded it."""
    hub = manifest.run_config.get("hub")
    return hub.get("repo_id") if isinstance(hub, dict) else None


def publish_config(run: Any) -> PublishConfig:
    """A run's publish knobs (its `publish` section), with the near-duplicate definition its
    split stage used (`run`: a RunConfig)."""
    from pipeline.splits.config import NearDupConfig

    near_dup = NearDupConfig(**run.splits.model_dump(include=set(NearDupConfig.model_fields)))
    checks = run.publish.checks.model_copy(update={"near_dup": near_dup})
    return run.publish.model_copy(update={"checks": checks})


def publish_inputs(build_dir: str | Path) -> dict[str, Path | list[Path]]:
    """The stage's named inputs: the manifest and the tables that ship (the re-check reads
    nothing else: no split-stage outputs)."""
    build_dir = Path(build_dir)
    manifest = BuildManifest.read(build_dir)
    shipped = [*manifest.tables.values(), *manifest.test_tables.values()]
    return {"manifest": build_dir / MANIFEST, "tables": [build_dir / p for p in shipped]}


def _build_dir(inputs: Mapping[str, Path | list[Path]]) -> Path:
    manifest = inputs["manifest"]
    assert isinstance(manifest, Path), "the manifest input is one file"
    return manifest.parent


def _load_from(call: PublishCall, inputs: Mapping[str, Path | list[Path]], hub_dir: Path) -> str:
    """What the card's load lines name: `repo_id`, else the build's `hub.repo_id`, else the
    folder as given. It enters the key (`key.extra`): a folder published for another repo
    or path has another card."""
    return load_target(call.repo_id or _repo_id(BuildManifest.read(_build_dir(inputs))), hub_dir)


def _outputs(call: PublishCall, hub_dir: Path) -> dict[str, Path]:
    return {"hub": hub_dir, "card": hub_dir / "README.md"}


def _publish(ctx: ShardContext[PublishCall]) -> Stats:
    """Check the rows that ship, then write the folder at `ctx.out` (the runner's temp
    sibling; `ctx.final_out` is where it lands, which the card names)."""
    config = ctx.config.publish
    hub_dir = ctx.final_out or ctx.out
    build_dir = _build_dir(ctx.inputs)
    manifest = BuildManifest.read(build_dir)
    load_from = _load_from(ctx.config, ctx.inputs, hub_dir)

    fmt = config.answer_format  # every split is published in the same answer form
    labels = config.modification_labels  # and with the same bias labels
    tables = tables_with_modification_labels(
        tables_with_answer_format(load_tables(build_dir, manifest), fmt), labels
    )
    _require(tables, config.require_configs)
    test_tables = tables_with_modification_labels(
        tables_with_answer_format(load_test_tables(build_dir, manifest), fmt), labels
    )
    splits = split_tables(tables, test_tables)
    results = enforce(run_checks(tables, config.checks, splits))

    staging = ctx.out
    staging.mkdir(parents=True)
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
    for rel, text in release_files(splits, manifest).items():  # the card's long parts
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_text(text, encoding="utf-8")
    as_if_created(staging)  # temp-written files: the published folder follows the umask
    return {
        "hub_dir": str(hub_dir),
        "build_id": manifest.build_id,
        "rows": {name: t.num_rows for name, t in tables.items()},  # train / full
        "split_rows": {
            name: {s: t.num_rows for s, t in by_split.items()} for name, by_split in splits.items()
        },
        "shards": shards,
        "files": len(list_files(staging)),
        "checks": [
            {"name": r.name, "invariant": r.invariant, "rows": r.checked_rows, "passed": r.passed}
            for r in results
        ],
    }


def _plan_line(call: PublishCall, runner: RunnerSection) -> str:
    return "the hub folder: card, shards, plots, the invariants checked on what ships"


def _shown(done: Finished) -> Shown:
    from pipeline.publish.shown import publish_shown  # polars, matplotlib's tables: on use

    return publish_shown(done)


PUBLISH: Stage[PublishCall] = Stage(
    name=STAGE,
    version=VERSION,
    config=PublishCall,
    inputs=("manifest", "tables"),
    outputs=_outputs,
    run=_publish,
    plan=_plan_line,
    key=Keying(frozenset({"repo_id"}), _load_from),  # repo_id acts through the load target
    atomic=True,
    marker_beside=True,  # every file in the Hub folder is pushed: no marker inside
    shows=_shown,
)


def build_hub_folder(
    build_dir: str | Path,
    hub_dir: str | Path,
    config: PublishConfig | None = None,
    repo_id: str | None = None,
) -> dict[str, Any]:
    """Lay out the Hub folder for a build. Returns stats (rows and shards per config, checks)
    and whether the folder was reused (`cached`).

    The card's load lines name `repo_id` (default: the build's `hub.repo_id`), or without
    one the folder as given here (`aletheia publish --build`)."""
    call = PublishCall(publish=config or PublishConfig(), repo_id=repo_id)
    result = run_stage(PUBLISH, call, publish_inputs(build_dir), Path(hub_dir))
    return result.stats | {"cached": result.cached}
