"""`publish-aletheia`: re-check, lay out the Hub folder (card, shards, plots), optionally push."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows import tasks as T
from flows.artifacts import (
    artifact_key,
    config_fingerprints,
    counts_artifact,
    dataset_counts,
    summary_artifact,
)
from pipeline import preflight
from pipeline.common.hashing import sha256_files
from pipeline.config import RunConfig, load_run_config
from pipeline.publish.config import PublishConfig
from pipeline.publish.layout import MANIFEST, BuildManifest, default_tag
from pipeline.splits.config import NearDupConfig

DEFAULT_CONFIG = "configs/demo.yaml"


def _publish_config(cfg: RunConfig) -> PublishConfig:
    """The run's publish knobs, with the near-duplicate definition its split stage used."""
    near_dup = NearDupConfig(**cfg.splits.model_dump(include=set(NearDupConfig.model_fields)))
    checks = cfg.publish.checks.model_copy(update={"near_dup": near_dup})
    return cfg.publish.model_copy(update={"checks": checks})


@flow(name="publish-aletheia", log_prints=True)
def publish_aletheia(
    config: str | dict[str, Any] = DEFAULT_CONFIG, build_dir: str | None = None
) -> dict[str, Any]:
    """Publish the build in `build_dir` (default: the run config's work dir)."""
    cfg = load_run_config(config)
    preflight.require_hub(cfg)  # repo_id and HF_TOKEN before the layout work, not after
    logger = get_run_logger()
    build = Path(build_dir) if build_dir else cfg.work_dir
    manifest = BuildManifest.read(build)
    shipped = [*manifest.tables.values(), *manifest.test_tables.values()]
    inputs = [build / MANIFEST] + [build / p for p in shipped]
    hub_dir = cfg.hub_dir
    published = T.configured(T.publish_task, cfg, [hub_dir / "README.md"])(
        str(build),
        sha256_files(inputs)[:16],
        str(hub_dir),
        _publish_config(cfg).model_dump(mode="json"),
        T.code_digest("pipeline.publish"),
    )
    counts_artifact(
        artifact_key(cfg.name, "dataset-counts"),
        dataset_counts(hub_dir),
        "Candidates per config (split) / language / model / verdict",
    )
    pushed = None
    if cfg.hub.push:
        if not cfg.hub.repo_id:
            raise ValueError("hub.push is true but hub.repo_id is not set")
        pushed = T.push_task(
            str(hub_dir),
            cfg.hub.repo_id,
            cfg.hub.tag or default_tag(manifest),
            cfg.hub.endpoint,
            cfg.hub.private,
        )
    summary_artifact(artifact_key(cfg.name, "summary"), cfg, published, pushed)
    prints = config_fingerprints(hub_dir)
    for name, fp in prints.items():
        logger.info("[fingerprint] published %s: %d rows %s", name, fp["rows"], fp["hash"])
    rows = published["stats"]["rows"]
    logger.info(
        "dataset: %s (%s)", hub_dir.resolve(), ", ".join(f"{k} {v}" for k, v in rows.items())
    )
    return {
        "hub_dir": str(hub_dir.resolve()),
        "work_dir": str(cfg.work_dir.resolve()),
        "rows": rows,
        "split_rows": published["stats"].get("split_rows", {}),
        "checks": published["stats"]["checks"],
        "push": pushed,
        "build_id": manifest.build_id,
        "fingerprints": prints,
    }
