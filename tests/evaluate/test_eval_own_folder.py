"""A trained verifier's evaluation has a folder of its own, never the build's evaluation
after publish (out/demo/eval, the EVALUATE stage's folder with its marker): the demo's
training config, the `evaluate-verifier/demo` deployment and the flow's default pointed
there, and a report written into it would be taken for the build's (and redone over by the
stage)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.common.stage import MARKER
from pipeline.config import resolve_run_config
from pipeline.errors import UserError
from pipeline.evaluate.run import refuse_a_stage_folder

REPO = Path(__file__).resolve().parents[2]


def test_the_demos_verifier_evaluations_are_not_the_builds_folder() -> None:
    build_eval = resolve_run_config(REPO / "configs" / "demo.yaml").eval_dir
    assert build_eval == Path("out/demo/eval")
    deployments = yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"]
    [deployment] = [
        d
        for d in deployments
        if d["entrypoint"].endswith(":evaluate_verifier") and d["name"] == "demo"
    ]
    out = Path(deployment["parameters"]["out_dir"])
    from flows.train import evaluate_verifier

    default = Path(inspect.signature(evaluate_verifier.fn).parameters["out_dir"].default)
    for folder in (out, default):
        assert build_eval not in (folder, *folder.parents), folder
    # the training config's own advice: its evaluation goes beside its model
    config = (REPO / "configs" / "train" / "demo-dpo.yaml").read_text()
    advice = [line for line in config.splitlines() if "aletheia evaluate" in line]
    assert advice and all(f"--out {build_eval}" not in line for line in advice), advice
    assert f"--out {out}" in advice[0]


def test_an_evaluation_into_a_stage_folder_is_refused(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    folder = tmp_path / "eval"
    folder.mkdir()
    marker = {"stage": "evaluate", "key": "x", "stats": {"build": "b_x"}}  # the build's
    (folder / MARKER).write_text(json.dumps(marker))
    with pytest.raises(UserError, match=r"build b_x's `evaluate` stage writes there"):
        refuse_a_stage_folder(folder)
    refuse_a_stage_folder(tmp_path / "elsewhere")  # a folder of its own: fine
    own = tmp_path / "own"  # an evaluation of its own, run before: its marker decides
    own.mkdir()
    (own / MARKER).write_text(json.dumps({"stage": "evaluate", "key": "y", "stats": {}}))
    refuse_a_stage_folder(own)
    (own / MARKER).write_text(json.dumps({"stage": "judge", "key": "y", "stats": {}}))
    with pytest.raises(UserError, match=r"the build's `judge` stage writes there"):
        refuse_a_stage_folder(own)

    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"split": "heldout", "row": 0, "response": "x"}) + "\n")
    args = ["evaluate", "--responses", str(responses), "--data", str(eval_dataset_dir)]
    r = CliRunner().invoke(app, [*args, "--out", str(folder)])
    assert r.exit_code != 0 and "stage writes there" in str(r.exception)
    assert sorted(p.name for p in folder.iterdir()) == [MARKER]  # nothing written over it


def test_config_is_the_run_config_and_its_evaluate_section(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    """`evaluate -c` took an EvalConfig file; it is the run config now, as on every other
    command, read for its `evaluate:` section (the settings alone: --stage-config)."""
    rows = [
        {"split": "heldout", "row": i, "response": "\\boxed{A}"} for i in range(9)
    ]  # every heldout row: no partial coverage
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run.yaml"
    section = {"model": "m", "invalid_flag_above": 0.9, "k": 2}
    run.write_text(yaml.safe_dump({"name": "t", "evaluate": section}))
    args = ["evaluate", "--responses", str(responses), "--data", str(eval_dataset_dir)]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a"), "-c", str(run)])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["config"]["invalid_flag_above"] == 0.9

    alone = tmp_path / "eval.yaml"
    alone.write_text(yaml.safe_dump({"invalid_flag_above": 0.8}))
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"), "--stage-config", str(alone)])
    assert r.exit_code == 0, r.output
    assert (
        json.loads((tmp_path / "b" / "report.json").read_text())["config"]["invalid_flag_above"]
        == 0.8
    )

    for flag, path, said in (
        ("-c", alone, "holds the `evaluate:` section alone; pass it as --stage-config"),
        ("--stage-config", run, "this is a run config (it has evaluate, name)"),
    ):
        r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x"), flag, str(path)])
        assert r.exit_code != 0 and said in " ".join(str(r.exception).split()), r.output
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"name": "t"}))
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x"), "-c", str(bare)])
    assert "has no `evaluate:` section" in str(r.exception)
