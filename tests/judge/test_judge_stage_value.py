"""JUDGE as a Stage value on the runner, against the real Docker sandbox: what it writes, its
marker per output, and its chunk resume (a real child process killed with SIGKILL; chunks of
another engine or of other limits never reused)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import ChunkStore, chunk_dir, marker_dir, run_stage
from pipeline.common.stage import MARKER
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import (
    JUDGE,
    JudgeCall,
    judge_candidates,
    judge_stage,
    load_problems,
    program_key,
)
from schemas.candidate import CANDIDATE_SCHEMA, Candidate
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA, VERDICT_FIELDS
from tests.sampling.problems_fixture import SUM_PY, SUM_PY_WRONG, sum_problem

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
CONFIG = JudgeConfig(chunk_size=2, progress=False)
# Six distinct Python programs (three correct, three wrong): three chunks of two.
PROGRAMS = [
    SUM_PY,
    SUM_PY_WRONG,
    "a, b = map(int, input().split())\nprint(b + a)\n",
    "a, b = map(int, input().split())\nprint(a * b)\n",
    "print(sum(map(int, input().split())))\n",
    "a, b = map(int, input().split())\nprint(a + b + 1)\n",
]


def _candidate(code: str, i: int) -> Candidate:
    from schemas.ids import candidate_id_for

    return Candidate(
        candidate_id=candidate_id_for("python", code),
        problem_id=sum_problem().problem_id,
        language="python",
        code=code,
        completion=f"```python\n{code}\n```",
        extraction="ok",
        origin="policy",
        generator="tiny-model",
        tier="weak",
        backend="transformers",
        temperature=0.8,
        top_p=0.95,
        max_tokens=64,
        seed=i,
        sample_index=i,
    )


def write_inputs(folder: Path) -> dict[str, Path]:
    cands = [_candidate(code, i) for i, code in enumerate(PROGRAMS)]
    paths = {"candidates": folder / "candidates.parquet", "problems": folder / "problems.parquet"}
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), paths["candidates"], CANDIDATE_SCHEMA)
    write_parquet(
        models_to_table([sum_problem()], PROBLEM_SCHEMA), paths["problems"], PROBLEM_SCHEMA
    )
    return paths


def judged_rows(path: Path) -> list[dict]:
    return read_parquet(path, JUDGED_CANDIDATE_SCHEMA).to_pylist()


def without_timings(rows: list[dict]) -> list[dict]:
    return [
        {k: v for k, v in r.items() if k not in ("test_times_s", "test_memory_kb")} for r in rows
    ]


class _Engine:
    """Wraps the real client; counts the programs sent to it. `stamp`: the engine it claims
    to be (default the real one's); `refuse`: fail if anything is sent (a reuse must not judge)."""

    def __init__(self, client, stamp: str | None = None, refuse: bool = False):
        self.client, self.refuse = client, refuse
        self.stamp = stamp or client.stamp
        self.judged = 0

    def judge_iter(self, requests, progress=False):
        if self.refuse and len(requests):
            raise AssertionError(f"{len(requests)} program(s) sent to the engine; none expected")
        for item in self.client.judge_iter(requests, progress=progress):
            self.judged += 1
            yield item


def test_outputs_match_what_run_wrote_and_the_engine_stamp_keys_reuse(tmp_path, sandbox_client):
    inputs = write_inputs(tmp_path)
    out = tmp_path / "judge" / "judged-0000-of-0001.parquet"
    call = JudgeCall(judge=CONFIG)
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    result = run_stage(judge_stage(sandbox_client), call, inputs, out)

    declared = JUDGE.outputs(call, out)
    written = {p for p in tmp_path.rglob("*") if p.is_file()} - before
    marker = marker_dir(out) / MARKER
    assert set(result.outputs) == set(declared) == {"judged", "quarantine"}
    # Every output written is declared; the quarantine (optional) only with a bad checker.
    assert written == {declared["judged"], marker}
    assert not declared["quarantine"].exists()
    assert marker == out.parent / ".judged-0000-of-0001.stage" / MARKER  # one per shard file
    assert not chunk_dir(out).exists()  # cleared once the marker holds
    assert result.stats["judged_rows"] == len(judged_rows(out)) == len(PROGRAMS)
    assert not result.cached

    # The same engine: reused without judging anything, the bytes untouched.
    data = out.read_bytes()
    again = run_stage(judge_stage(_Engine(sandbox_client, refuse=True)), call, inputs, out)
    assert again.cached and again.stats == result.stats and out.read_bytes() == data
    # Display and batching settings stay out of the key.
    other_chunks = JudgeCall(judge=CONFIG.model_copy(update={"chunk_size": 5, "progress": True}))
    assert run_stage(
        judge_stage(_Engine(sandbox_client, refuse=True)), other_chunks, inputs, out
    ).cached

    # Another engine's stamp: judged again, never the other engine's table.
    other = _Engine(sandbox_client, stamp="process:elsewhere")
    rerun = run_stage(judge_stage(other), call, inputs, out)
    assert not rerun.cached and other.judged == len(PROGRAMS)
    assert {r["judge_stamp"] for r in judged_rows(out)} == {"process:elsewhere"}


def _child_killed(work: str, after_chunks: str) -> None:
    """Judge in a real child process, SIGKILLed once `after_chunks` checkpoints' worth of
    programs have come out (the engine is closed first so no container outlives the kill)."""
    from sandbox import SandboxClient

    class KillAfter:
        def __init__(self, client, n: int):
            self.client, self.n, self.stamp = client, n, client.stamp

        def judge_iter(self, requests, progress=False):
            for given, item in enumerate(self.client.judge_iter(requests, progress=progress)):
                if given == self.n:
                    self.client.close()
                    os.kill(os.getpid(), signal.SIGKILL)
                yield item

    w = Path(work)
    with SandboxClient(pool_size=1) as client:
        judge_candidates(
            w / "candidates.parquet",
            w / "problems.parquet",
            w / "judged.parquet",
            CONFIG,
            client=KillAfter(client, int(after_chunks) * CONFIG.chunk_size),
        )


def test_a_killed_judge_run_resumes_only_the_rest(tmp_path, sandbox_client):
    inputs = write_inputs(tmp_path)
    out = tmp_path / "judged.parquet"
    code = (
        "import sys; from tests.judge.test_judge_stage_value import _child_killed; "
        "_child_killed(*sys.argv[1:])"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), "2"],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert not out.exists() and not (marker_dir(out) / MARKER).exists()
    assert len(ChunkStore(chunk_dir(out), JUDGE.chunks.schema, "program_key").files()) == 2

    engine = _Engine(sandbox_client)
    stats = judge_candidates(inputs["candidates"], inputs["problems"], out, CONFIG, client=engine)
    assert stats["programs_resumed_from_checkpoint"] == 4  # the two chunks the child finished
    assert engine.judged == len(PROGRAMS) - 4  # only the rest went to the sandbox
    assert (marker_dir(out) / MARKER).exists() and not chunk_dir(out).exists()

    fresh = tmp_path / "fresh.parquet"
    judge_candidates(inputs["candidates"], inputs["problems"], fresh, CONFIG, client=sandbox_client)
    assert without_timings(judged_rows(out)) == without_timings(judged_rows(fresh))


def test_chunks_of_another_engine_or_other_limits_are_not_reused(tmp_path, sandbox_client):
    inputs = write_inputs(tmp_path)
    first = tmp_path / "first.parquet"
    judge_candidates(inputs["candidates"], inputs["problems"], first, CONFIG, client=sandbox_client)
    rows = {r["code"]: r for r in judged_rows(first)}
    problem = load_problems(inputs["problems"])[sum_problem().problem_id]
    cands = {c.code: c for c in (_candidate(code, i) for i, code in enumerate(PROGRAMS))}
    columns = [f.name for f in VERDICT_FIELDS]

    def chunk_row(code: str, config: JudgeConfig, stamp: str, planted: str) -> dict:
        verdict = {k: rows[code][k] for k in columns}
        return {
            "program_key": program_key(cands[code], problem, config),
            **verdict,
            "judge_stamp": stamp,
            "judge_cache_key": planted,
        }

    out = tmp_path / "judged.parquet"
    schema = JUDGE.chunks.schema
    store = ChunkStore(chunk_dir(out), schema, "program_key")
    store.save([chunk_row(PROGRAMS[0], CONFIG, "process:elsewhere", "planted-other-engine")])
    scaled = CONFIG.model_copy(update={"time_limit_scale": 2.0})
    store.save([chunk_row(PROGRAMS[1], scaled, sandbox_client.stamp, "planted-other-limits")])
    # This engine, these limits: reused, also from a chunk named as the judge named its
    # checkpoints before it moved onto the runner (same folder and schema).
    same = [chunk_row(PROGRAMS[2], CONFIG, sandbox_client.stamp, "planted-same-engine")]
    name = hashlib.sha256(same[0]["program_key"].encode()).hexdigest()[:16]
    write_parquet(
        pa.Table.from_pylist(same, schema=schema), store.folder / f"chunk-{name}.parquet", schema
    )

    engine = _Engine(sandbox_client)
    result = run_stage(judge_stage(engine), JudgeCall(judge=CONFIG), inputs, out)
    assert result.stats["programs_resumed_from_checkpoint"] == 1
    assert engine.judged == len(PROGRAMS) - 1
    judged = {r["code"]: r for r in judged_rows(out)}
    assert judged[PROGRAMS[2]]["judge_cache_key"] == "planted-same-engine"
    planted = {
        r["judge_cache_key"] for r in judged.values() if r["judge_cache_key"].startswith("planted")
    }
    assert planted == {"planted-same-engine"}
    assert {r["judge_stamp"] for r in judged.values()} == {sandbox_client.stamp}
    assert judged[PROGRAMS[0]]["verdict"] == rows[PROGRAMS[0]]["verdict"] == "AC"


def test_a_run_killed_after_its_last_chunk_resumes_without_an_engine() -> None:
    """Killed after every chunk was saved but before the marker: the rerun resumes every
    program, so `_run` opens no engine; nothing is left to stream to it (this crashed on
    `None.judge_iter` in the flow test's killed-then-resumed build)."""
    from pipeline.judge.stage import _judge_programs

    resumed = {"k1": {"verdict": "accepted"}}
    assert _judge_programs({}, None, CONFIG, done=resumed) == resumed  # type: ignore[arg-type]
