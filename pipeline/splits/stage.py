"""The split stage: problems.parquet -> train / heldout / train_questions / quarantine / report.

    call = SplitCall(splits=SplitConfig(heldout_fraction=0.2))
    run_stage(SPLITS, call, split_inputs(Path("problems.parquet"), call.splits, Path("splits/"),
              ingest_quarantine=Path("problems.quarantine.parquet")), Path("splits/"))

Writes into the output folder: train.parquet and heldout.parquet (PROBLEM_SCHEMA),
train_questions.parquet (TRAIN_QUESTIONS_SCHEMA), assignments.parquet
(SPLIT_ASSIGNMENT_SCHEMA: every input problem once, with cluster and split),
quarantine.parquet (the ingest quarantine, a declared input, plus this stage's own),
and report.json. Same inputs, config and seed -> byte-identical files.

`SPLITS` is the stage as a value, run by the one runner (pipeline/common/runner.py; the
marker `_stage.json` inside the folder). `split_problems(...)` is the entry point of
`aletheia problems split` and the tests, a wrapper over the runner (the flows run SPLITS
through flows/task.py).

Steps: near-duplicate clusters (dedup.py) -> split per cluster (assign.py, with the
optional date cut) -> benchmark decontamination of Train (decontam.py) -> outputs.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipeline.common.config import RunnerSection
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import ShardContext, Stage, Stats
from pipeline.splits.assign import assign_cluster, cluster_id_for
from pipeline.splits.checks import check_benchmarks
from pipeline.splits.config import SplitConfig
from pipeline.splits.decontam import (
    BenchmarkIndex,
    build_index,
    find_contamination,
    resolve_benchmark,
)
from pipeline.splits.dedup import DedupResult, cluster_texts, clusters_from
from pipeline.splits.text import TokenHasher, normalized_text, words
from schemas.common import QUARANTINE_SCHEMA
from schemas.problem import (
    PROBLEM_SCHEMA,
    SPLIT_ASSIGNMENT_SCHEMA,
    TRAIN_QUESTIONS_SCHEMA,
    train_question_row,
)

OUTPUTS = (
    "train.parquet",
    "heldout.parquet",
    "train_questions.parquet",
    "assignments.parquet",
    "quarantine.parquet",
    "report.json",
)


class SplitCall(BaseModel):
    """What SPLITS runs on, built at wiring time and never part of RunConfig: the `splits`
    section, and whether to draw progress bars (no effect on rows: out of the key)."""

    model_config = ConfigDict(extra="forbid")

    splits: SplitConfig
    progress: bool = True


def _outputs(call: SplitCall, out: Path) -> dict[str, Path]:
    return {name.split(".")[0]: Path(out) / name for name in OUTPUTS}


def ingest_quarantine_path(problems: Path) -> Path:
    """Where the ingest stage puts the quarantine of `problems` (it may not exist): the
    `<stem>.quarantine.parquet` beside it. Only `split_problems` needs it, to keep its old
    signature; tests/splits checks it against INGEST's own outputs. A caller of `SPLITS`
    passes the ingest result's quarantine as the declared input instead."""
    problems = Path(problems)
    return problems.with_name(f"{problems.name.removesuffix('.parquet')}.quarantine.parquet")


def split_inputs(
    problems: Path, config: SplitConfig, out_dir: Path, *, ingest_quarantine: Path | None
) -> dict[str, Path | list[Path]]:
    """SPLITS' inputs, every one existing: the problems, the ingest quarantine (none when
    absent: a problems file not written by ingest) and the benchmark files (an `mbpp` spec
    is written out under `out_dir/.benchmarks` first). Raises FileNotFoundError naming a
    missing file before anything runs."""
    benchmarks = [resolve_benchmark(b, Path(out_dir) / ".benchmarks") for b in config.benchmarks]
    for f in (Path(problems), *benchmarks):
        if not f.exists():
            raise FileNotFoundError(
                f"no Parquet file at {f}" if f == Path(problems) else f"no benchmark file at {f}"
            )
    quarantine = [ingest_quarantine] if ingest_quarantine and ingest_quarantine.exists() else []
    return {"problems": Path(problems), "ingest_quarantine": quarantine, "benchmarks": benchmarks}


def _paths(value: Path | list[Path]) -> list[Path]:
    return [Path(value)] if isinstance(value, (str, Path)) else [Path(p) for p in value]


@dataclass
class _Rows:
    """Per-problem working state, index-aligned with the (problem_id-sorted) input table."""

    table: pa.Table
    cols: dict[str, list[Any]]
    split: list[str | None]
    reason: list[str | None]
    cluster_of: list[str] = field(default_factory=list)
    members: dict[str, list[int]] = field(default_factory=dict)  # cluster id -> row indices

    @property
    def n(self) -> int:
        return len(self.split)

    def drop(self, i: int, why: str) -> None:
        self.split[i], self.reason[i] = "dropped", why


def _load(problems: Path) -> _Rows:
    table = read_parquet(problems, PROBLEM_SCHEMA)
    table = table.take(pc.sort_indices(table, [("problem_id", "ascending")]))
    cols = {
        c: table.column(c).to_pylist()
        for c in (
            "problem_id",
            "source",
            "source_id",
            "statement",
            "prompt_statement",
            "contest_date",
        )
    }
    counts = Counter(cols["problem_id"])
    dup = next((p for p, k in counts.items() if k > 1), None)
    if dup is not None:
        raise ValueError(f"{problems}: problem_id {dup!r} appears {counts[dup]} times")
    n = table.num_rows
    return _Rows(table, cols, [None] * n, [None] * n)


def _cluster(
    rows: _Rows, config: SplitConfig, show_progress: bool
) -> tuple[DedupResult, list[dict]]:
    """Near-duplicate clusters; rows with no words are quarantined (they cannot be compared)."""
    texts = [rows.cols[config.text_field][i] or rows.cols["statement"][i] for i in range(rows.n)]
    usable, quarantine = [], []
    for i, t in enumerate(texts):
        if words(t).tokens:
            usable.append(i)
        else:
            rows.drop(i, "quarantined: statement has no words to compare")
            quarantine.append(
                {
                    "stage": "split",
                    "source": rows.cols["source"][i],
                    "source_row_id": rows.cols["source_id"][i],
                    "field": config.text_field,
                    "reason": "statement has no words: cannot check near-duplicates",
                    "raw": None,
                }
            )
    params = config.dedup_params()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not show_progress,
    ) as progress:
        tasks = {
            s: progress.add_task(f"dedup: {s}", total=len(usable))
            for s in ("shingles", "minhash", "query")
        }
        result = cluster_texts(
            [texts[i] for i in usable],
            params,
            on_progress=lambda s, k: progress.advance(tasks[s], k),
        )
    pids = rows.cols["problem_id"]
    rows.cluster_of = [cluster_id_for([p]) for p in pids]  # quarantined rows: their own cluster
    for root_members in clusters_from(result.cluster_of).values():
        idx = sorted(usable[j] for j in root_members)
        cid = cluster_id_for([pids[i] for i in idx])  # named after the smallest problem id
        rows.members[cid] = idx
        for i in idx:
            rows.cluster_of[i] = cid
    return result, quarantine


def _assign(rows: _Rows, config: SplitConfig) -> dict[str, int]:
    """Each cluster to train or heldout as a whole; returns date-cut notes with row counts."""
    notes: Counter[str] = Counter()
    for cid in sorted(rows.members):
        idx = rows.members[cid]
        split, note = assign_cluster(
            cid,
            [rows.cols["contest_date"][i] for i in idx],
            config.seed,
            config.drawn_heldout_fraction,
            config.eval_after,
        )
        for i in idx:
            rows.split[i] = split
            if note:  # provenance: why this row could not be heldout
                rows.reason[i] = f"date cut: {note}, train only"
        if note:
            notes[note] += len(idx)
    return dict(sorted(notes.items()))


def _decontaminate(rows: _Rows, config: SplitConfig, index: BenchmarkIndex) -> dict[str, Any]:
    """Drop Train problems sharing an n-gram with a benchmark (and their cluster mates)."""
    hasher = TokenHasher()
    pids = rows.cols["problem_id"]
    heldout_overlapping = 0
    contaminated: dict[str, str] = {}  # cluster id -> first contaminated problem id
    shared_examples: Counter[str] = Counter()  # boilerplate shows up here as a frequent n-gram
    for i in range(rows.n):
        if rows.split[i] not in ("train", "heldout"):
            continue
        hit = find_contamination(rows.cols["statement"][i], index, hasher)
        if hit is None:
            continue
        if rows.split[i] == "heldout":  # eval splits keep theirs (reported)
            heldout_overlapping += 1
            continue
        shared_examples[hit.example] += 1
        rows.drop(
            i,
            f"benchmark overlap: shares {hit.shared} word {config.decontam_ngram}-gram(s) "
            f"with {hit.origin}, e.g. '{hit.example}'",
        )
        contaminated.setdefault(rows.cluster_of[i], pids[i])
    mates = 0
    if config.decontaminate_clusters:
        for cid, source_pid in sorted(contaminated.items()):
            for i in rows.members[cid]:
                if rows.split[i] == "train":
                    rows.drop(
                        i, f"near-duplicate (cluster {cid}) of benchmark-contaminated {source_pid}"
                    )
                    mates += 1
    return {
        "ngram": config.decontam_ngram,
        "benchmarks": [{**f, "path": Path(f["path"]).name} for f in index.files],
        "dropped_from_train": sum(shared_examples.values()),
        "dropped_as_cluster_mates": mates,
        "heldout_overlapping_kept": heldout_overlapping,
        "most_common_shared_ngrams": [
            [g, c] for g, c in sorted(shared_examples.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
        ],
    }


def _train_questions(train: pa.Table, config: SplitConfig) -> pa.Table:
    """One row per distinct (normalised) statement of Train; the smallest problem_id wins."""
    seen: set[str] = set()
    out = []
    for r in sorted(train.to_pylist(), key=lambda r: r["problem_id"]):
        query = r[config.train_questions_query] or r["statement"]
        key = hashlib.sha256(normalized_text(query).encode()).hexdigest()
        if key in seen:
            continue
        seen.add(key)
        out.append(train_question_row(r, query))
    return (
        pa.Table.from_pylist(out, schema=TRAIN_QUESTIONS_SCHEMA)
        if out
        else TRAIN_QUESTIONS_SCHEMA.empty_table()
    )


def _write_tables(
    rows: _Rows, out_dir: Path, config: SplitConfig, quarantine: list[pa.Table]
) -> dict[str, int]:
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name in ("train", "heldout"):
        idx = [i for i in range(rows.n) if rows.split[i] == name]
        part = rows.table.take(pa.array(idx, type=pa.int64()))
        write_parquet(part, out_dir / f"{name}.parquet", PROBLEM_SCHEMA)
        counts[name] = part.num_rows
        if name == "train":
            tq = _train_questions(part, config)
            write_parquet(tq, out_dir / "train_questions.parquet", TRAIN_QUESTIONS_SCHEMA)
            counts["train_questions"] = tq.num_rows
    assignments = pa.Table.from_pylist(
        [
            {
                "problem_id": rows.cols["problem_id"][i],
                "cluster_id": rows.cluster_of[i],
                "split": rows.split[i],
                "reason": rows.reason[i],
            }
            for i in range(rows.n)
        ],
        schema=SPLIT_ASSIGNMENT_SCHEMA,
    )
    write_parquet(assignments, out_dir / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA)
    q = pa.concat_tables(quarantine)
    write_parquet(q, out_dir / "quarantine.parquet", QUARANTINE_SCHEMA)
    counts["quarantine_rows"] = q.num_rows
    return counts


def _run(ctx: ShardContext[SplitCall]) -> Stats:
    """Cluster, assign splits and decontaminate; writes the outputs and report.json, and
    returns the marker's stats (a summary of the report)."""
    config, out_dir = ctx.config.splits, ctx.out
    (problems,) = _paths(ctx.inputs["problems"])
    index = build_index(  # bad files fail early
        _paths(ctx.inputs["benchmarks"]), config.decontam_ngram, TokenHasher()
    )
    rows = _load(problems)
    result, stage_quarantine = _cluster(rows, config, ctx.config.progress)
    date_notes = _assign(rows, config)
    decontamination = _decontaminate(rows, config, index)

    quarantine = [
        pq.read_table(q).select(QUARANTINE_SCHEMA.names).cast(QUARANTINE_SCHEMA)
        for q in _paths(ctx.inputs["ingest_quarantine"])
    ]
    quarantine.append(pa.Table.from_pylist(stage_quarantine, schema=QUARANTINE_SCHEMA))
    counts = _write_tables(rows, out_dir, config, quarantine)

    pids, sources = rows.cols["problem_id"], rows.cols["source"]
    dropped = [
        {
            "problem_id": pids[i],
            "source": sources[i],
            "source_id": rows.cols["source_id"][i],
            "reason": rows.reason[i],
        }
        for i in range(rows.n)
        if rows.split[i] == "dropped"
    ]
    per_source: dict[str, Counter[str]] = defaultdict(Counter)
    for i in range(rows.n):
        per_source[sources[i]][rows.split[i] or "dropped"] += 1
    multi = {
        cid: [pids[i] for i in idx] for cid, idx in sorted(rows.members.items()) if len(idx) > 1
    }
    report = {
        "input": problems.name,
        "config": config.model_dump(mode="json"),
        "counts": {"problems": rows.n, "dropped": len(dropped), **counts},
        "per_source": {s: dict(sorted(c.items())) for s, c in sorted(per_source.items())},
        "clusters": {
            "count": len(rows.members),
            "with_duplicates": len(multi),
            "largest": max((len(v) for v in rows.members.values()), default=0),
            "exact_duplicate_pairs": result.exact_pairs,
            "lsh_candidate_pairs": result.candidate_pairs,
            "verified_near_pairs": len(result.near_pairs),
            "members": multi,
        },
        "decontamination": decontamination,
        "date_cut": {
            "eval_after": str(config.eval_after) if config.eval_after else None,
            "kept_out_of_heldout": date_notes,
        },
        "dropped": dropped,
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    stats = {k: report[k] for k in ("counts", "per_source")} | {
        "clusters_with_duplicates": len(multi)
    }
    return stats


def _plan_line(call: SplitCall, runner: RunnerSection) -> str:
    s = call.splits
    held = (
        "heldout: every problem not in Train, chosen at assembly"
        if s.heldout_rule == "not_in_train"
        else f"heldout fraction {s.heldout_fraction}"
    )
    return f"train / heldout ({held}), near-duplicates (Jaccard >= {s.threshold}) kept on one side"


SPLITS: Stage[SplitCall] = Stage(
    name="splits",
    version="2",  # 2: train_questions carries the comparison (schema version 2)
    config=SplitCall,
    inputs=("problems", "ingest_quarantine", "benchmarks"),
    outputs=_outputs,
    run=_run,
    check=check_benchmarks,
    plan=_plan_line,
)


def split_problems(
    problems: Path,
    out_dir: Path,
    config: SplitConfig | None = None,
    *,
    force: bool = False,
    show_progress: bool = True,
) -> dict[str, Any]:
    """SPLITS through the runner, with the ingest quarantine found beside `problems` (the
    entry point of `aletheia problems split` and the tests). Returns the report
    (also written as report.json) with `cached: False`, or, when reused, the marker's
    stats with `cached: True`, as before."""
    call = SplitCall(splits=config or SplitConfig(), progress=show_progress)
    problems, out_dir = Path(problems), Path(out_dir)
    inputs = split_inputs(
        problems, call.splits, out_dir, ingest_quarantine=ingest_quarantine_path(problems)
    )
    result = run_stage(SPLITS, call, inputs, out_dir, force=force)
    if result.cached:
        return {**result.stats, "cached": True}
    report = json.loads(result.path("report").read_text())
    return {**report, "cached": False}
