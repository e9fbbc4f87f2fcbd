"""Stage caching: an output is a pure function of (stage, version, config, inputs, seed).

A finished stage writes `_stage.json` (its key and stats) into its output folder
last, so a folder without it is unfinished and is redone; one with a matching key
is reused and the stage executes nothing.

Below the helpers: the stage as a value (`Stage`, docs/architecture.md), which pipeline/common/runner.py runs
and pipeline/common/graph.py places in the build graph.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import pyarrow as pa
from pydantic import BaseModel

from pipeline.common.config import RunnerSection
from pipeline.common.hashing import canonical_json, sha256_files, sha256_text

if TYPE_CHECKING:
    from pipeline.common.runner import ChunkStore

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


def is_done(out_dir: str | Path, key: str, marker_name: str = MARKER) -> bool:
    marker = Path(out_dir) / marker_name
    if not marker.exists():
        return False
    try:
        return json.loads(marker.read_text())["key"] == key
    except (ValueError, KeyError):
        return False


def mark_done(
    out_dir: str | Path,
    key: str,
    stage: str,
    stats: dict[str, Any],
    marker_name: str = MARKER,
) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (marker_name + ".tmp")
    tmp.write_text(json.dumps({"stage": stage, "key": key, "stats": stats}, indent=2, default=str))
    tmp.replace(out / marker_name)


def read_stats(out_dir: str | Path, marker_name: str = MARKER) -> dict[str, Any]:
    return json.loads((Path(out_dir) / marker_name).read_text())["stats"]


# ---------------------------------------------------------------------- the stage as a value
# Every build stage is a `Stage` value; pipeline/common/runner.py is the one caller of
# stage_key/is_done/mark_done.

C = TypeVar("C", bound=BaseModel)

# What a stage returns and its marker keeps: a JSON-able dict, as every stage returns today.
Stats = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One preflight finding: what a stage's check (and preflight's run-level checks) return."""

    check: str  # sources | models | hub | templates | docker | ray | config
    message: str  # what is wrong and what to do
    fatal: bool = True
    # An engine or server that cannot be had here (a dead judge engine, a model server that
    # does not answer), not a mistake in the config: the command exits 3, not 2.
    unavailable: bool = False


@dataclass(frozen=True)
class CheckContext:
    """What a stage check may know beyond its own section."""

    built: frozenset[Path] = frozenset()  # folders an earlier stage builds (policies, tiny model)
    docker: bool = True
    facts: Mapping[str, Any] = field(default_factory=dict)  # plan facts: "sources" -> plans


def _default_part(i: int, n: int) -> str:
    return f"shard-{i:04d}-of-{n:04d}"


@dataclass(frozen=True)
class Sharding:
    """How a stage splits by problem and how its parts come back together.

    Layout, with `folder(out)` (default `out.parent / stage.name`): shard inputs at
    `<folder>/shards/<stem>-IIII-of-NNNN.parquet`, part outputs at `<folder>/<part(i, n)>`.
    The defaults are no stage's today; each adopter names its own so the work dir keeps its
    layout (judge: part `judged-IIII-of-NNNN.parquet`, sample: `shard-IIII`)."""

    inputs: tuple[str, ...]  # concatenated, then split by problem_id
    schema: pa.Schema  # of the sharded inputs
    count: Callable[[RunnerSection], int]  # the shard count, from the run's `runner:` section
    placement: Literal["sample", "judge"]  # the runner-section placement a shard asks Ray for
    # output -> schema: concat in shard-index order, stable sort by problem_id;
    # None = gather (the parts' results go downstream as a list, in shard-index order).
    merge: Mapping[str, pa.Schema] | None
    quarantines: tuple[
        str, ...
    ] = ()  # outputs merged like pipeline.common.sharding.merge_quarantines
    stem: str = "rows"  # the shard input files' stem (today: problems | candidates | instances)
    folder: Callable[[Path], Path] | None = None  # from the merged primary output
    part: Callable[[int, int], str] = _default_part  # a part's primary output, in `folder`


@dataclass(frozen=True)
class Chunks:
    """Resume by chunks (the judge's checkpoints generalised): rows of `schema`, named by
    their `key` column, stored beside the output until its marker is written."""

    schema: pa.Schema
    key: str


@dataclass(frozen=True)
class Keying:
    """What of a call enters its stage's key, beside the content of every input: its fields
    less `exclude` (model_dump's exclude: what changes no row, `progress` by default), and
    `extra`, what the call stands for beyond its fields (publish: the load target its card
    names; a bound judge: its engine's stamp), from (call, inputs, primary output)."""

    exclude: Any = frozenset({"progress"})
    extra: Callable[[Any, Mapping[str, Any], Path], str] | None = None


def _no_findings(config: Any, ctx: CheckContext) -> Iterable[Finding]:
    return ()


@dataclass(frozen=True)
class Shown:
    """What an executor shows of a finished stage run (`Stage.shows`), beside the rows and
    content hash of each Parquet output it shows for every stage: log lines, tables (the
    Prefect UI's table artifacts: key -> (description, rows)), a part of the build's
    summary (Markdown), fingerprint entries of its own (a model's weights hash:
    `{"stage", "output", "rows": None, "hash"}`) and fields added to its outputs' entries
    (output name -> fields: the judge's timing). Plain data: no stage knows Prefect."""

    lines: tuple[str, ...] = ()
    tables: Mapping[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    summary: str = ""
    prints: tuple[dict[str, Any], ...] = ()
    notes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


class LeftUnfinished(RuntimeError):
    """A run that wrote its outputs but left some work undone (units that failed to
    generate): raised by `Stage.run`, so the runner writes no marker and the next run
    retries what is missing. `stats`: what the run returns. An executor goes on with the
    outputs and says so; it does not fail the build."""

    def __init__(self, message: str, stats: Stats) -> None:
        super().__init__(message)
        self.stats = stats


@dataclass(frozen=True)
class Finished:
    """A finished stage run as `Stage.shows` sees it: the call its node gave (for a stage
    with `call_of`, the section), its inputs, its outputs (name -> path) and its stats."""

    call: Any
    inputs: Mapping[str, Path | list[Path]]
    outputs: Mapping[str, str]
    stats: Stats


@dataclass(frozen=True)
class Stage(Generic[C]):
    """A stage as a value: what it reads, writes and keys on, and the function that runs it.

    The primary output `out` is a folder (the marker inside) or, when its name has a suffix
    (`judged.parquet`), a file with its marker folder `.<stem>.stage/` beside it."""

    name: str  # marker, task, artifact and UI name: "judge"
    version: str  # bump when the same inputs + config give other rows
    config: type[C]  # its section model (or a call model built at wiring time)
    inputs: tuple[str, ...]  # named inputs; the key hashes their content, in this order
    outputs: Callable[[C, Path], dict[str, Path]]  # every output, from the primary one
    run: Callable[[ShardContext[C]], Stats]  # one shard or the whole stage
    check: Callable[[C, CheckContext], Iterable[Finding]] = _no_findings
    optional_outputs: frozenset[str] = frozenset()  # a quarantine written only with rows
    key: Keying = field(default_factory=lambda: Keying())  # what of the call is keyed
    sharding: Sharding | None = None
    chunks: Chunks | None = None  # None: resume by the marker only
    marker: str = MARKER  # the policy fit keeps "fit.json"
    atomic: bool = False  # built in a temp sibling, swapped in with its marker
    # A folder output that ships whole (the Hub folder: every file in it is pushed) keeps
    # its marker beside it, in `.<name>.stage/`, as a file output does.
    marker_beside: bool = False
    tags: tuple[str, ...] = ("cpu",)
    # Its dry-run plan line, given each section pipeline/stages.py BUILD plans (as `check`);
    # the report prints `stage  <name>: <line>`. None: the name alone.
    plan: Callable[[C, RunnerSection], str] | None = None
    # --- what an executor (inline or Prefect) asks of the stage; it owns the rest --------
    # The call from the section a graph node gives and the inputs (a fit: its examples read
    # from the problems); None: the node gives the call itself.
    call_of: Callable[[Any, Mapping[str, Any]], C] | None = None
    # Open what a run needs (a judge engine), registered on the ExitStack, and return the
    # stage bound to it and the call as it runs (`quiet`: progress as log lines, no bars).
    resources: Callable[[C, Mapping[str, Any], ExitStack, bool], tuple[Stage[C], C]] | None = None
    # Local models: "local", transformers' classes resolved under a lock first; "pinned",
    # and the CPU kernels pinned before that (the same floats on any x86 machine).
    models: Literal["local", "pinned"] | None = None
    reports: Callable[[C, Path], Path] | None = None  # where its progress goes (StageWatch)
    # What an executor shows of a finished run besides its outputs' fingerprints (counts
    # tables, a model's weights hash, a part of the build's summary).
    shows: Callable[[Finished], Shown] | None = None

    def __post_init__(self) -> None:
        if self.sharding is not None:
            unknown = set(self.sharding.inputs) - set(self.inputs)
            if unknown:
                raise ValueError(
                    f"stage {self.name}: sharded input(s) {sorted(unknown)} are not among its "
                    f"inputs {list(self.inputs)}"
                )


@dataclass
class ShardContext(Generic[C]):
    """What `Stage.run` gets: one shard's (or the whole stage's) config, inputs and places."""

    config: C
    inputs: Mapping[str, Path | list[Path]]  # a gathered input: a list, in shard order
    out: Path  # where this run writes (a temp sibling when the stage is atomic)
    step: Callable[..., Stats]  # runner.run_cached: a sub-step with its own marker
    resources: ExitStack  # what run() opens (a judge engine) closes with it
    shard: tuple[int, int] = (0, 1)
    chunks: ChunkStore | None = None  # when the stage resumes by chunks
    # The primary output's own path (`out` itself unless atomic), for a stage whose bytes
    # name where they land (publish's load lines). None: `out`.
    final_out: Path | None = None
