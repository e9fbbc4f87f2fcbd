"""The `aletheia` command mounts every stage's commands."""

from __future__ import annotations

from typer.testing import CliRunner

from pipeline.cli import app

EXPECTED = {
    "problems",
    "sample",
    "judge",
    "assemble",
    "adversarial",
    "dpo",
    "train",
    "evaluate",
    "publish",
    "build-train",
    "build-eval",
}


def test_every_stage_command_is_mounted() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    listed = {
        line.split()[1]
        for line in result.output.splitlines()
        if line.startswith("│ ") and len(line.split()) > 1
    }
    assert EXPECTED <= listed, f"missing commands: {EXPECTED - listed}"


def test_problems_subcommands() -> None:
    result = CliRunner().invoke(app, ["problems", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "ingest" in result.output and "split" in result.output
