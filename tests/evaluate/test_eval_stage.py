"""EVALUATE, the evaluation after publish as a stage (pipeline/evaluate/stage.py), on the tiny
model and a folder in the published layout, through the one runner: its marker is its cache.
The same model, split files and knobs execute nothing; other weights in the model folder, or
other rows in a scored split file, run it again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.common.hub_folder import split_files
from pipeline.common.parquet import write_parquet
from pipeline.common.runner import StageResult, run_stage
from pipeline.evaluate.stage import EVALUATE, EvaluateCall, evaluate_inputs
from pipeline.models.tiny import build_tiny_model
from tests.train.rowgen import write_dataset


def _call(model: Path, hub: Path) -> EvaluateCall:
    return EvaluateCall(
        model=str(model),
        hub_dir=hub,
        splits=["heldout"],
        k=1,
        limit=2,
        max_new_tokens=4,
        progress=False,
        backend={"type": "transformers", "device": "cpu", "batch_size": 4, "threads": 1},
    )


def _run(call: EvaluateCall, out: Path) -> StageResult:
    return run_stage(EVALUATE, call, evaluate_inputs(call), out)


def _copy_model(source: Path, into: Path) -> None:
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(source, into)


def test_the_marker_decides_what_the_evaluation_runs(tmp_path: Path, tiny_model_dir: Path) -> None:
    hub = write_dataset(tmp_path / "hub")
    model = tmp_path / "verifier"
    _copy_model(tiny_model_dir, model)
    out = tmp_path / "eval"
    report = out / "report.json"
    call = _call(model, hub)

    first = _run(call, out)
    assert not first.cached and first.outputs == {
        "report": str(report),
        "markdown": str(out / "report.md"),
    }
    marker = json.loads((out / "_stage.json").read_text())
    assert marker["stage"] == "evaluate" and marker["stats"]["splits"] == ["heldout"]
    written = report.stat().st_mtime_ns

    # The same model, split files and knobs: the marker matches and nothing runs.
    again = _run(call, out)
    assert again.cached and again.digest == first.digest
    assert report.stat().st_mtime_ns == written
    # `progress` changes no row: not keyed.
    assert _run(call.model_copy(update={"progress": True}), out).cached

    # Other weights at the same path: another model, evaluated again.
    _copy_model(build_tiny_model(tmp_path / "seed-1", seed=1), model)
    other = _run(call, out)
    assert not other.cached and report.stat().st_mtime_ns != written
    assert _run(call, out).cached

    # Other rows in the scored split file: evaluated again.
    (scored,) = split_files(hub, "heldout", "test")
    table = pq.read_table(scored)
    write_parquet(table.slice(1), scored, table.schema)
    assert not _run(call, out).cached
    assert _run(call, out).cached
