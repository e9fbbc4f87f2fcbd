"""INGEST's preflight check: each source spec parses, its local files exist and a sample of
rows converts. What the sample shows (rows, problems, tests, solutions) is the plan's
estimate: a `SourcePlan` per source, left in `ctx.facts["sources"]` when preflight asks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.common.stage import CheckContext, Finding
from pipeline.errors import clip

if TYPE_CHECKING:
    from pipeline.problems.stage import IngestCall

SAMPLE_ROWS = 200  # rows per source converted to check parsing and estimate tests


@dataclass
class SourcePlan:
    spec: str
    rows: int | None = None  # None: not counted here (`unread` says why)
    unread: str = "Hub dataset, read at ingest"  # why `rows` is None, for the plan line
    converted: int = 0  # rows converted here as a sample
    problems: int = 0  # of the converted rows, how many became problems
    tests: int = 0
    solutions: dict[str, int] = field(default_factory=dict)  # language -> all solutions
    correct: dict[str, int] = field(default_factory=dict)  # language -> correct solutions

    def scaled(self, n: int) -> float:
        """`n` observed in the sample, scaled to the rows this source will ingest."""
        if not self.converted or self.rows is None:
            return float("nan")
        return n * self.rows / self.converted


def _finding(message: str, fatal: bool = True) -> Finding:
    return Finding("sources", message, fatal)


def check_sources(call: IngestCall, ctx: CheckContext) -> list[Finding]:
    """Every source of the ingest call; appends a SourcePlan per parsed spec to
    `ctx.facts["sources"]` (a list) when it is there."""
    from pipeline.problems.adapters.base import AdapterContext
    from pipeline.problems.sources import ADAPTERS, load_source, parse_spec
    from pipeline.problems.validate import RejectedSolution, build_problem

    plans: list[SourcePlan] = ctx.facts.get("sources", [])
    out: list[Finding] = []
    for text in call.sources:
        try:
            spec = parse_spec(text)
        except ValueError as e:
            out.append(_finding(str(e)))
            continue
        plan = SourcePlan(spec.text)
        plans.append(plan)
        local = spec.kind in {"bundled", "humaneval"} or (
            spec.location is not None
            and (
                spec.location.startswith(("/", ".", "~"))
                or any(c in spec.location for c in "*?[")
                or Path(spec.location).exists()
            )
        )
        if not local:
            out.append(_finding(f"{spec.text}: a Hub dataset; not checked offline", fatal=False))
            continue
        plan.unread = "local, not read (see the problem below)"
        if spec.kind != "humaneval" and not spec.local_paths():
            out.append(_finding(f"{spec.text}: no file or folder at {spec.location}; fix the path"))
            plan.unread = f"nothing at {spec.location}"
            continue
        adapter = ADAPTERS[spec.kind]()
        split = spec.split or adapter.default_split or call.ingest.split
        try:
            loaded = load_source(spec, adapter, split, call.ingest.datasets_cache_dir)
        except Exception as e:  # noqa: BLE001 - any load failure is this source's problem
            out.append(_finding(f"{spec.text}: cannot be read: {clip(str(e))}"))
            continue
        missing = [
            c
            for c in adapter.required_columns
            if c not in (loaded.columns or adapter.required_columns)
        ]
        if missing:
            out.append(_finding(f"{spec.text}: missing column(s) {missing}; has {loaded.columns}"))
            continue
        plan.rows = len(loaded)
        if call.ingest.limit_per_source is not None:
            plan.rows = min(plan.rows, call.ingest.limit_per_source)
        if loaded.malformed:  # named as ingest will quarantine them, line by line
            m, more = loaded.malformed[0], len(loaded.malformed) - 1
            others = f" (+{more} more such line{'s' if more > 1 else ''})" if more else ""
            out.append(
                _finding(
                    f"{spec.text}: line {m.line} of {m.file} is {m.reason.removeprefix('a ')}"
                    f"{others}; quarantined at ingest",
                    fatal=not len(loaded),  # no line at all parses: nothing to ingest
                )
            )
        actx = AdapterContext(source=adapter.name, config=call.ingest, split=split)
        first_error = first_solution = None
        rejected: list[RejectedSolution] = []
        for index, row in enumerate(loaded):
            if index >= min(SAMPLE_ROWS, plan.rows):
                break
            plan.converted += 1
            row_id = f"{split}/{index}"
            try:
                row_id = adapter.row_id(row, index, actx)
                problem = build_problem(
                    adapter.name, row_id, adapter.convert(row, row_id, actx), call.ingest, rejected
                )
            except Exception as e:  # noqa: BLE001 - such rows are quarantined at ingest
                first_error = first_error or f"row {row_id!r}: {clip(str(e), 200)}"
                continue
            if rejected and first_solution is None:
                r = rejected[0]
                first_solution = f"row {row_id!r}, {r.field}: {clip(r.reason, 200)}"
            plan.problems += 1
            plan.tests += len(problem.tests)
            for s in problem.solutions:
                plan.solutions[s.language] = plan.solutions.get(s.language, 0) + 1
                if s.correct:
                    plan.correct[s.language] = plan.correct.get(s.language, 0) + 1
        if plan.converted and not plan.problems:
            out.append(
                _finding(
                    f"{spec.text}: none of the first {plan.converted} rows parse ({first_error})"
                )
            )
        elif first_error:
            out.append(
                _finding(
                    f"{spec.text}: some rows will be quarantined, e.g. {first_error}", fatal=False
                )
            )
        if first_solution:
            out.append(
                _finding(
                    f"{spec.text}: {len(rejected)} solution(s) will be quarantined alone, e.g. "
                    f"{first_solution}",
                    fatal=False,
                )
            )
    return out
