"""Benchmark decontamination: which problems share a word n-gram (default 8) with a benchmark.

Benchmark files (`--benchmark FILE`, repeatable):
- our problems Parquet / JSONL (the `statement` column is used), or
- any Parquet / JSONL whose rows carry the statement in one of the columns
  `statement`, `prompt`, `question_content`, `question`, `text` (first present,
  in that order), e.g. HumanEval's jsonl (`prompt`), LiveCodeBench's
  (`question_content`), MBPP's (`text`), APPS/TACO (`question`).
Words are the lower-cased letter/digit runs of the text, variable names kept as they
are (verbatim overlap); n-grams run over the whole word stream (they may cross
sentence ends: stricter). Note: a pure n-gram rule also matches contest boilerplate
("the first line contains a single integer n" is one 8-gram): every drop is listed
with its shared n-gram in report.json so such cases can be reviewed.
A benchmark statement shorter than n words has no n-gram and contaminates nothing.

A benchmark can also be named as a source spec, `mbpp[:LOCATION][#SPLIT]` (default split
`test`, e.g. `mbpp:/data/mbpp.jsonl` or `mbpp` for the Hub dataset): its task texts are
written to a JSONL beside the split outputs (`resolve_benchmark`) and used as a file.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pipeline.splits.text import TokenHasher, window_hashes, words

STATEMENT_COLUMNS = ("statement", "prompt", "question_content", "question", "text")


class BenchmarkError(ValueError):
    """A benchmark file cannot be read; names the file and, where known, the row."""


@dataclass
class BenchmarkIndex:
    n: int
    hashes: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))  # sorted
    origin: dict[int, str] = field(default_factory=dict)  # n-gram hash -> "file:row"
    files: list[dict] = field(default_factory=list)  # per file: path, statements, ngrams


def _statement_of(row: dict, path: Path, i: int) -> str:
    for c in STATEMENT_COLUMNS:
        v = row.get(c)
        if isinstance(v, str) and v.strip():
            return v
    raise BenchmarkError(
        f"{path}: row {i} has none of the columns {list(STATEMENT_COLUMNS)} with text"
    )


def read_benchmark_statements(path: Path) -> list[str]:
    path = Path(path)
    if not path.exists():
        raise BenchmarkError(f"no benchmark file at {path}")
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        cols = [c for c in STATEMENT_COLUMNS if c in table.column_names]
        if not cols:
            raise BenchmarkError(f"{path}: none of the columns {list(STATEMENT_COLUMNS)}")
        rows = table.select(cols).to_pylist()
    elif path.name.endswith((".jsonl", ".json", ".jsonl.gz")):
        opener = gzip.open if path.suffix == ".gz" else open
        rows = []
        with opener(path, "rt", encoding="utf-8") as f:
            for i, line in enumerate(f):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise BenchmarkError(f"{path}: line {i + 1} is not JSON ({e.msg})") from e
    else:
        raise BenchmarkError(f"{path}: benchmark files are .parquet, .jsonl or .jsonl.gz")
    return [_statement_of(r, path, i) for i, r in enumerate(rows)]


def resolve_benchmark(entry: str, work_dir: Path) -> Path:
    """A benchmark file as given, or an `mbpp[...]` spec materialised as a JSONL of its task texts."""
    if not entry.startswith("mbpp") or Path(entry).exists():
        return Path(entry)
    from pipeline.problems.adapters.mbpp import load_mbpp_rows
    from pipeline.problems.sources import parse_spec

    spec = parse_spec(entry)
    split = spec.split or "test"
    rows = load_mbpp_rows(spec.location, split)
    lines = []
    for i, r in enumerate(rows):
        text = r.get("text") or r.get("prompt")
        if not isinstance(text, str) or not text.strip():
            raise BenchmarkError(f"{entry}: row {i} (task_id {r.get('task_id')}) has no task text")
        lines.append(json.dumps({"task_id": r.get("task_id"), "text": text}))
    slug = "".join(c if c.isalnum() else "-" for c in f"{spec.location or 'hub'}-{split}")[-80:]
    path = Path(work_dir) / f"benchmark-mbpp-{slug}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_index(paths: list[Path], n: int, hasher: TokenHasher) -> BenchmarkIndex:
    index = BenchmarkIndex(n=n)
    chunks = []
    for path in paths:
        statements = read_benchmark_statements(path)
        before = len(index.origin)
        for i, s in enumerate(statements):
            w = words(s, mask_variables=False)
            h = window_hashes(hasher.ids(w.tokens), n)
            chunks.append(h)
            for v in h.tolist():
                index.origin.setdefault(v, f"{Path(path).name}:{i}")
        index.files.append(
            {
                "path": str(path),
                "statements": len(statements),
                "new_ngrams": len(index.origin) - before,
            }
        )
    if chunks:
        index.hashes = np.unique(np.concatenate(chunks))
    return index


@dataclass
class Contamination:
    shared: int  # distinct shared n-grams
    example: str  # one shared n-gram, as words
    origin: str  # "benchmark_file:row" of that n-gram


def find_contamination(
    text: str, index: BenchmarkIndex, hasher: TokenHasher
) -> Contamination | None:
    if not len(index.hashes):
        return None
    w = words(text, mask_variables=False)
    h = window_hashes(hasher.ids(w.tokens), index.n)
    hit = np.isin(h, index.hashes)
    if not hit.any():
        return None
    first = int(np.flatnonzero(hit)[0])
    return Contamination(
        shared=len(np.unique(h[hit])),
        example=" ".join(w.tokens[first : first + index.n]),
        origin=index.origin[int(h[first])],
    )
