"""`aletheia publish`: lay out the Hub folder for a build and optionally push it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.publish.layout import BuildManifest, default_tag


def register(app: typer.Typer) -> None:
    @app.command("publish")
    def publish(
        build: Annotated[Path, typer.Option("--build", help="build folder (holds build.json)")],
        repo_id: Annotated[
            str | None,
            typer.Option(
                "--repo-id",
                help="namespace/name on the Hub, named by the card's load lines "
                "(default: the build's hub.repo_id)",
            ),
        ] = None,
        push: Annotated[
            bool, typer.Option("--push", help="push to the Hub (token: HF_TOKEN)")
        ] = False,
        hub_dir: Annotated[
            Path | None, typer.Option(help="local repo folder; default <build>/../hub")
        ] = None,
        tag: Annotated[
            str | None, typer.Option(help="release tag; default v<version>-<build id>")
        ] = None,
        endpoint: Annotated[
            str | None, typer.Option(help="Hub endpoint (default: HF_ENDPOINT or the Hub)")
        ] = None,
        private: Annotated[bool, typer.Option(help="create the repo private")] = False,
        max_shard_mb: Annotated[
            int | None,
            typer.Option(
                help="target Parquet shard size (MiB); default: the run config's publish.max_shard_bytes"
            ),
        ] = None,
    ) -> None:
        """Re-check the invariants, write the card + shards + plots, and (with --push) release.

        The card name, license, required configs and shard size come from the `publish:`
        section of the run config the build was made with (kept in build.json).
        """
        from pipeline.publish.config import PublishConfig
        from pipeline.publish.push import push_folder
        from pipeline.publish.stage import build_hub_folder

        hub = hub_dir or build.resolve().parent / "hub"
        section = BuildManifest.read(build).run_config.get("publish") or {}
        config = PublishConfig.model_validate(section)
        if max_shard_mb is not None:
            config = config.model_copy(update={"max_shard_bytes": max_shard_mb << 20})
        stats = build_hub_folder(build, hub, config, repo_id=repo_id)
        for name, n in stats["rows"].items():
            typer.echo(f"{name:16s} {n:8d} rows  {stats['shards'][name]} shard(s)")
        typer.echo(f"hub folder: {hub}")
        if not push:
            return
        if not repo_id:
            raise typer.BadParameter("--push needs --repo-id")
        manifest = BuildManifest.read(build)
        result = push_folder(
            hub, repo_id, tag=tag or default_tag(manifest), endpoint=endpoint, private=private
        )
        what = f"commit {result.commit}" if result.changed else "no change, no new commit"
        typer.echo(f"pushed {repo_id}: {what}; head {result.head}; tag {result.tag}")
