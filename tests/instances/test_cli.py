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


def _inputs(tmp_path: Path, n: int = 4_000, problems: int = 80, seed: int = 9) -> list[str]:
    """Synthetic judged candidates, problems and splits: `assemble`'s input flags."""
    judged = synthetic_judged(n, n_problems=problems, seed=seed)
    table, assignments = synthetic_problems(problems, seed=seed)
    write_parquet(judged.to_arrow(), tmp_path / "judged.parquet", JUDGED_CANDIDATE_SCHEMA)
    write_parquet(table.to_arrow(), tmp_path / "problems.parquet", PROBLEM_SCHEMA)
    write_parquet(
        assignments.to_arrow(), tmp_path / "splits" / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA
    )
    return [
        "assemble",
        "-j",
        str(tmp_path / "judged.parquet"),
        "-p",
        str(tmp_path / "problems.parquet"),
        "--splits",
        str(tmp_path / "splits"),
    ]


def test_assemble_command_writes_splits_and_stats(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("grouping: language\n")
    args = [
        *_inputs(tmp_path),
        "--out",
        str(tmp_path / "out"),
        "--stage-config",
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

    bad = CliRunner().invoke(_app(), [*args[:-4], "--stage-config", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2 and "error" in bad.output


def test_an_assembly_of_nothing_fails_with_the_reason(tmp_path: Path) -> None:
    """Settings that make no list from these candidates (a list of 5 needing 7 distinct
    incorrect pass rates): every split would be empty. That once wrote seven empty tables
    and exited 0, the only hint a `left out` count; now it writes nothing, exits 2, and
    says per split what was there and what a list needs."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "grouping: language\nmin_candidates: 5\nmax_candidates: 5\nspare_incorrect_rates: 3\n"
        "max_candidate_tokens: null\nmax_prompt_tokens: null\n"
    )
    args = [*_inputs(tmp_path, 400, 20, 1), "-o", str(tmp_path / "out"), "--stage-config", str(cfg)]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "every split is empty, nothing written: 312 of 400 judged rows eligible" in said
    assert "train: 164 weak candidates of train problems; 26 groups with a correct program" in said
    assert "0 with 7 incorrect pass rates in the easy band" in said
    assert "spare_incorrect_rates 3" in said and "aletheia assemble -c RUN_CONFIG" in said
    assert not (tmp_path / "out").exists()


def test_config_is_the_run_config_and_reads_the_builds_section(tmp_path: Path) -> None:
    """`-c` takes a run config and assembles with its `assemble:` section as the build
    resolves it (the run's seed and derived build id filled in): the same files as the
    ASSEMBLE stage run on that section. A section file given to -c, or a run config given
    to --stage-config, is told where it goes."""
    import yaml

    from aletheia.cli import app
    from pipeline.common.runner import run_stage
    from pipeline.config import resolve_run_config
    from pipeline.instances.stage import ASSEMBLE

    run = tmp_path / "run.yaml"
    section = {"grouping": "language", "max_candidate_tokens": None, "max_prompt_tokens": None}
    run.write_text(yaml.safe_dump({"name": "t", "seed": 3, "assemble": section}))
    args = _inputs(tmp_path)
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "cli"), "-c", str(run)])
    assert result.exit_code == 0, result.output
    build = resolve_run_config(run).assemble
    assert build.seed == 3 and build.build_id.startswith("b_")
    inputs = {
        "judged": tmp_path / "judged.parquet",
        "problems": tmp_path / "problems.parquet",
        "splits": [tmp_path / "splits" / "assignments.parquet"],
    }
    run_stage(ASSEMBLE, build, inputs, tmp_path / "stage")
    written = sorted(p.name for p in (tmp_path / "stage").glob("*.parquet"))
    assert "strong.test.parquet" in written
    for name in written:
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "stage" / name).read_bytes()

    alone = tmp_path / "alone.yaml"
    alone.write_text(yaml.safe_dump(section))
    wrong = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "x"), "-c", str(alone)])
    assert wrong.exit_code == 2
    assert f"holds the `assemble:` section alone; pass it as --stage-config {alone}" in " ".join(
        wrong.output.split()
    )
    wrong = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "x"), "--stage-config", str(run)])
    assert wrong.exit_code == 2
    assert (
        f"this is a run config (it has assemble, name), not the `assemble:` section alone; "
        f"pass it as --config {run} (-c)" in " ".join(wrong.output.split())
    )
    both = CliRunner().invoke(
        app, [*args, "-o", str(tmp_path / "x"), "-c", str(run), "--stage-config", str(alone)]
    )
    assert both.exit_code == 2 and "not both" in both.output


def test_commands_are_registered() -> None:
    names = {c.name for c in _app().registered_commands}
    assert names == {"assemble", "adversarial", "dpo"}


def test_adversarial_reads_the_adv_section_or_with_mixed_the_mixed_one() -> None:
    from pipeline.config import resolve_run_config
    from pipeline.instances.cli import COMMANDS

    [adversarial] = [c for c in COMMANDS if c.name == "adversarial"]
    assert adversarial.config is not None and adversarial.config.pick is not None
    run = resolve_run_config({"name": "t", "mixed": {"split": "mixed", "share": 0.5}})
    assert adversarial.config.pick(run, {"mixed": True}) is run.mixed
    assert adversarial.config.pick(run, {"mixed": False}) is run.adv
    assert run.mixed.share == 0.5 and run.adv.share == 1.0
