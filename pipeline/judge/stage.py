"""Judge candidates in the sandbox: candidates.parquet + problems.parquet -> judged.parquet.

- Distinct (problem, language, normalised code) is judged once; every candidate row
  carrying that program gets the verdict (the same code can come from two generators).
- Candidates whose extraction failed have no program: they are not judged, they are
  counted (stats `not_judged`), and they stay in candidates.parquet with their status.
- SE (the sandbox failed even after its own retries) is written with verdict SE, so
  downstream stages exclude it, and counted in `stats["se"]`; it is never a pass or fail.
- Finished chunks of verdicts are checkpointed beside the output, so a crash mid-run
  re-judges only what had not finished.
- Work goes to the sandbox grouped by problem (test locality: a container receives a problem's
  tests once and judges many of its candidates against them), and each problem's sandbox tests
  are built and hashed once, shared by all its candidates' requests.
- A problem whose checker cannot be used (no testlib.h in the sandbox image, a checker that does
  not compile) is quarantined with that reason (`<out stem>.quarantine.parquet`, stage `judge`,
  written only when there is one); its candidates are not judged by any other comparison.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.common import progress
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.summary import candidate_summary, verdict_summary
from schemas.candidate import CANDIDATE_SCHEMA, Candidate
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.ids import normalize_code
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import table_to_models
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA, VERDICT_FIELDS

log = logging.getLogger(__name__)

JUDGEABLE_EXTRACTION = ("ok", "fallback", "not_applicable")
VERDICT_COLUMNS = [f.name for f in VERDICT_FIELDS]
# The sandbox's per-test memory ceiling; a problem asking for more is judged at this and says so.
SANDBOX_MAX_MEMORY_MB = 1024


class JudgeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_size: int = Field(256, ge=1)  # distinct programs per sandbox batch / checkpoint
    time_limit_scale: float = Field(1.0, gt=0)  # e.g. 2.0 for slow machines; recorded in the rows
    max_tests: int | None = Field(None, ge=1)  # judge on the first N tests only (None: all)
    progress: bool = True


# ---------------------------------------------------------------------- requests
class ProblemMemo:
    """Per-problem values every candidate of a problem shares, computed once: the digest of its
    tests (hashing megabytes per candidate would cost more than judging) and its sandbox tests
    (the same TestCase objects in every request, so the sandbox hashes them once too)."""

    def __init__(self) -> None:
        self._digests: dict[str, str] = {}
        self._tests: dict[str, list[Any]] = {}

    def digest(self, problem: Problem) -> str:
        if problem.problem_id not in self._digests:
            self._digests[problem.problem_id] = problem_digest(problem)
        return self._digests[problem.problem_id]

    def tests(self, problem: Problem, config: JudgeConfig) -> list[Any]:
        if problem.problem_id not in self._tests:
            self._tests[problem.problem_id] = sandbox_tests(problem, config)
        return self._tests[problem.problem_id]


def sandbox_tests(problem: Problem, config: JudgeConfig) -> list[Any]:
    from sandbox import TestCase as SbTest

    tests = problem.tests[: config.max_tests] if config.max_tests else problem.tests
    if problem.test_mode == "function":
        return [SbTest(code=t.code) for t in tests]
    return [SbTest(input=t.input or "", output=t.output or "") for t in tests]


def problem_digest(problem: Problem) -> str:
    """What about a problem decides a verdict: tests, limits, comparison."""
    payload = problem.model_dump(
        mode="json",
        include={
            "tests",
            "test_mode",
            "time_limit_s",
            "memory_limit_mb",
            "compare_mode",
            "float_abs_tol",
            "float_rel_tol",
            "checker",
        },
    )
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


def limits_for(problem: Problem, config: JudgeConfig) -> tuple[float, int]:
    time_limit = min(60.0, problem.time_limit_s * config.time_limit_scale)
    return time_limit, min(problem.memory_limit_mb, SANDBOX_MAX_MEMORY_MB)


def judge_request(
    candidate: Candidate, problem: Problem, config: JudgeConfig, memo: ProblemMemo | None = None
) -> Any:
    """The sandbox request for one candidate (raises ValueError naming the row if impossible)."""
    from sandbox import CompareSpec, JudgeRequest

    sb_tests = memo.tests(problem, config) if memo is not None else sandbox_tests(problem, config)
    time_limit, memory = limits_for(problem, config)
    try:
        return JudgeRequest(
            language=candidate.language,
            source=candidate.code,
            mode=problem.test_mode,
            tests=sb_tests,
            time_limit_s=time_limit,
            memory_limit_mb=memory,
            compare=CompareSpec(
                mode=problem.compare_mode,  # type: ignore[arg-type]
                abs_tol=problem.float_abs_tol,
                rel_tol=problem.float_rel_tol,
                checker=problem.checker,
            ),
        )
    except ValidationError as e:
        first = e.errors()[0]
        raise ValueError(
            f"candidate {candidate.candidate_id} ({candidate.generator}) on problem "
            f"{problem.problem_id}: cannot build a judge request: {first['msg']} "
            f"(field {'.'.join(map(str, first['loc'])) or '-'})"
        ) from e


def verdict_columns(result: Any, problem: Problem, config: JudgeConfig) -> dict[str, Any]:
    time_limit, memory = limits_for(problem, config)
    return {
        "verdict": result.verdict,
        "passed": result.passed,
        "total": result.total,
        "pass_rate": float(result.pass_rate),
        "test_verdicts": [t.verdict for t in result.tests],
        "test_times_s": [float(t.time_s) for t in result.tests],
        "test_memory_kb": [int(t.memory_kb) for t in result.tests],
        "compile_output": result.compile_output
        or (result.error if result.verdict == "SE" else None),
        "sandbox_image": result.image or "",
        "time_limit_s": time_limit,
        "memory_limit_mb": memory,
        "judge_cache_key": result.cache_key or "",
    }


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
def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _judge_programs(
    todo: dict[str, tuple[Candidate, Problem]],
    client: Any,
    config: JudgeConfig,
    *,
    done: dict[str, dict[str, Any]],
    on_chunk: Any = None,
    memo: ProblemMemo | None = None,
    checker_errors: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Judge each distinct program not in `done`; returns key -> verdict columns. Programs go in
    problem order (test locality). A problem's unusable checker goes to `checker_errors`
    (problem_id -> reason) instead of a verdict."""
    memo = memo or ProblemMemo()
    checker_errors = {} if checker_errors is None else checker_errors
    keys = sorted((k for k in todo if k not in done), key=lambda k: (todo[k][1].problem_id, k))
    tracker = progress.track("programs", len(keys))
    for chunk in _chunks(keys, config.chunk_size):
        requests = [judge_request(*todo[k], config, memo) for k in chunk]
        results = _judge_chunk(client, requests, config, tracker)
        if len(results) != len(requests):
            raise RuntimeError(
                f"sandbox returned {len(results)} results for {len(requests)} requests"
            )
        fresh = {}
        for k, r in zip(chunk, results):
            if getattr(r, "checker_error", None):
                checker_errors[todo[k][1].problem_id] = r.checker_error
            else:
                fresh[k] = verdict_columns(r, todo[k][1], config)
        done.update(fresh)
        if on_chunk is not None and fresh:
            on_chunk(fresh)
    return done


def _judge_chunk(
    client: Any, requests: list[Any], config: JudgeConfig, tracker: progress.Tracker
) -> list[Any]:
    """The sandbox's results in request order, ticking the stage's progress per program
    as it finishes (when someone listens and the client yields results one by one)."""
    judge_iter = getattr(client, "judge_iter", None)
    if not progress.active() or judge_iter is None:
        results = client.judge(requests, progress=config.progress)
        tracker.advance(len(results))
        return results
    out: dict[int, Any] = {}
    for index, result in judge_iter(requests, progress=config.progress):
        out[index] = result
        tracker.advance()
    return [out[i] for i in range(len(out))]


def judge_rows(
    candidates: list[Candidate],
    problems: dict[str, Problem],
    client: Any,
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
def _checkpoint_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.parts"


_KEY_SCHEMA = pa.schema([pa.field("program_key", pa.string(), nullable=False), *VERDICT_FIELDS])


def _load_checkpoints(folder: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    for part in sorted(folder.glob("chunk-*.parquet")):
        for row in read_parquet(part, _KEY_SCHEMA).to_pylist():
            done[row.pop("program_key")] = row
    return done


def _save_checkpoint(folder: Path, fresh: dict[str, dict[str, Any]]) -> None:
    rows = [{"program_key": k, **v} for k, v in sorted(fresh.items())]
    name = hashlib.sha256("".join(sorted(fresh)).encode()).hexdigest()[:16]
    write_parquet(
        pa.Table.from_pylist(rows, schema=_KEY_SCHEMA),
        folder / f"chunk-{name}.parquet",
        _KEY_SCHEMA,
    )


# ---------------------------------------------------------------------- the stage
def load_problems(path: Path) -> dict[str, Problem]:
    return {p.problem_id: p for p in table_to_models(read_parquet(path, PROBLEM_SCHEMA), Problem)}


def load_candidates(path: Path) -> list[Candidate]:
    return table_to_models(read_parquet(path, CANDIDATE_SCHEMA), Candidate)


def judge_candidates(
    candidates: Path,
    problems: Path,
    out: Path,
    config: JudgeConfig | None = None,
    client: Any = None,
) -> dict[str, Any]:
    """The judge stage. Writes `out` (JUDGED_CANDIDATE_SCHEMA) and returns its stats."""
    config = config or JudgeConfig()
    out = Path(out)
    cands = load_candidates(Path(candidates))
    probs = load_problems(Path(problems))

    skipped: dict[str, int] = {}
    skipped_by_group: dict[str, dict[str, int]] = {}
    todo: dict[str, tuple[Candidate, Problem]] = {}
    keyed: list[tuple[Candidate, str]] = []
    checked: dict[tuple[str, str], str | None] = {}
    memo = ProblemMemo()
    for c in cands:
        problem = probs.get(c.problem_id)
        reason = skip_reason(c, problem, config, checked)
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
            group = skipped_by_group.setdefault(f"{c.generator} | {c.language}", {})
            group[reason] = group.get(reason, 0) + 1
            if reason == "unknown_problem":
                log.error(
                    "candidate %s: problem %s not in %s", c.candidate_id, c.problem_id, problems
                )
            continue
        assert problem is not None
        key = program_key(c, problem, config, memo)
        todo.setdefault(key, (c, problem))
        keyed.append((c, key))

    folder = _checkpoint_dir(out)
    done = _load_checkpoints(folder) if folder.exists() else {}
    resumed = sum(1 for k in todo if k in done)

    own_client = client is None
    if own_client and any(k not in done for k in todo):
        from sandbox import SandboxClient

        client = SandboxClient()
    checker_errors: dict[str, str] = {}
    try:
        verdicts = _judge_programs(
            todo,
            client,
            config,
            done=done,
            on_chunk=lambda fresh: _save_checkpoint(folder, fresh),
            memo=memo,
            checker_errors=checker_errors,
        )
    finally:
        if own_client and client is not None:
            client.close()

    rows = []
    for c, k in keyed:
        if c.problem_id in checker_errors:
            skipped["checker_unusable"] = skipped.get("checker_unusable", 0) + 1
            group = skipped_by_group.setdefault(f"{c.generator} | {c.language}", {})
            group["checker_unusable"] = group.get("checker_unusable", 0) + 1
        else:
            rows.append({**c.model_dump(mode="python"), **verdicts[k]})
    _write_quarantine(quarantine_path(out), probs, checker_errors)
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
    stats = {
        "candidates": len(cands),
        "judged_rows": len(rows),
        "distinct_programs": len(todo),
        "programs_resumed_from_checkpoint": resumed,
        "not_judged": dict(sorted(skipped.items())),
        "se": se,
        "problems_quarantined": dict(sorted(checker_errors.items())),
        "by_generator_language": _merge_groups(cands, rows, skipped_by_group),
    }
    # Finished: checkpoints are no longer needed (the output holds every verdict).
    if folder.exists():
        for part in folder.glob("chunk-*.parquet"):
            part.unlink()
        folder.rmdir()
    return stats


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
