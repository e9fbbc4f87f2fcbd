"""`aletheia assemble` on synthetic judged candidates: files, stats JSON, summary, errors."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.instances.cli import register
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import (
    INSTANCE_SCHEMA,
    JUDGED_CANDIDATE_SCHEMA,
    PROBLEM_SCHEMA,
    SPLIT_ASSIGNMENT_SCHEMA,
)


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_assemble_command_writes_splits_and_stats(tmp_path: Path) -> None:
    judged = synthetic_judged(4_000, n_problems=80, seed=9)
    problems, assignments = synthetic_problems(80, seed=9)
    write_parquet(judged.to_arrow(), tmp_path / "judged.parquet", JUDGED_CANDIDATE_SCHEMA)
    write_parquet(problems.to_arrow(), tmp_path / "problems.parquet", PROBLEM_SCHEMA)
    write_parquet(
        assignments.to_arrow(), tmp_path / "splits" / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA
    )
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("grouping: language\n")
    args = [
        "assemble",
        "-j",
        str(tmp_path / "judged.parquet"),
        "-p",
        str(tmp_path / "problems.parquet"),
        "--splits",
        str(tmp_path / "splits"),
        "--out",
        str(tmp_path / "out"),
        "--config",
        str(cfg),
        "--seed",
        "4",
    ]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    for name in ("train", "heldout", "strong", "hard"):
        table = read_parquet(tmp_path / "out" / f"{name}.parquet", INSTANCE_SCHEMA)
        assert table.num_rows == stats["splits"][name]["rows"] > 0
        assert name in result.output
    assert (tmp_path / "out" / "quarantine.parquet").exists()

    bad = CliRunner().invoke(_app(), [*args[:-4], "--config", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2 and "error" in bad.output


def test_commands_are_registered() -> None:
    names = {c.name for c in _app().registered_commands}
    assert names == {"assemble", "adversarial", "dpo"}
