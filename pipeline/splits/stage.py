"""The split stage: problems.parquet -> train / heldout / train_questions / quarantine / report.

    split_problems(Path("problems.parquet"), Path("splits/"), SplitConfig(heldout_fraction=0.2))

Writes into out_dir: train.parquet and heldout.parquet (PROBLEM_SCHEMA),
train_questions.parquet (TRAIN_QUESTIONS_SCHEMA), assignments.parquet
(SPLIT_ASSIGNMENT_SCHEMA: every input problem once, with cluster and split),
quarantine.parquet (the ingest quarantine found beside the input, plus this stage's
own), and report.json. Same inputs, config and seed -> byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.stage import is_done, mark_done, read_stats, stage_key
from pipeline.splits.assign import assign_cluster, cluster_id_for
from pipeline.splits.config import SplitConfig
from pipeline.splits.decontam import build_index, find_contamination
from pipeline.splits.dedup import DedupParams, cluster_texts, clusters_from
from pipeline.splits.text import TokenHasher, normalized_text, words
from schemas.common import QUARANTINE_SCHEMA
from schemas.problem import PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA, TRAIN_QUESTIONS_SCHEMA

STAGE = "splits"
VERSION = "1"
OUTPUTS = ("train.parquet", "heldout.parquet", "train_questions.parquet", "assignments.parquet",
           "quarantine.parquet", "report.json")


def ingest_quarantine_path(problems: Path) -> Path:
    stem = problems.name.removesuffix(".parquet")
    return problems.with_name(f"{stem}.quarantine.parquet")


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), disable=not enabled)


def _train_questions(train: pa.Table, config: SplitConfig) -> pa.Table:
    """One row per distinct (normalised) statement of Train; the smallest problem_id wins."""
    rows = sorted(train.to_pylist(), key=lambda r: r["problem_id"])
    seen: set[str] = set()
    out = []
    for r in rows:
        query = r[config.train_questions_query] or r["statement"]
        key = hashlib.sha256(normalized_text(query).encode()).hexdigest()
        if key in seen:
            continue
        seen.add(key)
        out.append({**{f.name: r.get(f.name) for f in TRAIN_QUESTIONS_SCHEMA if f.name != "query"},
                    "query": query})
    return pa.Table.from_pylist(out, schema=TRAIN_QUESTIONS_SCHEMA) if out else TRAIN_QUESTIONS_SCHEMA.empty_table()


def split_problems(
    problems: Path,
    out_dir: Path,
    config: SplitConfig | None = None,
    *,
    force: bool = False,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Cluster, decontaminate and assign splits; returns the report (also written as report.json)."""
    config = config or SplitConfig()
    problems, out_dir = Path(problems), Path(out_dir)
    benchmarks = [Path(b) for b in config.benchmarks]
    for f in (problems, *benchmarks):
        if not f.exists():
            raise FileNotFoundError(f"no Parquet file at {f}" if f == problems else f"no benchmark file at {f}")
    ingest_q = ingest_quarantine_path(problems)
    inputs = [problems, *benchmarks] + ([ingest_q] if ingest_q.exists() else [])
    key = stage_key(STAGE, VERSION, config, inputs, seed=config.seed)
    if not force and is_done(out_dir, key) and all((out_dir / n).exists() for n in OUTPUTS):
        return {**read_stats(out_dir), "cached": True}

    table = read_parquet(problems, PROBLEM_SCHEMA)
    table = table.take(pc.sort_indices(table, [("problem_id", "ascending")]))
    cols = {c: table.column(c).to_pylist() for c in
            ("problem_id", "source", "source_id", "statement", "prompt_statement", "contest_date")}
    pids = cols["problem_id"]
    dup = [p for p, k in Counter(pids).items() if k > 1]
    if dup:
        raise ValueError(f"{problems}: problem_id {dup[0]!r} appears {Counter(pids)[dup[0]]} times")
    n = len(pids)
    texts = [(cols[config.text_field][i] or cols["statement"][i]) for i in range(n)]

    # Problems with no words cannot be compared for near-duplicates: quarantined, never split.
    split: list[str | None] = [None] * n
    reason: list[str | None] = [None] * n
    stage_quarantine = []
    usable = []
    for i, t in enumerate(texts):
        if words(t).tokens:
            usable.append(i)
        else:
            split[i], reason[i] = "dropped", "quarantined: statement has no words to compare"
            stage_quarantine.append({"stage": "split", "source": cols["source"][i],
                                     "source_row_id": cols["source_id"][i], "field": config.text_field,
                                     "reason": "statement has no words: cannot check near-duplicates",
                                     "raw": None})

    params = DedupParams(shingle_size=config.shingle_size, threshold=config.threshold,
                         lsh_threshold=min(config.lsh_threshold, config.threshold),
                         num_perm=config.num_perm, within_sentences=config.shingles_within_sentences)
    with _progress(show_progress) as progress:
        tasks = {s: progress.add_task(f"dedup: {s}", total=len(usable)) for s in ("shingles", "minhash", "query")}
        result = cluster_texts([texts[i] for i in usable], params,
                               on_progress=lambda s, k: progress.advance(tasks[s], k))

    # Clusters over usable problems, named after their smallest problem id.
    cluster_of: list[str | None] = [None] * n
    members: dict[str, list[int]] = {}
    for root_members in clusters_from(result.cluster_of).values():
        idx = [usable[j] for j in root_members]
        cid = cluster_id_for([pids[i] for i in idx])
        members[cid] = sorted(idx)
        for i in idx:
            cluster_of[i] = cid
    for i in range(n):  # quarantined rows get a singleton cluster id for the assignments table
        if cluster_of[i] is None:
            cluster_of[i] = cluster_id_for([pids[i]])

    date_notes: Counter[str] = Counter()
    for cid in sorted(members):
        idx = members[cid]
        s, note = assign_cluster(cid, [cols["contest_date"][i] for i in idx], config.seed,
                                 config.heldout_fraction, config.eval_after)
        for i in idx:
            split[i] = s
            if note:  # provenance: why this row could not be heldout
                reason[i] = f"date cut: {note}, train only"
        if note:
            date_notes[note] += len(idx)

    # Decontamination: only Train loses problems; eval splits keep theirs (reported).
    hasher = TokenHasher()
    index = build_index(benchmarks, config.decontam_ngram, hasher)
    dropped: list[dict[str, Any]] = []
    heldout_overlapping = 0
    contaminated_clusters: dict[str, str] = {}
    shared_examples: Counter[str] = Counter()  # boilerplate shows up here as a frequent n-gram
    for i in range(n):
        if split[i] not in ("train", "heldout"):
            continue
        hit = find_contamination(cols["statement"][i], index, hasher)
        if hit is None:
            continue
        if split[i] == "heldout":
            heldout_overlapping += 1
            continue
        split[i] = "dropped"
        shared_examples[hit.example] += 1
        reason[i] = (f"benchmark overlap: shares {hit.shared} word {config.decontam_ngram}-gram(s) "
                     f"with {hit.origin}, e.g. '{hit.example}'")
        contaminated_clusters.setdefault(cluster_of[i], pids[i])
    if config.decontaminate_clusters:
        for cid, source_pid in sorted(contaminated_clusters.items()):
            for i in members[cid]:
                if split[i] == "train":
                    split[i] = "dropped"
                    reason[i] = f"near-duplicate (cluster {cid}) of benchmark-contaminated {source_pid}"
    for i in range(n):
        if split[i] == "dropped":
            dropped.append({"problem_id": pids[i], "source": cols["source"][i],
                            "source_id": cols["source_id"][i], "reason": reason[i]})

    # Outputs
    out_dir.mkdir(parents=True, exist_ok=True)
    train_idx = [i for i in range(n) if split[i] == "train"]
    heldout_idx = [i for i in range(n) if split[i] == "heldout"]
    train = table.take(pa.array(train_idx, type=pa.int64()))
    heldout = table.take(pa.array(heldout_idx, type=pa.int64()))
    write_parquet(train, out_dir / "train.parquet", PROBLEM_SCHEMA)
    write_parquet(heldout, out_dir / "heldout.parquet", PROBLEM_SCHEMA)
    tq = _train_questions(train, config)
    write_parquet(tq, out_dir / "train_questions.parquet", TRAIN_QUESTIONS_SCHEMA)
    assignments = pa.Table.from_pylist(
        [{"problem_id": pids[i], "cluster_id": cluster_of[i], "split": split[i], "reason": reason[i]}
         for i in range(n)], schema=SPLIT_ASSIGNMENT_SCHEMA)
    write_parquet(assignments, out_dir / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA)
    quarantine = [pq.read_table(ingest_q).select(QUARANTINE_SCHEMA.names).cast(QUARANTINE_SCHEMA)] \
        if ingest_q.exists() else []
    quarantine.append(pa.Table.from_pylist(stage_quarantine, schema=QUARANTINE_SCHEMA))
    write_parquet(pa.concat_tables(quarantine), out_dir / "quarantine.parquet", QUARANTINE_SCHEMA)

    per_source: dict[str, Counter[str]] = defaultdict(Counter)
    for i in range(n):
        per_source[cols["source"][i]][split[i] or "dropped"] += 1
    multi = {cid: [pids[i] for i in idx] for cid, idx in sorted(members.items()) if len(idx) > 1}
    report = {
        "input": problems.name,
        "config": config.model_dump(mode="json"),
        "counts": {
            "problems": n,
            "train": len(train_idx),
            "heldout": len(heldout_idx),
            "dropped": len(dropped),
            "train_questions": tq.num_rows,
            "quarantine_rows": sum(t.num_rows for t in quarantine),
        },
        "per_source": {s: dict(sorted(c.items())) for s, c in sorted(per_source.items())},
        "clusters": {
            "count": len(members),
            "with_duplicates": len(multi),
            "largest": max((len(v) for v in members.values()), default=0),
            "exact_duplicate_pairs": result.exact_pairs,
            "lsh_candidate_pairs": result.candidate_pairs,
            "verified_near_pairs": len(result.near_pairs),
            "members": multi,
        },
        "decontamination": {
            "ngram": config.decontam_ngram,
            "benchmarks": [{**f, "path": Path(f["path"]).name} for f in index.files],
            "dropped_from_train": sum(1 for d in dropped if d["reason"].startswith("benchmark overlap")),
            "dropped_as_cluster_mates": sum(1 for d in dropped if d["reason"].startswith("near-duplicate")),
            "heldout_overlapping_kept": heldout_overlapping,
            "most_common_shared_ngrams": [[g, c] for g, c in sorted(
                shared_examples.items(), key=lambda kv: (-kv[1], kv[0]))[:20]],
        },
        "date_cut": {"eval_after": str(config.eval_after) if config.eval_after else None,
                     "kept_out_of_heldout": dict(sorted(date_notes.items()))},
        "dropped": dropped,
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    stats = {k: report[k] for k in ("counts", "per_source")} | {
        "clusters_with_duplicates": len(multi)}
    mark_done(out_dir, key, STAGE, stats)
    return {**report, "cached": False}
