"""The judge interface (pipeline/judge/interface.py) without a sandbox: the request builder
from problem rows, the limits it clamps, the verdict columns, opening an engine from a
`sandbox:` section, and Train-Questions files of the older schema version."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.hub_folder import read_config
from pipeline.errors import UserError, one_line
from pipeline.judge.config import SandboxSection
from pipeline.judge.interface import (
    MAX_MEMORY_MB,
    MIN_MEMORY_MB,
    JudgeSpecError,
    JudgeUnavailable,
    first_failure,
    judge_spec,
    open_judge,
    verdict_columns,
)
from sandbox.engines import EngineUnavailable
from sandbox.models import JudgeResult, TestResult
from schemas.problem import (
    JUDGE_FIELDS,
    PROBLEM_SCHEMA,
    TRAIN_QUESTIONS_SCHEMA,
    Problem,
    train_question_row,
)
from schemas.tables import SchemaError
from schemas.verdict import VERDICT_FIELDS

CHECKER = "import sys\nsys.exit(0)\n"


def _problem(**kw) -> Problem:
    base = {
        "problem_id": "p1",
        "source": "fixture",
        "source_id": "1",
        "statement": "Print n / 3.",
        "test_mode": "stdio",
        "tests": [{"input": "1\n", "output": "0.333\n"}, {"input": "2\n", "output": "0.667\n"}],
    }
    return Problem.model_validate({**base, **kw})


def test_train_questions_carry_every_field_the_request_builder_reads() -> None:
    assert set(JUDGE_FIELDS) <= set(TRAIN_QUESTIONS_SCHEMA.names)
    assert TRAIN_QUESTIONS_SCHEMA.metadata[b"aletheia.schema_version"] == b"2"


@pytest.mark.parametrize(
    "kw",
    [
        {"compare_mode": "float", "float_abs_tol": 1e-3, "float_rel_tol": 1e-6},
        {"compare_mode": "checker", "checker": CHECKER, "time_limit_s": 3.5},
        {"compare_mode": "exact", "memory_limit_mb": 512},
    ],
)
def test_a_problem_and_its_train_questions_row_give_the_same_request(kw: dict) -> None:
    """The stage builds from a Problem, RLVR from the Train-Questions row: one builder, one key."""
    problem = _problem(**kw)
    row = train_question_row(problem.model_dump(mode="python"), problem.statement)
    table = pa.Table.from_pylist([row], schema=TRAIN_QUESTIONS_SCHEMA)  # through Arrow, as read
    [as_read] = table.to_pylist()
    from_problem = judge_spec(problem).request("python", "print(1)\n")
    from_row = judge_spec(as_read).request("python", "print(1)\n")
    assert from_row.cache_key("img") == from_problem.cache_key("img")
    assert from_row.compare.mode == kw["compare_mode"]
    assert from_row.compare.abs_tol == kw.get("float_abs_tol")
    assert from_row.compare.checker == kw.get("checker")
    assert from_row.time_limit_s == kw.get("time_limit_s", 2.0)
    assert from_row.memory_limit_mb == kw.get("memory_limit_mb", 256)


@pytest.mark.parametrize(
    ("asked_mb", "judged_mb"), [(4096, 1024), (1025, 1024), (1024, 1024), (8, 16), (256, 256)]
)
def test_memory_is_clamped_to_the_sandbox_range(asked_mb: int, judged_mb: int) -> None:
    assert (MIN_MEMORY_MB, MAX_MEMORY_MB) == (16, 1024)  # JudgeRequest's own bounds
    spec = judge_spec(_problem(memory_limit_mb=asked_mb))
    assert spec.memory_limit_mb == judged_mb
    assert spec.memory_capped == (asked_mb != judged_mb)
    assert spec.request("cpp", "int main(){}").memory_limit_mb == judged_mb


def test_time_limit_is_scaled_then_capped_at_60_s() -> None:
    assert judge_spec(_problem(time_limit_s=2.0), time_limit_scale=2.5).time_limit_s == 5.0
    assert judge_spec(_problem(time_limit_s=40.0), time_limit_scale=2.0).time_limit_s == 60.0
    assert len(judge_spec(_problem(), max_tests=1).tests) == 1


def test_requests_that_cannot_be_built_name_the_problem() -> None:
    with pytest.raises(JudgeSpecError, match=r"problem p1: .*checker"):
        judge_spec(_problem(compare_mode="checker"))  # no checker source
    with pytest.raises(JudgeSpecError, match=r"problem p1: .*compare_mode"):
        judge_spec(_problem(compare_mode="fuzzy"))
    row = {k: v for k, v in _problem().model_dump().items() if k != "float_abs_tol"}
    with pytest.raises(JudgeSpecError, match=r"problem p1: no 'float_abs_tol' column"):
        judge_spec(row)
    fn = _problem(test_mode="function", tests=[{"code": "assert f(1) == 2"}])
    with pytest.raises(JudgeSpecError, match=r"problem p1: cannot build a cpp judge request"):
        judge_spec(fn).request("cpp", "int f(int x){return 2*x;}")


def test_verdict_columns_are_the_verdict_fields_with_the_engine_stamp() -> None:
    result = JudgeResult(
        verdict="WA",
        passed=1,
        total=2,
        pass_rate=0.5,
        tests=[
            TestResult(verdict="AC", time_s=0.25, memory_kb=900),
            TestResult(verdict="WA", time_s=0.5, memory_kb=1000, stderr_tail="warn"),
        ],
        image="sha256:abc",
        cache_key="k",
    )
    spec = judge_spec(_problem(memory_limit_mb=2048, time_limit_s=3.0), time_limit_scale=2.0)
    cols = verdict_columns(result, spec, "docker:sha256:abc")
    assert list(cols) == [f.name for f in VERDICT_FIELDS]
    assert cols == {
        "verdict": "WA",
        "passed": 1,
        "total": 2,
        "pass_rate": 0.5,
        "test_verdicts": ["AC", "WA"],
        "test_times_s": [0.25, 0.5],
        "test_memory_kb": [900, 1000],
        "compile_output": None,
        "sandbox_image": "sha256:abc",
        "time_limit_s": 6.0,
        "memory_limit_mb": 1024,
        "judge_cache_key": "k",
        "judge_stamp": "docker:sha256:abc",
    }
    assert first_failure(result) == (1, "warn")
    se = JudgeResult(verdict="SE", passed=0, total=2, pass_rate=0.0, error="pool died")
    assert verdict_columns(se, spec, "s")["compile_output"] == "pool died"
    assert first_failure(se) == (None, "pool died")
    ok = JudgeResult(
        verdict="AC", passed=1, total=1, pass_rate=1.0, tests=[TestResult(verdict="AC")]
    )
    assert first_failure(ok) == (None, None)


# ---------------------------------------------------------------------- opening a judge
def test_sandbox_section_options_per_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALETHEIA_SANDBOX_URL", raising=False)
    monkeypatch.delenv("ALETHEIA_SANDBOX_TOKEN", raising=False)
    assert SandboxSection().engine_options() == {"pool_size": None, "image": None}
    docker = SandboxSection(pool_size=3, image="img:1", options={"max_attempts": 5})
    assert docker.engine_options() == {"pool_size": 3, "image": "img:1", "max_attempts": 5}
    assert SandboxSection(engine="process", pool_size=2).engine_options() == {"pool_size": 2}
    http = SandboxSection(engine="http", url="http://judge:8000")
    with pytest.raises(UserError, match="needs the servers' token: --token-file FILE"):
        http.engine_options()  # no token anywhere: said before any server is asked
    monkeypatch.setenv("ALETHEIA_SANDBOX_TOKEN", "s3cret")
    assert http.engine_options() == {"url": "http://judge:8000", "token": "s3cret"}
    assert "s3cret" not in http.model_dump_json()  # a token never sits in a config
    monkeypatch.setenv("ALETHEIA_SANDBOX_URL", "http://other:9")
    assert SandboxSection(engine="http").engine_options()["url"] == "http://other:9"


def test_sandbox_section_refuses_fields_of_another_engine(monkeypatch) -> None:
    with pytest.raises(ValueError, match="only the docker engine runs an image"):
        SandboxSection(engine="process", image="img:1")
    with pytest.raises(ValueError, match="only the http engine has a server"):
        SandboxSection(url="http://judge:8000")
    with pytest.raises(ValueError, match="only the docker engine runs an image"):
        SandboxSection(image="img:1").with_engine("http")
    monkeypatch.delenv("ALETHEIA_SANDBOX_URL", raising=False)
    with pytest.raises(
        UserError, match=r"--url URL, sandbox.url in the config, or \$ALETHEIA_SANDBOX_URL"
    ):
        SandboxSection(engine="http").engine_options()
    section = SandboxSection(pool_size=2)
    assert section.with_engine(None) is section
    moved = section.with_engine("process")
    assert (moved.engine, moved.pool_size) == ("process", 2)


def test_an_engine_that_cannot_run_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine open_engine refuses: a JudgeUnavailable that the CLI prints as one line and
    that code catching the sandbox's own EngineUnavailable still catches."""
    bogus = SandboxSection.model_construct(engine="nonesuch", options={})
    with pytest.raises(JudgeUnavailable) as err:
        open_judge(bogus)
    assert isinstance(err.value, EngineUnavailable) and isinstance(err.value, UserError)
    line = one_line(err.value)
    assert line is not None and "\n" not in line
    assert "unknown sandbox engine 'nonesuch'" in line and "docker, process, http" in line


def test_the_judge_command_without_an_http_server_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from aletheia.cli import main
    from pipeline.common.parquet import write_parquet
    from pipeline.sampling.references import reference_candidates
    from schemas.candidate import CANDIDATE_SCHEMA
    from schemas.tables import models_to_table
    from tests.sampling.problems_fixture import sum_problem

    monkeypatch.delenv("ALETHEIA_SANDBOX_URL", raising=False)
    problem = sum_problem()
    cands, probs = tmp_path / "c.parquet", tmp_path / "p.parquet"
    write_parquet(
        models_to_table(reference_candidates([problem]), CANDIDATE_SCHEMA), cands, CANDIDATE_SCHEMA
    )
    write_parquet(models_to_table([problem], PROBLEM_SCHEMA), probs, PROBLEM_SCHEMA)
    args = ["judge", "--candidates", str(cands), "--problems", str(probs)]
    with pytest.raises(SystemExit) as code:
        main([*args, "--out", str(tmp_path / "j.parquet"), "--engine", "http"])
    assert code.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: sandbox engine http needs the server's address")
    assert not (tmp_path / "j.parquet").exists()


# ---------------------------------------------------------------------- Train-Questions v1
def _v1_file(root: Path, problems: list[Problem]) -> None:
    """A Train-Questions file as schema version 1 wrote it: no comparison columns."""
    rows = [train_question_row(p.model_dump(mode="python"), p.statement) for p in problems]
    v1 = [
        f for f in TRAIN_QUESTIONS_SCHEMA if f.name not in JUDGE_FIELDS[4:]
    ]  # compare_mode, tolerances, checker
    table = pa.Table.from_pylist(rows, schema=pa.schema(v1))
    (root / "train_questions").mkdir(parents=True)
    pq.write_table(table, root / "train_questions" / "train-00000-of-00001.parquet")


def test_a_version_1_file_of_function_problems_reads_with_the_defaults(tmp_path: Path) -> None:
    fn = _problem(test_mode="function", tests=[{"code": "assert f(1) == 2"}], entry_point="f")
    _v1_file(tmp_path, [fn])
    [row] = read_config(tmp_path, "train_questions").to_pylist()
    assert (row["compare_mode"], row["float_abs_tol"], row["checker"]) == ("tokens", None, None)
    assert row["tests"][0]["code"] == "assert f(1) == 2"


def test_a_version_1_file_with_stdio_problems_is_refused_naming_the_row(tmp_path: Path) -> None:
    fn = _problem(problem_id="fn", test_mode="function", tests=[{"code": "assert f(1) == 2"}])
    _v1_file(tmp_path, [fn, _problem(problem_id="stdio-one")])
    with pytest.raises(SchemaError) as err:
        read_config(tmp_path, "train_questions")
    message = str(err.value)
    assert "schema version 1" in message and "row 1 (problem_id=stdio-one)" in message
    assert "rebuild" in message and "compare_mode" in message


def test_rlvr_refuses_a_problem_it_cannot_judge_before_training(tmp_path: Path) -> None:
    from pipeline.train.rlvr import question_rows

    row = train_question_row(_problem(problem_id="bad").model_dump(mode="python"), "q")
    row["compare_mode"] = "checker"  # and no checker
    table = pa.Table.from_pylist([row], schema=TRAIN_QUESTIONS_SCHEMA)
    with pytest.raises(ValueError, match=r"train_questions row 0 \(problem_id=bad\).*checker"):
        question_rows(table, "python")


def test_preflight_checks_the_configured_engine_not_docker(monkeypatch) -> None:
    """`build-train --engine http` on a machine without a server address: one finding that says
    what to set, and no Docker check (the http engine needs no Docker here)."""
    from pipeline.config import load_run_config
    from pipeline.preflight import preflight

    monkeypatch.delenv("ALETHEIA_SANDBOX_URL", raising=False)
    cfg = load_run_config("configs/demo.yaml")
    http = cfg.model_copy(update={"sandbox": cfg.sandbox.with_engine("http")})
    findings = preflight(http).findings
    assert [f.check for f in findings if "ALETHEIA_SANDBOX_URL" in f.message] == ["config"]
    assert not [f for f in findings if f.check == "docker"]


def test_train_takes_an_engine_only_for_rlvr(capsys: pytest.CaptureFixture[str]) -> None:
    from aletheia.cli import main

    with pytest.raises(SystemExit) as code:
        main(["train", "--config", "configs/train/demo-dpo.yaml", "--engine", "process"])
    assert code.value.code == 2
    assert "--engine judges RLVR rewards; method dpo judges no program" in capsys.readouterr().err


def test_the_rlvr_study_judges_every_step_with_its_sandbox(tmp_path: Path) -> None:
    """The study's `sandbox` reaches the rewards and the evaluations, under their own keys."""
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import eval_config, train_config

    study = StudyConfig.model_validate(
        {
            "out_dir": tmp_path,
            "sandbox": {"engine": "process", "pool_size": 3},
            "train": {"rlvr": {"sandbox": {"pool_size": 2, "batch_timeout_s": 60}}},
            "evaluation": {"samples": 1},
        }
    )
    rewards = train_config(study, "unit_test", "grpo", "m", tmp_path).rlvr.sandbox
    assert (rewards.engine, rewards.pool_size, rewards.batch_timeout_s) == ("process", 2, 60)
    evaluation = eval_config(study, "m", "base").sandbox
    assert (evaluation.engine, evaluation.pool_size) == ("process", 3)
    moved = study.sandbox.with_engine("docker")
    assert (moved.engine, moved.pool_size) == ("docker", 3)


def test_the_http_token_comes_from_a_file_never_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--token-file / sandbox.token_file: the file's first line; the config keeps the path."""
    monkeypatch.delenv("ALETHEIA_SANDBOX_TOKEN", raising=False)
    token = tmp_path / "token"
    token.write_text("from-a-file\nignored\n")
    base = SandboxSection(pool_size=2)
    http = base.overridden(None, ["http://a:1", "http://b:2"], token)
    assert http.engine == "http" and http.url == ["http://a:1", "http://b:2"]
    assert http.engine_options()["token"] == "from-a-file"
    assert "from-a-file" not in http.model_dump_json()
    assert base.overridden(None, None, None) is base
    with pytest.raises(ValueError, match="sandbox.token_file: only the http engine"):
        SandboxSection(token_file=str(token))
    with pytest.raises(UserError, match="sandbox token file .*missing"):
        SandboxSection(
            engine="http", url="http://a:1", token_file=str(tmp_path / "missing")
        ).token()
