"""The generated stage commands (pipeline/common/stage_cli.py): a toy stage's command takes
its fields as flags with the fields' help, defaults and bounds, lays its settings (a run
config's section, `-c`, or a file of that section alone) under the flags the user set, and
turns a user mistake into one `error:` line; every generated `aletheia` command names
inputs its stage in the build graph has."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import typer.rich_utils
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from pipeline.common.stage_cli import (
    PROBLEMS,
    ConfigFile,
    FieldOption,
    Given,
    RunConfigReader,
    StageCommand,
    add_stage_command,
)
from pipeline.errors import read_mapping


class ToyCall(BaseModel):
    rounds: int = Field(3, ge=1, description="How many rounds the toy stage plays.")
    label: str = Field("toy", description="What the toy stage calls its output.")
    ratio: float = Field(0.5, gt=0, description="A strict bound the model checks.")


class RunLike(BaseModel):
    """A run config of the toy's: a name and its section."""

    name: str
    toy: ToyCall


def _toy_app(seen: list[Given]) -> typer.Typer:
    def run(given: Given) -> None:
        seen.append(given)
        call = given.config()
        if call.label == "boom":
            raise ValueError("the toy stage refuses label boom")
        typer.echo(f"{call.rounds} {call.label} {call.ratio} -> {given.paths['out']}")

    app = typer.Typer()
    add_stage_command(
        app,
        StageCommand(
            name="toy",
            help="A toy stage.",
            inputs={"problems": PROBLEMS},
            config=ConfigFile(ToyCall, "toy YAML", section="toy"),
            fields=(FieldOption(ToyCall, "rounds"), FieldOption(ToyCall, "label"),
                    FieldOption(ToyCall, "ratio")),
            force=True,
            run=run,
            errors=(ValueError,),
        ),
    )  # fmt: skip

    @app.command()
    def other() -> None:
        """A second command, so `toy` is a subcommand."""

    return app


def test_a_toy_stage_command_from_its_call_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Given] = []
    app = _toy_app(seen)
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 2000)  # one line per option
    page = CliRunner().invoke(app, ["toy", "--help"]).output
    assert "How many rounds the toy stage plays." in page and "[x>=1]" in page
    assert "-p" in page and "-o" in page and "-c" in page and "--force" in page

    ok = CliRunner().invoke(app, ["toy", "-p", "p.parquet", "-o", "out", "--rounds", "5"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.split() == ["5", "toy", "0.5", "->", "out"]
    assert seen[-1].paths == {"problems": Path("p.parquet"), "out": Path("out")}

    config = tmp_path / "toy.yaml"
    config.write_text("rounds: 7\nlabel: from-file\n")
    args = ["toy", "-p", "p", "-o", "o", "--stage-config", str(config), "--label", "flag"]
    over = CliRunner().invoke(app, args)
    assert over.output.split()[:3] == ["7", "flag", "0.5"], over.output  # unset flags: the file's

    # -c is a run config: its `toy:` section, read by the reader the app shell hands in
    run = tmp_path / "run.yaml"
    run.write_text("name: r\ntoy: {rounds: 9}\n")
    monkeypatch.setattr(RunConfigReader, "read", staticmethod(lambda p: RunLike(**read_mapping(p))))
    by_run = CliRunner().invoke(app, ["toy", "-p", "p", "-o", "o", "-c", str(run)])
    assert by_run.output.split()[:3] == ["9", "toy", "0.5"], by_run.output

    below = CliRunner().invoke(app, ["toy", "-p", "p", "-o", "o", "--rounds", "0"])
    assert below.exit_code == 2 and "greater than or equal to 1" in below.output

    boom = CliRunner().invoke(app, ["toy", "-p", "p", "-o", "o", "--label", "boom"])
    assert boom.exit_code == 2 and "error: the toy stage refuses label boom" in boom.output


def test_a_strict_bound_is_the_models_one_line() -> None:
    app = _toy_app([])
    r = CliRunner().invoke(app, ["toy", "-p", "p", "-o", "o", "--ratio", "0"])
    assert r.exit_code == 2 and r.output.startswith("error: ") and "ratio" in r.output


def _generated() -> list[StageCommand]:
    from pipeline.instances.cli import COMMANDS
    from pipeline.judge.cli import JUDGE_COMMAND
    from pipeline.models.cli import FIT_POLICY_COMMAND
    from pipeline.problems.cli import INGEST_COMMAND
    from pipeline.problems.reference_cli import CHECK_REFERENCES_COMMAND
    from pipeline.sampling.cli import SAMPLE_COMMAND
    from pipeline.splits.cli import SPLIT_COMMAND

    return [*COMMANDS, JUDGE_COMMAND, FIT_POLICY_COMMAND, INGEST_COMMAND,
            CHECK_REFERENCES_COMMAND, SAMPLE_COMMAND, SPLIT_COMMAND]  # fmt: skip


@pytest.mark.parametrize("command", _generated(), ids=lambda c: c.name)
def test_each_generated_command_reads_its_stages_inputs(command: StageCommand) -> None:
    from pipeline.common.stage_cli import resolve_model
    from pipeline.stages import STAGES

    if command.stage is None:
        return  # a check outside the graph (check-references, the fit on a problems file)
    stage = STAGES[command.stage]
    assert set(command.inputs) <= set(stage.inputs), (command.name, stage.inputs)
    if command.config is not None:
        model = resolve_model(command.config.model)
        call_models = {stage.config, *(f.annotation for f in stage.config.model_fields.values())}
        assert model in call_models, f"{command.name}: --config is no part of {stage.config}"
