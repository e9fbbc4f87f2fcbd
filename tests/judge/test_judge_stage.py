"""The judge stage against the real Docker sandbox."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_candidates, judge_rows, quarantine_path
from pipeline.sampling.mutants import mutant_candidates
from pipeline.sampling.references import reference_candidates
from schemas.candidate import CANDIDATE_SCHEMA, Candidate
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA
from tests.sampling.problems_fixture import SUM_PY, function_problem, sum_problem

pytestmark = pytest.mark.docker


def _policy(
    problem_id: str, language: str, code: str, extraction: str, generator="tiny-model", i=0
):
    from schemas.ids import candidate_id_for

    return Candidate(
        candidate_id=candidate_id_for(language, code),
        problem_id=problem_id,
        language=language,
        code=code,
        completion=f"```{language}\n{code}\n```" if code else "no code here",
        extraction=extraction,
        origin="policy",
        generator=generator,
        tier="weak",
        backend="transformers",
        temperature=0.8,
        top_p=0.95,
        max_tokens=64,
        seed=i,
        sample_index=i,
    )


@pytest.fixture()
def inputs(tmp_path):
    sp, fp = sum_problem(), function_problem()
    refs = reference_candidates([sp, fp])
    cpp = [r for r in refs if r.language == "cpp"]
    mutants = mutant_candidates(cpp, operators=["narrow_int_all"])
    cands = (
        refs
        + mutants
        + [
            _policy(sp.problem_id, "python", SUM_PY, "ok"),  # same code as a reference: judged once
            _policy(sp.problem_id, "python", "", "no_code", i=1),
            _policy(fp.problem_id, "cpp", "int double_(int x){return 2*x;}", "ok", i=2),
        ]
    )
    cpath, ppath = tmp_path / "candidates.parquet", tmp_path / "problems.parquet"
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), cpath, CANDIDATE_SCHEMA)
    write_parquet(models_to_table([sp, fp], PROBLEM_SCHEMA), ppath, PROBLEM_SCHEMA)
    return cpath, ppath, cands


def test_stage_judges_distinct_programs_once_and_counts_the_rest(inputs, tmp_path, sandbox_client):
    cpath, ppath, cands = inputs
    out = tmp_path / "judged.parquet"
    stats = judge_candidates(cpath, ppath, out, JudgeConfig(progress=False), client=sandbox_client)
    rows = read_parquet(out, JUDGED_CANDIDATE_SCHEMA).to_pylist()
    assert stats["candidates"] == len(cands)
    assert stats["not_judged"] == {"extraction_no_code": 1, "function_mode_not_python": 1}
    assert stats["judged_rows"] == len(rows) == len(cands) - 2
    assert stats["distinct_programs"] == len(rows) - 1  # the policy copy of SUM_PY
    by = {(r["generator"], r["language"], r["reference_correct"], r["origin"]): r for r in rows}
    assert by[("reference:test", "python", True, "reference")]["verdict"] == "AC"
    assert by[("reference:test", "cpp", True, "reference")]["verdict"] == "AC"
    assert by[("reference:test", "java", True, "reference")]["verdict"] == "AC"
    wrong = by[("reference:test", "python", False, "reference")]
    assert wrong["verdict"] == "WA" and wrong["passed"] == 0 and wrong["test_verdicts"][0] == "WA"
    narrowed = by[("mutant:narrow_int_all", "cpp", None, "mutant")]
    assert narrowed["verdict"] == "WA" and narrowed["passed"] == 2 and narrowed["total"] == 3
    assert narrowed["pass_rate"] == pytest.approx(2 / 3)
    fn = [r for r in rows if r["problem_id"] == function_problem().problem_id]
    assert [r["verdict"] for r in fn] == ["AC"]
    policy = by[("tiny-model", "python", None, "policy")]
    assert policy["verdict"] == "AC" and policy["judge_cache_key"]
    assert all(r["sandbox_image"] and len(r["test_times_s"]) == r["total"] for r in rows)
    assert {r["judge_stamp"] for r in rows} == {sandbox_client.stamp}
    assert sandbox_client.stamp == f"docker:{rows[0]['sandbox_image']}"
    group = stats["by_generator_language"]["reference:test | python"]
    assert group["verdicts"] == {"AC": 2, "WA": 1} and group["pass_rates"]["1"] == 2
    assert stats["by_generator_language"]["tiny-model | python"]["extraction_failures"] == 1
    assert stats["se"] == 0
    assert stats["problems_quarantined"] == {} and not quarantine_path(out).exists()


class _CrashAfter:
    """Wraps the real client and raises once `n` results have come out: a crash mid-stage.
    `stamp`: the engine it claims to be (default: the real client's)."""

    def __init__(self, client, n, stamp=None):
        self.client, self.n = client, n
        self.stamp = stamp or client.stamp

    def judge_iter(self, requests, progress=False):
        for given, item in enumerate(self.client.judge_iter(requests, progress=progress)):
            if given == self.n:
                raise KeyboardInterrupt("simulated crash")
            yield item


def test_a_crashed_judge_run_resumes_from_its_checkpoints(inputs, tmp_path, sandbox_client):
    cpath, ppath, _ = inputs
    out = tmp_path / "judged.parquet"
    config = JudgeConfig(chunk_size=2, progress=False)
    with pytest.raises(KeyboardInterrupt):
        judge_candidates(cpath, ppath, out, config, client=_CrashAfter(sandbox_client, 4))
    assert not out.exists()
    stats = judge_candidates(cpath, ppath, out, config, client=sandbox_client)
    assert stats["programs_resumed_from_checkpoint"] == 4
    assert stats["judged_rows"] == pq.read_table(out).num_rows
    assert not (tmp_path / ".judged.parquet.parts").exists()


def test_checkpoints_of_another_engine_are_judged_again(inputs, tmp_path, sandbox_client):
    """A run resumed on another engine never mixes engines in one table: the other engine's
    checkpointed verdicts are judged again, this engine's are reused."""
    cpath, ppath, _ = inputs
    out = tmp_path / "judged.parquet"
    config = JudgeConfig(chunk_size=2, progress=False)
    other = _CrashAfter(sandbox_client, 4, stamp="process:elsewhere")
    with pytest.raises(KeyboardInterrupt):
        judge_candidates(cpath, ppath, out, config, client=other)  # 2 chunks stamped "process"
    with pytest.raises(KeyboardInterrupt):  # 1 chunk of this engine, the process ones ignored
        judge_candidates(cpath, ppath, out, config, client=_CrashAfter(sandbox_client, 2))
    stats = judge_candidates(cpath, ppath, out, config, client=sandbox_client)
    assert stats["programs_resumed_from_checkpoint"] == 2  # this engine's one chunk only
    rows = read_parquet(out, JUDGED_CANDIDATE_SCHEMA).to_pylist()
    assert {r["judge_stamp"] for r in rows} == {sandbox_client.stamp}


def test_problems_over_the_memory_ceiling_are_judged_at_it_and_counted(tmp_path, sandbox_client):
    big = sum_problem().model_copy(update={"memory_limit_mb": 2048})
    refs = reference_candidates([big], languages=["python"])
    cpath, ppath, out = tmp_path / "c.parquet", tmp_path / "p.parquet", tmp_path / "j.parquet"
    write_parquet(models_to_table(refs, CANDIDATE_SCHEMA), cpath, CANDIDATE_SCHEMA)
    write_parquet(models_to_table([big], PROBLEM_SCHEMA), ppath, PROBLEM_SCHEMA)
    stats = judge_candidates(cpath, ppath, out, JudgeConfig(progress=False), client=sandbox_client)
    assert stats["problems_memory_capped"] == [big.problem_id]
    rows = read_parquet(out, JUDGED_CANDIDATE_SCHEMA).to_pylist()
    assert sorted(r["verdict"] for r in rows) == ["AC", "WA"]
    assert {r["memory_limit_mb"] for r in rows} == {1024}


def test_judge_rows_in_memory(sandbox_client):
    sp = sum_problem()
    refs = reference_candidates([sp], languages=["python"])
    rows = judge_rows(refs, {sp.problem_id: sp}, sandbox_client)
    assert [r["candidate_id"] for r in rows] == [r.candidate_id for r in refs]
    assert sorted(r["verdict"] for r in rows) == ["AC", "WA"]
    with pytest.raises(ValueError, match="unknown problem_id"):
        judge_rows(refs, {}, sandbox_client)


def test_nothing_left_to_judge_needs_no_engine():
    """A stage resumed in full (or with no judgeable program) opens no engine: judging
    must then not touch one (the re-judge of edits all proven unchanged hit this)."""
    from pipeline.judge.stage import _judge_programs

    done = {"k": {"verdict": "AC"}}
    assert _judge_programs({}, None, JudgeConfig(progress=False), done=done) == done  # type: ignore[arg-type]
