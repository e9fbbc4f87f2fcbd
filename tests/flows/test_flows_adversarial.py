"""The judge fan-out (flows/fanout.py) for the main judge and the Adv re-judge, on a real (ephemeral)
Prefect server and the real Docker sandbox, with `runner.judge_shards: 2`.

Smaller than the full build (tests/flows/test_flows_build.py): four bundled problems'
Python reference solutions and mutants of the correct ones, plus two problems whose
checker cannot be used (one per shard, so the judge's quarantine has to be merged across
shards), judged as shards (`run_sharded(JUDGE, ...)`); then assembly (a plain call), then the flow's Adv
step: plan the edits, judge them as shards, finish from the judged table.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from prefect import flow

from pipeline.common.hashing import sha256_files
from tests.flows.flows_helpers import small_config

pytestmark = pytest.mark.docker

QUARANTINED = ("split-testlib", "split-broken-b")  # problem ids that land in shards 1 and 0


@flow(name="judge-then-adv")
def judge_then_adv(config: dict[str, Any], problems: dict[str, Any]) -> dict[str, Any]:
    """The front half's judge call and the Adv step of build-aletheia-eval, wired as there."""
    from flows.artifacts import artifact_key, counts_artifact
    from flows.fanout import run_sharded
    from flows.task import RunSettings, file_ref
    from pipeline.config import load_run_config
    from pipeline.instances.stage import assemble
    from pipeline.judge.shown import judged_counts
    from pipeline.judge.stage import JUDGE, JudgeCall
    from tests.flows.flows_helpers import given_result, run_graph_nodes

    cfg = load_run_config(config)
    work = cfg.work_dir
    judged = run_sharded(
        JUDGE,
        JudgeCall(judge=cfg.judge, sandbox=cfg.sandbox),
        {
            "candidates": file_ref(work / "candidates.parquet"),
            "problems": file_ref(problems["outputs"]["problems"]),
        },
        work / "judged.parquet",
        RunSettings.of(cfg),
        "judge",
    )
    counts_artifact(
        artifact_key(cfg.name, "judged-counts"),
        judged_counts(Path(judged["outputs"]["judged"]), Path(judged["outputs"]["quarantine"])),
        "judged",
    )
    assemble(  # as configs/demo.yaml, without token caps (no tokenizer offline)
        Path(judged["outputs"]["judged"]),
        Path(problems["outputs"]["problems"]),
        work / "splits",
        work / "instances",
        cfg.assemble.model_copy(update={"tokenizer": None}),
    )
    given = {"assemble": given_result(heldout=str(work / "instances" / "heldout.parquet")),
             "ingest": problems}  # fmt: skip
    adv = run_graph_nodes(cfg, ["adv-edits", "adv-judge", "adv"], given)["adv"]
    return {"judged": judged, "adv": adv}


def _task_runs_between(t0: datetime, t1: datetime | None = None) -> dict[str, list[str]]:
    """task-run name without its suffix -> the states of its runs created in [t0, t1)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import TaskRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(sort=TaskRunSort.EXPECTED_START_TIME_DESC, limit=200)
    out: dict[str, list[str]] = {}
    for r in runs:
        if r.created and r.created >= t0 and (t1 is None or r.created < t1):
            out.setdefault(r.name.rsplit("-", 1)[0], []).append(r.state_name)
    return out


@pytest.fixture(scope="module")
def run(
    prefect_api: str,
    small_bundled: Path,
    sandbox_client: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    from pipeline.common.parquet import write_parquet
    from pipeline.problems.bundled import load_bundled
    from pipeline.sampling.mutants import mutant_candidates
    from pipeline.sampling.references import reference_candidates
    from pipeline.splits.config import SplitConfig
    from pipeline.splits.stage import split_problems
    from schemas import CANDIDATE_SCHEMA, PROBLEM_SCHEMA
    from schemas.tables import models_to_table
    from tests.judge.test_judge_checkers import _split_problem
    from tests.sandbox.checker_programs import BROKEN_CHECKER, NEEDS_TESTLIB

    root = tmp_path_factory.mktemp("flow-adv")
    cfg = small_config(root / "out", small_bundled, root / "tiny-model")
    work = root / "out" / "work"
    bundled = load_bundled(small_bundled)
    unusable = [_split_problem(QUARANTINED[0], NEEDS_TESTLIB),
                _split_problem(QUARANTINED[1], BROKEN_CHECKER)]  # fmt: skip
    problems_path = work / "problems.parquet"
    write_parquet(models_to_table([*bundled, *unusable], PROBLEM_SCHEMA), problems_path)
    write_parquet(models_to_table(bundled, PROBLEM_SCHEMA), root / "bundled.parquet")
    split_problems(
        root / "bundled.parquet", work / "splits", SplitConfig(heldout_fraction=0.5, seed=0),
        show_progress=False,
    )  # fmt: skip
    refs = [c for c in reference_candidates([*bundled, *unusable]) if c.language == "python"]
    # Mutants of the correct ones, as the demo samples them: wrong programs enough for pairs.
    mutants = mutant_candidates([c for c in refs if c.reference_correct], per_candidate=2, seed=0)
    cands = refs + mutants
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), work / "candidates.parquet")
    problems = {
        "stage": "ingest",
        "outputs": {"problems": str(problems_path)},
        "digest": sha256_files([problems_path])[:16],
        "stats": {},  # a node's result, as the executor reads it
    }
    t0 = datetime.now(UTC)
    first = judge_then_adv(cfg, problems)
    t1 = datetime.now(UTC)
    again = judge_then_adv(cfg, problems)
    return {
        "cfg": cfg,
        "root": root,
        "work": work,
        "problems": problems_path,
        "first": first,
        "again": again,
        "states1": _task_runs_between(t0, t1),
        "states2": _task_runs_between(t1),
    }


def test_adv_from_the_rejudge_shards_equals_the_in_process_rejudge(
    run: dict[str, Any], sandbox_client: Any
) -> None:
    from pipeline.config import load_run_config
    from pipeline.instances.stage import adversarial

    work, cfg = run["work"], load_run_config(run["cfg"])
    heldout = work / "instances" / "heldout.parquet"
    stats = adversarial(heldout, run["problems"], run["root"] / "in-process", cfg.adv,
                        sandbox_client)  # fmt: skip
    sharded = Path(run["first"]["adv"]["outputs"]["adv"])
    assert sharded == work / "adv" / "adv.parquet"
    assert sharded.read_bytes() == (run["root"] / "in-process" / "adv.parquet").read_bytes()
    assert run["first"]["adv"]["stats"] == stats
    assert stats["rows_out"] > 0 and stats["edits_not_rejudged"] == 0
    for i in range(2):  # the edits were judged as two shards
        assert (work / "adv" / "judge" / f"judged-{i:04d}-of-0002.parquet").exists()


def test_rejudge_shards_run_as_tasks_of_their_own_and_are_cached(run: dict[str, Any]) -> None:
    first, second = run["states1"], run["states2"]
    assert first["judge-shard"] == ["Completed"] * 2  # the main judge: default run names
    assert first["adv-judge-shard"] == ["Completed"] * 2
    assert first["adversarial-edits"] == first["adversarial"] == ["Completed"]
    for stage in ("judge-shard", "adv-judge-shard", "adversarial-edits", "adversarial"):
        assert set(second[stage]) == {"Cached"}, (stage, second)
    assert run["again"]["adv"]["digest"] == run["first"]["adv"]["digest"]


def test_the_judge_quarantine_of_every_shard_is_merged_and_reported(run: dict[str, Any]) -> None:
    import polars as pl
    from prefect.client.orchestration import get_client

    from schemas.ids import problem_id_for

    work = run["work"]
    judged = run["first"]["judged"]
    assert judged["stats"]["quarantine_rows"] == 2
    merged = pl.read_parquet(judged["outputs"]["quarantine"])
    assert Path(judged["outputs"]["quarantine"]) == work / "judged.quarantine.parquet"
    ids = {json.loads(r)["problem_id"] for r in merged["raw"]}
    assert ids == {problem_id_for("ccplus-test", s) for s in QUARANTINED}
    for i in range(2):  # one quarantined problem in each shard
        shard = work / "judge" / f"judged-{i:04d}-of-0002.quarantine.parquet"
        assert pl.read_parquet(shard).height == 1
    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(limit=200)
    latest = {a.key: a for a in sorted(arts, key=lambda a: a.created) if a.key}
    table = latest["flowtest-judged-counts"]
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    (q,) = [r for r in rows if r["split"] == "judge quarantine"]
    assert q["count"] == 2
    rejected = latest["flowtest-adv-rejected-edits"]
    rows = json.loads(rejected.data) if isinstance(rejected.data, str) else rejected.data
    stats = run["first"]["adv"]["stats"]
    assert {r["bias"] for r in rows} == set(stats["by_bias"])
    assert sum(r["accepted"] for r in rows) == stats["edits_accepted"]
    assert latest["flowtest-adv-judge-progress"].type == "progress"
    assert float(latest["flowtest-adv-judge-progress"].data) == 100.0
