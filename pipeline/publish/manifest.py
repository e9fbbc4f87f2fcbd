"""The build manifest as a stage: MANIFEST writes `build.json`, what `publish` reads.

A node of the build graph like any other (pipeline/stages.py), after the last table is
built: its inputs are the tables that ship (each configuration's train / full table and the
evaluation configurations' `test` tables, in the order its call names them), the split
assignments and the judged candidates (the sandbox image behind every verdict); its call the
build's identity (build id, pipeline version, the whole run config, the seeds). So both
executors, the Prefect flow and `aletheia stage manifest`, write the same bytes, and a
build made node by node can be published.

Paths in the manifest are relative to its folder (the work dir), so a build can be moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipeline.common.config import RunnerSection
from pipeline.common.stage import ShardContext, Stage, Stats
from pipeline.publish.layout import MANIFEST, BuildManifest

VERSION = "1"


class ManifestCall(BaseModel):
    """What MANIFEST writes besides the paths of its inputs, built from the run config at
    wiring time: the build's identity and the names of the tables its inputs list."""

    model_config = ConfigDict(extra="forbid")

    build_id: str
    pipeline_version: str
    run_config: dict[str, Any] = Field(default_factory=dict)
    seeds: dict[str, int] = Field(default_factory=dict)
    tables: list[str] = Field(description="The configuration of each `tables` input, in order.")
    test_tables: list[str] = Field(
        default_factory=list,
        description="The evaluation configuration of each `test_tables` input, in order.",
    )


def _outputs(call: ManifestCall, out: Path) -> dict[str, Path]:
    return {"manifest": out}


def _files(value: Path | list[Path]) -> list[Path]:
    return [Path(value)] if isinstance(value, (str, Path)) else [Path(p) for p in value]


def _named(names: list[str], value: Path | list[Path], what: str) -> dict[str, Path]:
    files = _files(value)
    if len(files) != len(names):
        raise ValueError(f"manifest: {len(names)} {what} named ({names}), {len(files)} given")
    return dict(zip(names, files, strict=True))


def _sandbox_image(judged: Path) -> str | None:
    """Every image that judged a candidate, sorted (None: no candidate was judged)."""
    import polars as pl

    images = pl.read_parquet(judged, columns=["sandbox_image"])["sandbox_image"]
    return ", ".join(i for i in images.unique().sort().to_list() if i) or None


def _write(ctx: ShardContext[ManifestCall]) -> Stats:
    call = ctx.config
    work = (ctx.final_out or ctx.out).parent.resolve()

    def rel(p: Path) -> str:
        return p.resolve().relative_to(work).as_posix()

    tables = _named(call.tables, ctx.inputs["tables"], "tables")
    tests = _named(call.test_tables, ctx.inputs["test_tables"], "test tables")
    (assignments,) = _files(ctx.inputs["assignments"])
    (judged,) = _files(ctx.inputs["judged"])
    manifest = BuildManifest(
        build_id=call.build_id,
        pipeline_version=call.pipeline_version,
        run_config=call.run_config,
        seeds=call.seeds,
        sandbox_image=_sandbox_image(judged),
        tables={k: rel(v) for k, v in tables.items()},
        # Adv has no test table of its own: it is published as both `test` and `full`.
        test_tables={k: rel(v) for k, v in tests.items()},
        assignments=rel(assignments),
    )
    written = manifest.write(ctx.out.parent)
    if written != ctx.out:  # BuildManifest.write names its file itself
        written.replace(ctx.out)
    return {"build_id": call.build_id, "tables": len(tables), "test_tables": len(tests)}


def _plan(call: ManifestCall, runner: RunnerSection) -> str:
    return f"{MANIFEST}: {len(call.tables)} tables, {len(call.test_tables)} test tables"


MANIFEST_STAGE: Stage[ManifestCall] = Stage(
    name="manifest",
    version=VERSION,
    config=ManifestCall,
    inputs=("tables", "test_tables", "assignments", "judged"),
    outputs=_outputs,
    run=_write,
    plan=_plan,
)
