"""`publish-aletheia`: re-check, lay out the Hub folder (card, shards, plots), optionally push."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task

from flows.artifacts import (
    artifact_key,
    config_fingerprints,
    counts_artifact,
    dataset_counts,
    summary_artifact,
)
from flows.quiet import quiet_libraries
from flows.task import RunSettings, checked, file_ref, jsonable, retry_transient, run_task
from pipeline import stages
from pipeline.config import RunConfig
from pipeline.publish.config import PublishConfig
from pipeline.publish.layout import BuildManifest, default_tag
from pipeline.publish.stage import PUBLISH, publish_config, publish_inputs

DEFAULT_CONFIG = "configs/demo.yaml"


def _publish_config(cfg: RunConfig) -> PublishConfig:
    return publish_config(cfg)


@task(
    name="push",
    tags=["network"],
    retries=3,
    retry_delay_seconds=[10, 60, 300],
    retry_condition_fn=retry_transient,
)
def push_task(hub_dir: str, repo_id: str, tag: str, endpoint: str | None, private: bool) -> dict:
    """Not cached: pushing is idempotent by itself (it diffs against the remote first)."""
    from pipeline.publish.push import push_folder

    r = push_folder(hub_dir, repo_id, tag=tag, endpoint=endpoint, private=private)
    return jsonable(
        {
            "repo_id": r.repo_id,
            "commit": r.commit,
            "head": r.head,
            "tag": r.tag,
            "uploaded": len(r.uploaded),
            "deleted": len(r.deleted),
            "unchanged": len(r.unchanged),
        }
    )


@flow(name="publish-aletheia", validate_parameters=False)
def publish_aletheia(
    config: str | dict[str, Any] | RunConfig = DEFAULT_CONFIG, build_dir: str | None = None
) -> dict[str, Any]:
    """Publish the build in `build_dir` (default: the run config's work dir)."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    # On its own: the Hub checks only (repo_id and HF_TOKEN before the layout work, not
    # after); from the train flow: its RunConfig, checked there.
    cfg = checked(config, only=("publish",))
    logger = get_run_logger()
    build = Path(build_dir) if build_dir else cfg.work_dir
    manifest = BuildManifest.read(build)
    inputs = {name: file_ref(paths) for name, paths in publish_inputs(build).items()}
    node = stages.GRAPH["publish"]
    (call,) = node.calls(cfg)
    hub_dir = node.out(cfg, call)
    published = run_task(PUBLISH, call, inputs, hub_dir, RunSettings.of(cfg))
    counts_artifact(
        artifact_key(cfg.name, "dataset-counts"),
        dataset_counts(hub_dir),
        "Candidates per config (split) / language / model / verdict",
    )
    pushed = None
    if cfg.hub.push:
        if not cfg.hub.repo_id:
            raise ValueError("hub.push is true but hub.repo_id is not set")
        pushed = push_task(
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
