"""`aletheia sample` and `aletheia judge` through typer, on the tiny model and the real sandbox."""

from __future__ import annotations

import pytest
import typer
import yaml
from typer.testing import CliRunner

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.judge.cli import register as register_judge
from pipeline.sampling.cli import register
from schemas.problem import PROBLEM_SCHEMA
from schemas.tables import models_to_table
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA
from tests.sampling.problems_fixture import abs_problem, sum_problem


@pytest.fixture()
def app():
    a = typer.Typer()
    register(a)
    register_judge(a)
    return a


@pytest.mark.docker
def test_sample_then_judge(app, tiny_model_dir, tmp_path):
    problems = tmp_path / "problems.parquet"
    write_parquet(
        models_to_table([sum_problem(), abs_problem()], PROBLEM_SCHEMA), problems, PROBLEM_SCHEMA
    )
    cfg = {
        "progress": False,
        "sources": [
            {
                "kind": "model",
                "name": "tiny",
                "model": str(tiny_model_dir),
                "tier": "weak",
                "backend": {"type": "transformers", "device": "cpu"},
                "languages": ["python"],
                "samples_per_problem": 2,
                "max_tokens": 8,
            },
            {"kind": "reference"},
            {"kind": "mutant", "per_candidate": 1},
        ],
    }
    (tmp_path / "pool.yaml").write_text(yaml.safe_dump(cfg))
    runner = CliRunner(env={"COLUMNS": "250"})
    res = runner.invoke(
        app,
        [
            "sample",
            "--pool",
            str(tmp_path / "pool.yaml"),
            "--problems",
            str(problems),
            "--out",
            str(tmp_path / "s"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "extraction failures" in res.output and "tiny" in res.output
    assert "mutant:" in res.output and "reference:test" in res.output
    res = runner.invoke(
        app,
        [
            "judge",
            "--candidates",
            str(tmp_path / "s" / "candidates.parquet"),
            "--problems",
            str(problems),
            "--out",
            str(tmp_path / "judged.parquet"),
            "--pool-size",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "AC:" in res.output and "pass rates" in res.output and "not judged" in res.output
    judged = read_parquet(tmp_path / "judged.parquet", JUDGED_CANDIDATE_SCHEMA).to_pylist()
    assert any(r["origin"] == "mutant" for r in judged) and all(r["verdict"] for r in judged)


def test_bad_config_is_a_clear_error(app, tmp_path):
    (tmp_path / "bad.yaml").write_text("sources:\n  - kind: model\n    name: x\n")
    res = CliRunner().invoke(
        app,
        [
            "sample",
            "--config",
            str(tmp_path / "bad.yaml"),
            "--problems",
            "p",
            "--out",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 2 and "error" in res.output


def test_config_is_the_run_config_and_the_pool_file_has_its_own_flag(tmp_path):
    """`sample -c` took a pool file, and a run config there read `name: unknown key; known:
    sources, progress [and 17 more: sources.0, ...]`. Now -c is the run config (its
    `sample:` section, as the build reads it) and the pool file is `--pool`; either given
    to the other's flag says so in one line."""
    from aletheia.cli import app as aletheia

    problems = tmp_path / "problems.parquet"
    write_parquet(
        models_to_table([sum_problem(), abs_problem()], PROBLEM_SCHEMA), problems, PROBLEM_SCHEMA
    )
    pool = {
        "progress": False,
        "sources": [{"kind": "reference"}, {"kind": "mutant", "per_candidate": 1}],
    }
    (tmp_path / "pool.yaml").write_text(yaml.safe_dump(pool))
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({"name": "t", "sample": pool}))
    runner = CliRunner(env={"COLUMNS": "250"})
    args = ["sample", "-p", str(problems)]
    by_run = runner.invoke(
        aletheia, [*args, "-o", str(tmp_path / "a"), "-c", str(tmp_path / "run.yaml")]
    )
    assert by_run.exit_code == 0, by_run.output
    by_pool = runner.invoke(
        aletheia, [*args, "-o", str(tmp_path / "b"), "--pool", str(tmp_path / "pool.yaml")]
    )
    assert by_pool.exit_code == 0, by_pool.output
    a = read_parquet(tmp_path / "a" / "candidates.parquet")
    assert a.num_rows > 0 and a.equals(read_parquet(tmp_path / "b" / "candidates.parquet"))

    swapped = runner.invoke(
        aletheia, [*args, "-o", str(tmp_path / "c"), "-c", str(tmp_path / "pool.yaml")]
    )
    said = " ".join(swapped.output.split())
    assert swapped.exit_code == 2 and "unknown key" not in said
    assert "holds the `sample:` section alone; pass it as --pool" in said
    swapped = runner.invoke(
        aletheia, [*args, "-o", str(tmp_path / "c"), "--pool", str(tmp_path / "run.yaml")]
    )
    assert swapped.exit_code == 2
    assert "this is a run config (it has name, sample)" in " ".join(swapped.output.split())
    neither = runner.invoke(aletheia, [*args, "-o", str(tmp_path / "c")])
    assert neither.exit_code == 2 and "--pool" in neither.output
