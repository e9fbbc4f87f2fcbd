"""A policy's N samples per problem, read from a policy evaluation or any file of programs.

Three inputs, one shape (`ProblemSamples`):

- an `evaluate-policy` report folder: its `samples.parquet` (`problem_id`, `sample_index`,
  `code`; Python, the policy evaluation's one language);
- a Parquet file with those columns, and optionally `language` and `mean_logprob`;
- a JSONL file, one sample a line: `problem_id` (or `source_id` / `task_id`, the problem's id in
  its source, e.g. MBPP's task number or `HumanEval/0`), `code` (or `completion`, from which
  the program is extracted as the sampling stage extracts it), and optionally `language`
  (default python), `sample_index` (default: the order of the lines), `mean_logprob` or
  `logprobs` (the completion's token log-probabilities; their mean is kept).

A sample with no program (extraction failed) stays: it is shown to the verifier as an empty
program and never passes. Problems come in source-id order; each keeps its first N samples by
sample index.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import UserError
from schemas.problem import Problem

POLICY_SAMPLES = "samples.parquet"  # what `evaluate-policy` writes (pipeline/policy_eval/run.py)
LANGUAGES = ("python", "cpp", "java")


@dataclass(frozen=True)
class Sample:
    index: int  # the sample's index in its source (sample_index)
    code: str  # "" = no program
    language: str
    mean_logprob: float | None = None


@dataclass(frozen=True)
class ProblemSamples:
    problem: Problem
    samples: tuple[Sample, ...]

    @property
    def language(self) -> str:
        langs = {s.language for s in self.samples}
        return langs.pop() if len(langs) == 1 else "mixed"

    def first(self, n: int) -> tuple[Sample, ...]:
        return self.samples[:n]


def _source_order(p: Problem) -> tuple[int, str, str]:
    sid = p.source_id
    return (int(sid), "", p.problem_id) if sid.isdigit() else (1 << 62, sid, p.problem_id)


def _rows(path: Path) -> tuple[list[dict[str, Any]], str]:
    """The file's rows and how to name a row in an error."""
    if path.is_dir():
        if not (path / POLICY_SAMPLES).is_file():
            raise UserError(
                f"{path}: no {POLICY_SAMPLES} (an `evaluate-policy` report folder has one)"
            )
        path = path / POLICY_SAMPLES
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist(), f"{path} row"
    if path.suffix == ".jsonl":
        rows = []
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path} line {i}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise UserError(f"{path} line {i}: expected a JSON object")
            rows.append(row | {"_line": i})
        return rows, f"{path} line"
    raise UserError(f"{path}: give a policy evaluation folder, a .parquet or a .jsonl file")


def _problem_of(
    row: dict[str, Any], by_id: dict[str, Problem], by_source: dict[str, Problem], where: str
) -> Problem:
    if row.get("problem_id") is not None:
        pid = str(row["problem_id"])
        if pid in by_id:
            return by_id[pid]
        if pid in by_source:  # a source's own id given as problem_id
            return by_source[pid]
        raise UserError(f"{where}: problem_id {pid!r} is not in the problems file")
    for key in ("source_id", "task_id"):
        if row.get(key) is not None:
            sid = str(row[key])
            if sid not in by_source:
                raise UserError(f"{where}: {key} {sid!r} is not in the problems file")
            return by_source[sid]
    raise UserError(f"{where}: no problem_id, source_id or task_id")


def _code(row: dict[str, Any], language: str, where: str) -> str:
    if row.get("code") is not None:
        if not isinstance(row["code"], str):
            raise UserError(f"{where}: field code must be a string")
        return row["code"]
    if row.get("completion") is not None:
        from pipeline.sampling.extraction import extract_code

        return extract_code(str(row["completion"]), language).code
    if "code" in row:  # a policy evaluation's sample whose extraction failed
        return ""
    raise UserError(f"{where}: no code or completion")


def _logprob(row: dict[str, Any], where: str) -> float | None:
    value = row.get("mean_logprob")
    if value is None and isinstance(row.get("logprobs"), list) and row["logprobs"]:
        value = sum(row["logprobs"]) / len(row["logprobs"])
    if value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{where}: field mean_logprob must be a number") from None
    if math.isnan(out):
        raise UserError(f"{where}: field mean_logprob is NaN")
    return out


def load_samples(
    path: str | Path, problems: dict[str, Problem], n: int | None = None, limit: int | None = None
) -> list[ProblemSamples]:
    """Every problem the file has samples of, in source-id order, each with its first `n`
    samples (None: all, the same count for every problem); the first `limit` problems."""
    path = Path(path)
    if not path.exists():
        from pipeline.errors import near_path

        raise UserError(f"samples: no such file or folder {path}{near_path(path)}")
    rows, name = _rows(path)
    by_source: dict[str, Problem] = {}
    for p in problems.values():
        by_source.setdefault(p.source_id, p)
    grouped: dict[str, list[Sample]] = defaultdict(list)
    for i, row in enumerate(rows):
        where = f"{name} {row.pop('_line', i)}"
        problem = _problem_of(row, problems, by_source, where)
        language = str(row.get("language") or "python")
        if language not in LANGUAGES:
            raise UserError(f"{where}: language {language!r} is not one of {', '.join(LANGUAGES)}")
        index = row.get("sample_index")
        sample = Sample(
            index=int(index) if index is not None else len(grouped[problem.problem_id]),
            code=_code(row, language, where),
            language=language,
            mean_logprob=_logprob(row, where),
        )
        grouped[problem.problem_id].append(sample)
    if not grouped:
        raise UserError(f"{path}: no samples")
    out = []
    for pid, samples in grouped.items():
        samples.sort(key=lambda s: s.index)
        seen = [s.index for s in samples]
        if len(set(seen)) != len(seen):
            raise UserError(f"{path}: problem {pid} has a sample_index twice")
        out.append(ProblemSamples(problems[pid], tuple(samples)))
    counts = {len(ps.samples) for ps in out}
    if n is None and len(counts) > 1:
        raise UserError(
            f"{path}: problems have {sorted(counts)} samples; give N (--n) to use the first N"
        )
    want = n if n is not None else counts.pop()
    short = [ps.problem.problem_id for ps in out if len(ps.samples) < want]
    if short:
        raise UserError(
            f"{path}: {len(short)} problem(s) have fewer than N={want} samples, e.g. {short[0]}"
        )
    out.sort(key=lambda ps: _source_order(ps.problem))
    out = [ProblemSamples(ps.problem, ps.first(want)) for ps in out]
    return out[:limit] if limit else out
