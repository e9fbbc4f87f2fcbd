"""One runner for every stage (docs/architecture.md): the key, the marker and its stats, reuse,
chunk resume, the atomic swap and the shard plan/merge, for any `Stage` value.

Every build stage runs through it (the flows via flows/task.py, the commands and tests via
each stage's entry point). It knows nothing of judges or Prefect: a stage registers what it opens on `ctx.resources`, stores resumable rows through
`ctx.chunks`, and flows/ (or `run_sharded_inline`, without Prefect) decide where shards run.

The rules every run keeps:
- the marker is written last, and an old marker is removed before its output is rewritten,
  so a marker always vouches for complete outputs built under its key;
- reuse needs the key to match AND every (non-optional) output to exist;
- merged outputs are concatenated in shard-index order and stably sorted by problem_id, so
  the bytes never depend on the order shards finished in.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

import pyarrow as pa

from pipeline.common.hashing import sha256_files, sha256_text
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.sharding import merge_quarantines, merge_shards, write_shards
from pipeline.common.stage import (
    MARKER,
    C,
    ShardContext,
    Sharding,
    Stage,
    Stats,
    is_done,
    mark_done,
    read_stats,
    stage_key,
)
from schemas.tables import SchemaError

log = logging.getLogger(__name__)

Inputs = Mapping[str, Path | list[Path]]  # a gathered input: a list, in shard order


# ---------------------------------------------------------------------- where things go
def marker_dir(out: Path, beside: bool = False) -> Path:
    """Where the marker of a primary output lives: inside a folder; beside a file (a name
    with a suffix, `judged.parquet`) in `.<stem>.stage/`, today's ingest convention, and
    beside a folder too when `beside` (`Stage.marker_beside`: `hub/` -> `.hub.stage/`)."""
    out = Path(out)
    return out.with_name(f".{out.stem}.stage") if out.suffix or beside else out


def chunk_dir(out: Path) -> Path:
    """Where an output's resumable chunks wait for its marker (the judge's `.<name>.parts`)."""
    out = Path(out)
    return out.parent / f".{out.name}.parts"


def _as_list(value: Path | str | Sequence[Path | str]) -> list[Path]:
    if isinstance(value, (str, Path)):
        return [Path(value)]
    return [Path(p) for p in value]


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class StageResult:
    """What a stage run gives back (flows/task.py's result() carries the same fields)."""

    stage: str
    outputs: dict[str, str]
    digest: str  # of the outputs' contents: downstream cache keys depend on it
    stats: Stats
    cached: bool  # True when the marker matched and nothing ran
    shard: tuple[int, int] = (0, 1)
    parts: tuple[StageResult, ...] = ()  # a gathered stage's part results, in shard order

    def path(self, name: str) -> Path:
        return Path(self.outputs[name])

    def gathered(self, name: str) -> list[Path]:
        """Output `name` of every part, in shard-index order: a gathered input downstream."""
        return [p.path(name) for p in self.parts]


def _result(
    stage: str, outputs: Mapping[str, Path], stats: Stats, cached: bool, shard: tuple[int, int]
) -> StageResult:
    files = [Path(p) for p in outputs.values() if Path(p).exists()]
    return StageResult(
        stage=stage,
        outputs={k: str(v) for k, v in outputs.items()},
        digest=sha256_files(files)[:16],
        stats=stats,
        cached=cached,
        shard=shard,
    )


# ---------------------------------------------------------------------- the cache
def _cached(
    name: str,
    version: str,
    keyed: Any,
    inputs: Iterable[Path],
    out: Path,
    build: Callable[[Path], Stats],
    *,
    seed: int | None,
    marker: str,
    outputs: Iterable[Path],
    force: bool,
    atomic: bool,
    beside: bool = False,
) -> tuple[Stats, bool]:
    """run_cached's body: (stats, whether the marker was reused). `build(target)` writes the
    primary output at `target`: `out` itself, or a temp sibling when `atomic`."""
    out = Path(out)
    key = stage_key(name, version, keyed, inputs, seed)
    where = marker_dir(out, beside)
    if atomic:
        _restore_interrupted_swap(out)
    needed = [out, *(Path(p) for p in outputs)]
    if not force and is_done(where, key, marker) and all(p.exists() for p in needed):
        return read_stats(where, marker), True
    if atomic:
        return _build_atomic(out, key, name, build, marker, beside), False
    # The old marker must not vouch for outputs this run is about to overwrite.
    (where / marker).unlink(missing_ok=True)
    stats = build(out)
    mark_done(where, key, name, stats, marker)  # last: without it the output is unfinished
    return stats, False


def run_cached(
    name: str,
    version: str,
    keyed: Any,
    inputs: Iterable[Path],
    out: Path,
    fn: Callable[[], Stats],
    *,
    seed: int | None = None,
    marker: str = MARKER,
    outputs: Iterable[Path] = (),
    force: bool = False,
) -> Stats:
    """The only caller of stage_key/is_done/mark_done: reuse when the key matches and `out`
    and `outputs` exist, else run `fn` and write the marker (with its stats) last. `out` is
    the primary output (a folder, or a file whose marker goes in `.<stem>.stage/`)."""
    stats, _ = _cached(
        name,
        version,
        keyed,
        inputs,
        out,
        lambda _target: fn(),
        seed=seed,
        marker=marker,
        outputs=outputs,
        force=force,
        atomic=False,
    )
    return stats


def _building(out: Path) -> Path:
    # The suffix stays last, so a writer that reads it (`.parquet`) still can.
    return out.with_name(f".{out.stem}.building{out.suffix}")


def _previous(out: Path) -> Path:
    return out.with_name(f".{out.name}.previous")


def _restore_interrupted_swap(out: Path) -> None:
    """A crash between the swap's two renames leaves the finished old folder aside: put it
    back (a crash must never lose finished work). A half-built sibling is thrown away."""
    if not out.exists() and _previous(out).exists():
        os.replace(_previous(out), out)
    _remove(_previous(out))
    _remove(_building(out))


def _swap_in(tmp: Path, out: Path) -> None:
    """A file is replaced by one rename; an old folder steps aside first (a folder cannot be
    renamed over), and `_restore_interrupted_swap` puts it back after a crash in between."""
    if out.is_dir():
        os.replace(out, _previous(out))
    os.replace(tmp, out)
    _remove(_previous(out))


def _build_atomic(
    out: Path, key: str, name: str, build: Callable[[Path], Stats], marker: str, beside: bool
) -> Stats:
    """Build in a temp sibling and swap it in whole: readers see the old output or the new
    one, never a half-written one."""
    tmp = _building(out)
    _remove(tmp)
    try:
        stats = build(tmp)
        if not tmp.exists():
            raise FileNotFoundError(f"stage {name} wrote nothing at {tmp} (its ctx.out)")
        where = marker_dir(out, beside)
        if where != out:  # a file, or a folder with its marker beside: the marker follows
            (where / marker).unlink(missing_ok=True)
            _swap_in(tmp, out)
            mark_done(where, key, name, stats, marker)
        else:  # a folder: the marker goes in first, so it arrives with the rows
            mark_done(tmp, key, name, stats, marker)
            _swap_in(tmp, out)
    finally:
        _remove(tmp)
    return stats


# ---------------------------------------------------------------------- one stage
def _check_inputs(stage: Stage[Any], config: Any, inputs: Inputs) -> None:
    if not isinstance(config, stage.config):
        raise TypeError(
            f"stage {stage.name}: config is a {type(config).__name__}, not the "
            f"{stage.config.__name__} the stage takes"
        )
    missing = [n for n in stage.inputs if n not in inputs]
    if missing:
        raise ValueError(
            f"stage {stage.name}: input(s) {missing} not given (it reads {list(stage.inputs)})"
        )


def run_stage(
    stage: Stage[C],
    config: C,
    inputs: Inputs,
    out: Path,
    *,
    shard: tuple[int, int] = (0, 1),
    force: bool = False,
) -> StageResult:
    """Run one stage (or one shard of it) into the primary output `out`, or reuse it.

    The key hashes the stage version, `config.model_dump(exclude=stage.key.exclude)`,
    `stage.key.extra` and the content of every input, in `stage.inputs` order."""
    _check_inputs(stage, config, inputs)
    out = Path(out)
    files = [p for n in stage.inputs for p in _as_list(inputs[n])]
    keyed: dict[str, Any] = {"config": config.model_dump(mode="json", exclude=stage.key.exclude)}
    if stage.key.extra is not None:
        keyed["extra"] = stage.key.extra(config, inputs, out)
    outputs = stage.outputs(config, out)
    if stage.atomic and out.suffix and set(outputs.values()) - {out}:
        raise ValueError(
            f"stage {stage.name}: an atomic stage with a file output ({out.name}) swaps only "
            f"that file, but it also writes {sorted(k for k, p in outputs.items() if p != out)}"
            f"; make its primary output a folder"
        )
    required = [p for k, p in outputs.items() if k not in stage.optional_outputs]
    chunks = (
        ChunkStore(chunk_dir(out), stage.chunks.schema, stage.chunks.key)
        if stage.chunks is not None
        else None
    )

    def build(target: Path) -> Stats:
        with ExitStack() as resources:  # closed whether run() returns or raises
            ctx = ShardContext(
                config=config,
                inputs=dict(inputs),
                out=target,
                step=run_cached,
                resources=resources,
                shard=shard,
                chunks=chunks,
                final_out=out,
            )
            return stage.run(ctx)

    stats, cached = _cached(
        stage.name,
        stage.version,
        keyed,
        files,
        out,
        build,
        seed=None,  # a seed is a config field: the dump above carries it
        marker=stage.marker,
        outputs=required,
        force=force,
        atomic=stage.atomic,
        beside=stage.marker_beside,
    )
    if chunks is not None:
        chunks.clear()  # the marker holds: the chunks are in the output now
    return _result(stage.name, outputs, stats, cached, shard)


# ---------------------------------------------------------------------- shards
@dataclass(frozen=True)
class ShardCall(Generic[C]):
    """One planned shard: `run()` here, or a task's arguments in flows/."""

    stage: Stage[C]
    config: C
    inputs: Inputs
    out: Path
    shard: tuple[int, int]

    def run(self, *, force: bool = False) -> StageResult:
        return run_stage(
            self.stage, self.config, self.inputs, self.out, shard=self.shard, force=force
        )


def shard_folder(stage: Stage[Any], out: Path) -> Path:
    """Where a sharded stage keeps its shard inputs and parts, from its merged output."""
    assert stage.sharding is not None
    folder = stage.sharding.folder
    return folder(Path(out)) if folder is not None else Path(out).parent / stage.name


def _sharding(stage: Stage[Any]) -> Sharding:
    if stage.sharding is None:
        raise ValueError(f"stage {stage.name} is not sharded (its `sharding` is None)")
    return stage.sharding


def plan_shards(
    stage: Stage[C], config: C, inputs: Inputs, out: Path, n: int
) -> list[ShardCall[C]]:
    """Split the sharded inputs into `n` files by problem_id and name each shard's call.

    The named sharded inputs are concatenated first; a part reads its shard under the first
    name (the others become empty lists), and every other input as given."""
    sharding = _sharding(stage)
    if n < 1:
        raise ValueError(f"stage {stage.name}: shard count must be >= 1, got {n}")
    _check_inputs(stage, config, inputs)
    folder = shard_folder(stage, out)
    files = [p for name in sharding.inputs for p in _as_list(inputs[name])]
    shard_files = write_shards(files, n, folder / "shards", sharding.stem, sharding.schema)
    first, *others = sharding.inputs
    calls = []
    for i, shard_file in enumerate(shard_files):
        part_inputs: dict[str, Path | list[Path]] = dict(inputs)
        part_inputs[first] = shard_file
        part_inputs.update({name: [] for name in others})
        calls.append(ShardCall(stage, config, part_inputs, folder / sharding.part(i, n), (i, n)))
    return calls


def merge_parts(stage: Stage[C], config: C, out: Path, parts: Sequence[StageResult]) -> StageResult:
    """Bring the parts together in shard-index order, whatever order they finished in:
    concat + stable sort by problem_id for `sharding.merge`, the quarantines like
    pipeline.common.sharding.merge_quarantines, or (merge None) the parts' results gathered."""
    sharding = _sharding(stage)
    ordered = sorted(parts, key=lambda r: r.shard[0])
    n = ordered[0].shard[1] if ordered else 0
    if not ordered or [r.shard for r in ordered] != [(i, n) for i in range(n)]:
        raise ValueError(
            f"stage {stage.name}: cannot merge parts {[r.shard for r in parts]}: "
            f"need each shard 0..n-1 of n exactly once"
        )
    stats: Stats = {"shards": n, "parts": [r.stats for r in ordered]}
    cached = all(r.cached for r in ordered)
    if sharding.merge is None:
        return StageResult(
            stage=stage.name,
            outputs={},
            digest=sha256_text(*(r.digest for r in ordered))[:16],
            stats=stats,
            cached=cached,
            parts=tuple(ordered),
        )
    outputs = stage.outputs(config, Path(out))
    merged: dict[str, Path] = {}
    for name, schema in sharding.merge.items():
        merged[name] = merge_shards([r.path(name) for r in ordered], outputs[name], schema)
    for name in sharding.quarantines:
        stats[f"{name}_rows"] = merge_quarantines([r.path(name) for r in ordered], outputs[name])
        merged[name] = outputs[name]
    return _result(stage.name, merged, stats, cached, (0, 1))


def run_sharded_inline(
    stage: Stage[C], config: C, inputs: Inputs, out: Path, n: int = 1, *, force: bool = False
) -> StageResult:
    """Run a stage here, shard after shard, without Prefect (the CLI and tests)."""
    if stage.sharding is None:
        return run_stage(stage, config, inputs, out, force=force)
    calls = plan_shards(stage, config, inputs, out, n)
    return merge_parts(stage, config, out, [c.run(force=force) for c in calls])


# ---------------------------------------------------------------------- chunks
class ChunkStore:
    """Resumable rows beside an output (the judge's checkpoints generalised): Parquet chunks
    of rows keyed by a column, saved as work finishes, loaded by the rerun after a crash,
    cleared by the runner once the output's marker is written."""

    def __init__(self, folder: Path, schema: pa.Schema, key: str) -> None:
        if key not in schema.names:
            raise ValueError(f"chunk key {key!r} is not a column of the chunk schema")
        self.folder = Path(folder)
        self.schema = schema
        self.key = key

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("chunk-*.parquet")) if self.folder.exists() else []

    def load(self) -> list[dict[str, Any]]:
        """Every saved row. A chunk of an older schema is skipped with a warning: its rows
        are computed again, never read wrongly."""
        rows: list[dict[str, Any]] = []
        for part in self.files():
            try:
                rows += read_parquet(part, self.schema).to_pylist()
            except (SchemaError, pa.ArrowInvalid) as e:
                log.warning("%s: computed again (an older chunk format: %s)", part, e)
        return rows

    def save(self, rows: Sequence[Mapping[str, Any]]) -> Path | None:
        """Write `rows` as one chunk, named by its keys (saving the same rows twice writes
        one file); atomic, so a kill mid-save leaves no half chunk."""
        if not rows:
            return None
        keys = sorted(str(r[self.key]) for r in rows)
        name = hashlib.sha256("\x00".join(keys).encode()).hexdigest()[:16]
        table = pa.Table.from_pylist([dict(r) for r in rows], schema=self.schema)
        return write_parquet(table, self.folder / f"chunk-{name}.parquet", self.schema)

    def clear(self) -> None:
        for part in self.files():
            part.unlink()
        if self.folder.exists() and not any(self.folder.iterdir()):
            self.folder.rmdir()
