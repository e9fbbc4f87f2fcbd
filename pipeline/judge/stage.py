"""Judge candidates in the sandbox: candidates.parquet + problems.parquet -> judged.parquet.

- Distinct (problem, language, normalised code) is judged once; every candidate row
  carrying that program gets the verdict (the same code can come from two generators).
- Candidates whose extraction failed have no program: they are not judged, they are
  counted (stats `not_judged`), and they stay in candidates.parquet with their status.
- SE (the sandbox failed even after its own retries) is written with verdict SE, so
  downstream stages exclude it, and counted in `stats["se"]`; it is never a pass or fail.
- Finished chunks of verdicts are checkpointed beside the output (the runner's ChunkStore,
  `.<out name>.parts/`), so a crash mid-run re-judges only what had not finished. A chunk is
  reused only for the same program key (problem tests, language, code, time-limit scale,
  max tests) judged by the same engine (`judge_stamp`): two engines' verdicts never mix.
- Work goes to the sandbox grouped by problem (test locality: a container receives a problem's
  tests once and judges many of its candidates against them), and each problem's sandbox tests
  are built and hashed once, shared by all its candidates' requests.
- A problem whose checker cannot be used (no testlib.h in the sandbox image, a checker that does
  not compile) is quarantined with that reason (`<out stem>.quarantine.parquet`, stage `judge`,
  written only when there is one); its candidates are not judged by any other comparison.

`JUDGE` is the stage as a value (pipeline/common/stage.py), run by the one runner
(pipeline/common/runner.py) on a `JudgeCall(judge, sandbox)` built at wiring time (the
adversarial re-judges pass their section's judge). Its primary output is the judged file, so
its marker lives in `.<stem>.stage/` beside it: one per shard file
(`judge/.judged-0000-of-0002.stage/`). `judge_stage(engine)` binds an opened engine, whose
stamp enters the key: a finished output is reused only for the engine that judged it. `judge_candidates(...)` is the
entry point of `aletheia judge` and the tests, a wrapper over the runner (the flows run
JUDGE through flows/task.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from pipeline.common import progress
from pipeline.common.config import RunnerSection
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.prepared import run_prepared
from pipeline.common.stage import (
    Chunks,
    Finished,
    Keying,
    ShardContext,
    Sharding,
    Shown,
    Stage,
    Stats,
)
from pipeline.judge.checks import check_judge
from pipeline.judge.config import JudgeConfig, SandboxSection
from pipeline.judge.interface import (
    JudgeSpec,
    JudgeSpecError,
    judge_spec,
    memory_limit_for,
    open_judge,
    verdict_columns,
)
from pipeline.judge.summary import candidate_summary, verdict_summary
from sandbox.engines import JudgeEngine
from sandbox.models import JudgeRequest
from schemas.candidate import CANDIDATE_SCHEMA, Candidate
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.ids import normalize_code
from schemas.problem import JUDGE_FIELDS, PROBLEM_SCHEMA, Problem
from schemas.tables import table_to_models
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA, VERDICT_FIELDS

log = logging.getLogger(__name__)

JUDGEABLE_EXTRACTION = ("ok", "fallback", "not_applicable")
VERDICT_COLUMNS = [f.name for f in VERDICT_FIELDS]


# ---------------------------------------------------------------------- requests
class ProblemMemo:
    """Per-problem values every candidate of a problem shares, computed once: the digest of its
    tests (hashing megabytes per candidate would cost more than judging) and its judge spec
    (the same sandbox test objects in every request, so the sandbox hashes them once too)."""

    def __init__(self) -> None:
        self._digests: dict[str, str] = {}
        self._specs: dict[str, JudgeSpec] = {}

    def digest(self, problem: Problem) -> str:
        if problem.problem_id not in self._digests:
            self._digests[problem.problem_id] = problem_digest(problem)
        return self._digests[problem.problem_id]

    def spec(self, problem: Problem, config: JudgeConfig) -> JudgeSpec:
        if problem.problem_id not in self._specs:
            self._specs[problem.problem_id] = spec_for(problem, config)
        return self._specs[problem.problem_id]


def spec_for(problem: Problem, config: JudgeConfig) -> JudgeSpec:
    return judge_spec(problem, time_limit_scale=config.time_limit_scale, max_tests=config.max_tests)


def problem_digest(problem: Problem) -> str:
    """What about a problem decides a verdict: tests, limits, comparison."""
    payload = problem.model_dump(mode="json", include=set(JUDGE_FIELDS))
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def program_key(
    candidate: Candidate, problem: Problem, config: JudgeConfig, memo: ProblemMemo | None = None
) -> str:
    """Distinct (problem + its tests, language, normalised code, judge settings)."""
    h = hashlib.sha256()
    digest = memo.digest(problem) if memo is not None else problem_digest(problem)
    for part in (
        candidate.problem_id,
        digest,
        candidate.language,
        normalize_code(candidate.code),
        str(config.time_limit_scale),
        str(config.max_tests),
    ):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def judge_request(
    candidate: Candidate, problem: Problem, config: JudgeConfig, memo: ProblemMemo | None = None
) -> JudgeRequest:
    """The sandbox request for one candidate (ValueError naming the row if impossible)."""
    try:
        spec = memo.spec(problem, config) if memo is not None else spec_for(problem, config)
        return spec.request(candidate.language, candidate.code)
    except JudgeSpecError as e:
        raise ValueError(f"candidate {candidate.candidate_id} ({candidate.generator}): {e}") from e


def skip_reason(
    candidate: Candidate,
    problem: Problem | None,
    config: JudgeConfig | None = None,
    _checked: dict[tuple[str, str], str | None] | None = None,
) -> str | None:
    """Why a candidate is not judged (None: it is judged)."""
    if problem is None:
        return "unknown_problem"
    if candidate.extraction not in JUDGEABLE_EXTRACTION:
        return f"extraction_{candidate.extraction}"
    if not candidate.code.strip():
        return "empty_code"
    if problem.test_mode == "function" and candidate.language != "python":
        return "function_mode_not_python"  # the sandbox's function mode is Python only
    if not problem.tests:
        return "problem_has_no_tests"
    # Problem-level request errors (e.g. checker mode without a checker): checked once per pair.
    if _checked is not None:
        pair = (problem.problem_id, candidate.language)
        if pair not in _checked:
            try:
                judge_request(candidate, problem, config or JudgeConfig())
                _checked[pair] = None
            except ValueError as e:
                log.error("%s", e)
                _checked[pair] = "invalid_request"
        return _checked[pair]
    return None


# ---------------------------------------------------------------------- judging
class _LazyRequests(Sequence[JudgeRequest]):
    """The requests for `keys`, built as the sandbox takes them (a request holds its problem's
    tests: building them all first would hold every test set at once); sized, for the bar."""

    def __init__(self, keys: list[str], build: Callable[[str], JudgeRequest]) -> None:
        self._keys, self._build = keys, build

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, index: int) -> JudgeRequest:  # type: ignore[override]
        return self._build(self._keys[index])

    def __iter__(self) -> Iterator[JudgeRequest]:
        return (self._build(k) for k in self._keys)


def _judge_programs(
    todo: dict[str, tuple[Candidate, Problem]],
    client: JudgeEngine,
    config: JudgeConfig,
    *,
    done: dict[str, dict[str, Any]],
    on_chunk: Callable[[dict[str, dict[str, Any]]], None] | None = None,
    memo: ProblemMemo | None = None,
    checker_errors: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Judge each distinct program not in `done`; returns key -> verdict columns. Programs go in
    problem order (test locality). A problem's unusable checker goes to `checker_errors`
    (problem_id -> reason) instead of a verdict.

    One stream through the sandbox: its slots stay busy to the end, where batches of
    `chunk_size` used to wait for their slowest program (a TLE runs its every test to the
    limit) with the other slots idle. Every `chunk_size` finished programs go to `on_chunk`
    (the checkpoint), in the order they finished; the verdicts do not depend on it."""
    memo = memo or ProblemMemo()
    checker_errors = {} if checker_errors is None else checker_errors
    keys = sorted((k for k in todo if k not in done), key=lambda k: (todo[k][1].problem_id, k))
    tracker = progress.track("programs", len(keys))
    if not keys:  # every program resumed from the chunks (a run killed before its marker),
        return done  # or none to judge: `_run` opened no engine, nothing to stream
    requests = _LazyRequests(keys, lambda k: judge_request(*todo[k], config, memo))
    fresh: dict[str, dict[str, Any]] = {}

    def checkpoint() -> None:
        done.update(fresh)
        if on_chunk is not None and fresh:
            on_chunk(dict(fresh))
        fresh.clear()

    received = 0
    for index, r in client.judge_iter(requests, progress=config.progress):
        received += 1
        tracker.advance()
        k = keys[index]
        problem = todo[k][1]
        if r.checker_error:
            checker_errors[problem.problem_id] = r.checker_error
        else:
            fresh[k] = verdict_columns(r, memo.spec(problem, config), client.stamp)
        if len(fresh) >= config.chunk_size:
            checkpoint()
    checkpoint()
    if received != len(keys):
        raise RuntimeError(f"sandbox returned {received} results for {len(keys)} requests")
    return done


def judge_rows(
    candidates: list[Candidate],
    problems: dict[str, Problem],
    client: JudgeEngine,
    config: JudgeConfig | None = None,
) -> list[dict[str, Any]]:
    """Judge in memory: one row (candidate fields + verdict columns) per judgeable candidate,
    in input order. Candidates that cannot be judged (see `skip_reason`) are left out; an
    unknown problem id is an error."""
    config = config or JudgeConfig(progress=False)
    memo = ProblemMemo()
    todo: dict[str, tuple[Candidate, Problem]] = {}
    keyed: list[tuple[Candidate, str]] = []
    for c in candidates:
        problem = problems.get(c.problem_id)
        if problem is None:
            raise ValueError(f"candidate {c.candidate_id}: unknown problem_id {c.problem_id!r}")
        if skip_reason(c, problem) is not None:
            continue
        key = program_key(c, problem, config, memo)
        todo.setdefault(key, (c, problem))
        keyed.append((c, key))
    verdicts = _judge_programs(todo, client, config, done={}, memo=memo)
    return [{**c.model_dump(mode="python"), **verdicts[k]} for c, k in keyed if k in verdicts]


# ---------------------------------------------------------------------- checkpoints
# The chunk rows: a program key and its verdict columns. The schema (and the folder,
# `runner.chunk_dir`: `.<out name>.parts/`) are today's checkpoints', so a judge run killed
# before the stage moved onto the runner resumes from its chunks.
_KEY_SCHEMA = pa.schema([pa.field("program_key", pa.string(), nullable=False), *VERDICT_FIELDS])


Checkpoints = dict[str, dict[str, dict[str, Any]]]  # program key -> judge stamp -> verdict columns


def _by_stamp(rows: Iterable[Mapping[str, Any]]) -> Checkpoints:
    """Checkpointed verdicts by program and by the engine that judged it. (A chunk written
    before verdicts carried their engine's stamp has another schema: ChunkStore.load skips
    it with a warning, and its programs are judged again.)"""
    done: Checkpoints = {}
    for row in rows:
        columns = dict(row)
        done.setdefault(columns.pop("program_key"), {})[columns["judge_stamp"]] = columns
    return done


def _resumable(
    checkpoints: Checkpoints, keys: Iterable[str], stamp: str | None
) -> dict[str, dict[str, Any]]:
    """The checkpointed verdicts a run may reuse: those of the engine at hand (`stamp`), or,
    with no engine opened, of the one engine every checkpoint came from. Verdicts of another
    engine are never mixed into a table. Other limits or tests give another program key, so
    their verdicts are never looked up at all."""
    if stamp is None:
        stamps = {st for k in keys for st in checkpoints.get(k, {})}
        if len(stamps) != 1:
            return {}
        [stamp] = stamps
    return {k: checkpoints[k][stamp] for k in keys if stamp in checkpoints.get(k, {})}


def _chunk_rows(fresh: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"program_key": k, **v} for k, v in sorted(fresh.items())]


# ---------------------------------------------------------------------- the stage
def load_problems(path: Path) -> dict[str, Problem]:
    return {p.problem_id: p for p in table_to_models(read_parquet(path, PROBLEM_SCHEMA), Problem)}


def load_candidates(path: Path) -> list[Candidate]:
    return table_to_models(read_parquet(path, CANDIDATE_SCHEMA), Candidate)


class JudgeCall(BaseModel):
    """What JUDGE runs on, built at wiring time and never part of RunConfig: the judge
    settings and the sandbox section naming the engine. The main judge passes the run
    config's `judge`; the adversarial re-judges their own section's
    (`JudgeCall(judge=cfg.adv.judge, sandbox=cfg.sandbox)`)."""

    model_config = ConfigDict(extra="forbid")

    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)

    @property
    def progress(self) -> bool:
        """Whether its progress is shown (an executor's terminal lines): the judge's."""
        return self.judge.progress


JUDGE_VERSION = "1"

# Out of the key: what changes no row. `progress` is display; `chunk_size` only batches the
# programs (a chunk's verdicts are keyed by program, whatever chunk judged them); the
# sandbox's `pool_size` is how many run at once.
JUDGE_KEY_EXCLUDE = {"judge": {"progress", "chunk_size"}, "sandbox": {"pool_size"}}


def _outputs(call: JudgeCall, out: Path) -> dict[str, Path]:
    out = Path(out)
    if not out.suffix:  # the runner reads a name without a suffix as a folder output
        raise ValueError(
            f"judge writes one Parquet file: {out} needs a file name such as judged.parquet"
        )
    return {"judged": out, "quarantine": quarantine_path(out)}


def _shard_part(i: int, n: int) -> str:
    return f"judged-{i:04d}-of-{n:04d}.parquet"


@dataclasses.dataclass
class _Plan:
    """The candidates of one run, sorted into what is judged (by distinct program) and what
    is not (with the reason, overall and per generator | language)."""

    cands: list[Candidate]
    probs: dict[str, Problem]
    todo: dict[str, tuple[Candidate, Problem]]
    keyed: list[tuple[Candidate, str]]
    skipped: dict[str, int]
    skipped_by_group: dict[str, dict[str, int]]
    memo: ProblemMemo


def _plan(candidates: Path, problems: Path, config: JudgeConfig) -> _Plan:
    cands = load_candidates(Path(candidates))
    probs = load_problems(Path(problems))
    plan = _Plan(cands, probs, {}, [], {}, {}, ProblemMemo())
    checked: dict[tuple[str, str], str | None] = {}
    for c in cands:
        problem = probs.get(c.problem_id)
        reason = skip_reason(c, problem, config, checked)
        if reason is not None:
            plan.skipped[reason] = plan.skipped.get(reason, 0) + 1
            group = plan.skipped_by_group.setdefault(f"{c.generator} | {c.language}", {})
            group[reason] = group.get(reason, 0) + 1
            if reason == "unknown_problem":
                log.error(
                    "candidate %s: problem %s not in %s", c.candidate_id, c.problem_id, problems
                )
            continue
        assert problem is not None
        key = program_key(c, problem, config, plan.memo)
        plan.todo.setdefault(key, (c, problem))
        plan.keyed.append((c, key))
    return plan


def _run(ctx: ShardContext[JudgeCall], engine: JudgeEngine | None = None) -> Stats:
    """Judge one candidates file (a shard, or all of them) into `ctx.out`.

    `engine`: the opened engine bound by `judge_stage`; None opens the one the call's
    sandbox section names, only when something is left to judge after the chunks, and
    closes it with the run (`ctx.resources`)."""
    config = ctx.config.judge
    out = Path(ctx.out)
    candidates, problems = ctx.inputs["candidates"], ctx.inputs["problems"]
    assert isinstance(candidates, Path) and isinstance(problems, Path)
    plan = _plan(candidates, problems, config)
    todo, skipped, skipped_by_group = plan.todo, plan.skipped, plan.skipped_by_group

    chunks = ctx.chunks
    checkpoints = _by_stamp(chunks.load()) if chunks is not None else {}
    done = _resumable(checkpoints, todo, None if engine is None else engine.stamp)
    if engine is None and any(k not in done for k in todo):
        engine = open_judge(ctx.config.sandbox)
        ctx.resources.callback(engine.close)
        done = _resumable(checkpoints, todo, engine.stamp)
    resumed = len(done)
    checker_errors: dict[str, str] = {}
    verdicts = _judge_programs(
        todo,
        engine,  # type: ignore[arg-type]  # None only when nothing is left to judge
        config,
        done=done,
        on_chunk=(lambda fresh: chunks.save(_chunk_rows(fresh))) if chunks is not None else None,
        memo=plan.memo,
        checker_errors=checker_errors,
    )

    rows = []
    for c, k in plan.keyed:
        if c.problem_id in checker_errors:
            skipped["checker_unusable"] = skipped.get("checker_unusable", 0) + 1
            group = skipped_by_group.setdefault(f"{c.generator} | {c.language}", {})
            group["checker_unusable"] = group.get("checker_unusable", 0) + 1
        else:
            rows.append({**c.model_dump(mode="python"), **verdicts[k]})
    _write_quarantine(quarantine_path(out), plan.probs, checker_errors)
    table = (
        pa.Table.from_pylist(rows, schema=JUDGED_CANDIDATE_SCHEMA)
        if rows
        else (JUDGED_CANDIDATE_SCHEMA.empty_table())
    )
    write_parquet(table, out, JUDGED_CANDIDATE_SCHEMA)
    se = sum(1 for r in rows if r["verdict"] == "SE")
    if se:
        log.warning(
            "%d judged row(s) are SE (sandbox failure): written with verdict SE, excluded "
            "downstream",
            se,
        )
    # The runner clears the chunks once its marker is written (the output holds them all).
    return {
        "candidates": len(plan.cands),
        "judged_rows": len(rows),
        "distinct_programs": len(todo),
        "programs_resumed_from_checkpoint": resumed,
        "not_judged": dict(sorted(skipped.items())),
        "se": se,
        "problems_quarantined": dict(sorted(checker_errors.items())),
        # Judged at the sandbox's memory range instead of their own limit (see judge_spec).
        "problems_memory_capped": sorted(
            {
                p.problem_id
                for _, p in todo.values()
                if memory_limit_for(p.memory_limit_mb) != p.memory_limit_mb
            }
        ),
        "by_generator_language": _merge_groups(plan.cands, rows, skipped_by_group),
    }


def _plan_line(call: JudgeCall, runner: RunnerSection) -> str:
    return (
        f"{runner.judge_shards} shard(s) on {runner.kind}, at most "
        f"{runner.max_parallel_shards} at once, engine {call.sandbox.engine}"
    )


JUDGE: Stage[JudgeCall] = Stage(
    name="judge",
    version=JUDGE_VERSION,
    config=JudgeCall,
    check=check_judge,
    inputs=("candidates", "problems"),
    outputs=_outputs,
    run=_run,
    plan=_plan_line,
    optional_outputs=frozenset({"quarantine"}),
    key=Keying(JUDGE_KEY_EXCLUDE),
    chunks=Chunks(schema=_KEY_SCHEMA, key="program_key"),
    # As flows/build.py's judge-shards subflow lays them out today.
    sharding=Sharding(
        inputs=("candidates",),
        schema=CANDIDATE_SCHEMA,
        count=lambda runner: runner.judge_shards,
        placement="judge",
        merge={"judged": JUDGED_CANDIDATE_SCHEMA},
        quarantines=("quarantine",),
        stem="candidates",
        folder=lambda out: Path(out).parent / "judge",
        part=_shard_part,
    ),
    tags=("cpu", "sandbox"),
    resources=lambda call, inputs, opened, quiet: _with_engine(call, inputs, opened, quiet),
    reports=lambda call, out: progress.progress_file(out),
    shows=lambda done: _shown(done),
)
"""JUDGE opening its own engine from the call's sandbox section, when something is left to
judge. Its key holds the section, not the engine's stamp (unknown before the engine opens):
a wiring that must re-judge when the sandbox image changes under an unchanged section binds
the engine with `judge_stage(engine)`, as `judge_candidates` does."""


def _shown(done: Finished) -> Shown:
    from pipeline.judge.shown import judge_shown  # polars: only when a build shows it

    return judge_shown(done)


def _stamp_of(engine: JudgeEngine, call: JudgeCall, inputs: Mapping[str, Any], out: Path) -> str:
    return f"judge_stamp:{engine.stamp}"


def judge_stage(engine: JudgeEngine | None) -> Stage[JudgeCall]:
    """JUDGE judging with `engine` (opened and closed by the caller: it opens nothing of
    its own). Its stamp enters the key, so a finished output is reused only for the engine
    that judged it; the chunks are filtered by the same stamp. None: JUDGE itself."""
    if engine is None:
        return JUDGE
    return dataclasses.replace(
        JUDGE,
        run=partial(_run, engine=engine),
        key=Keying(JUDGE_KEY_EXCLUDE, partial(_stamp_of, engine)),
        resources=None,
    )


def _needs_engine(candidates: Path, problems: Path, config: JudgeConfig) -> bool:
    """Whether any candidate is judged at all (an empty or unjudgeable table needs none)."""
    import pyarrow.parquet as pq

    if pq.ParquetFile(candidates).metadata.num_rows == 0:
        return False
    return bool(_plan(candidates, problems, config).todo)


def _with_engine(
    call: JudgeCall, inputs: Mapping[str, Any], opened: ExitStack, quiet: bool
) -> tuple[Stage[JudgeCall], JudgeCall]:
    """JUDGE.resources, the one way every caller opens an engine: the one the call's sandbox
    section names, only when some candidate is judged (an empty or unjudgeable table needs
    none), closed with `opened`, and bound so its stamp keys the output."""
    if quiet:
        call = call.model_copy(update={"judge": call.judge.model_copy(update={"progress": False})})
    candidates, problems = Path(inputs["candidates"]), Path(inputs["problems"])
    if not _needs_engine(candidates, problems, call.judge):
        return JUDGE, call
    engine = open_judge(call.sandbox)
    opened.callback(engine.close)
    return judge_stage(engine), call


def judge_candidates(
    candidates: Path,
    problems: Path,
    out: Path,
    config: JudgeConfig | None = None,
    client: JudgeEngine | None = None,
    sandbox: SandboxSection | None = None,
) -> dict[str, Any]:
    """The judge stage through the one way into a stage (`pipeline.common.prepared`). Writes
    `out` (JUDGED_CANDIDATE_SCHEMA) and returns its stats (the marker's, when a finished
    output for this engine is reused).

    `client`: the judge engine to use (the caller's, open); None opens the one `sandbox`
    names (docker by default), only when some candidate is judged, and closes it at the end."""
    call = JudgeCall(judge=config or JudgeConfig(), sandbox=sandbox or SandboxSection())
    inputs = {"candidates": Path(candidates), "problems": Path(problems)}
    stage = judge_stage(client) if client is not None else JUDGE
    return run_prepared(stage, call, inputs, Path(out)).stats


def quarantine_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}.quarantine.parquet")


def _write_quarantine(path: Path, problems: dict[str, Problem], reasons: dict[str, str]) -> None:
    """Problems the judge could not use, with the reason; written only when there are some (a
    stale file from an earlier run is removed)."""
    if not reasons:
        path.unlink(missing_ok=True)
        return
    rows = [
        Quarantine(
            stage="judge",
            source=problems[pid].source,
            source_row_id=problems[pid].source_id,
            field="checker",
            reason=reason,
            raw=json.dumps({"problem_id": pid}),
        ).model_dump()
        for pid, reason in sorted(reasons.items())
    ]
    log.warning("%d problem(s) quarantined by the judge: unusable checker", len(rows))
    write_parquet(pa.Table.from_pylist(rows, schema=QUARANTINE_SCHEMA), path, QUARANTINE_SCHEMA)


def _merge_groups(
    cands: Iterable[Candidate], rows: list[dict[str, Any]], skipped: dict[str, dict[str, int]]
) -> dict[str, dict[str, Any]]:
    base = candidate_summary(c.model_dump() for c in cands)
    judged = verdict_summary(rows)
    return {
        k: {
            **base[k],
            **judged.get(k, {"judged": 0, "verdicts": {}, "pass_rates": {}}),
            "not_judged": skipped.get(k, {}),
        }
        for k in base
    }
