"""A folder output whose marker stays beside it (`Stage.marker_beside`): the folder holds
only what the stage wrote (the Hub folder ships every file in it), the marker lives in
`.<name>.stage/`, and reuse, rebuild and the atomic swap keep their rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.runner import marker_dir, run_stage
from pipeline.common.stage import MARKER, Stage
from tests.common.test_stage_runner import ToyConfig, doubling_stage, read_rows, write_rows


def beside(stage: Stage[ToyConfig]) -> Stage[ToyConfig]:
    return Stage(**{**stage.__dict__, "marker_beside": True})


@pytest.fixture
def rows_file(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "in" / "rows.parquet", [("a", 2), ("b", 4), ("c", 6)])


@pytest.mark.parametrize("atomic", [False, True])
def test_the_marker_stays_beside_the_folder(tmp_path: Path, rows_file: Path, atomic: bool):
    out = tmp_path / "model"
    calls: list[Any] = []
    first = run_stage(
        beside(doubling_stage(calls, atomic=atomic)), ToyConfig(), {"rows": rows_file}, out
    )
    assert not first.cached
    assert [p.name for p in out.iterdir()] == ["doubled.parquet"]  # no marker inside
    assert marker_dir(out, beside=True) == tmp_path / ".model.stage"
    marker = json.loads((tmp_path / ".model.stage" / MARKER).read_text())
    assert marker["stage"] == "double" and marker["stats"] == {"rows": 3, "odd": 0}
    assert calls[0].final_out == out and (calls[0].out != out) is atomic

    again = run_stage(
        beside(doubling_stage(calls, atomic=atomic)), ToyConfig(), {"rows": rows_file}, out
    )
    assert again.cached and len(calls) == 1
    (out / "doubled.parquet").unlink()  # a marker without its output vouches for nothing
    redone = run_stage(
        beside(doubling_stage(calls, atomic=atomic)), ToyConfig(), {"rows": rows_file}, out
    )
    assert not redone.cached and len(calls) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.stage", "in", "model"]


def test_a_failed_atomic_rebuild_keeps_the_old_folder_and_its_marker(
    tmp_path: Path, rows_file: Path
):
    out = tmp_path / "model"
    calls: list[Any] = []
    run_stage(beside(doubling_stage(calls, atomic=True)), ToyConfig(), {"rows": rows_file}, out)
    before = (out / "doubled.parquet").read_bytes()
    with pytest.raises(RuntimeError, match="killed mid-stage"):
        run_stage(
            beside(doubling_stage(calls, crash=True, atomic=True)),
            ToyConfig(factor=5),
            {"rows": rows_file},
            out,
        )
    assert (out / "doubled.parquet").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.stage", "in", "model"]
    # The old marker still vouches for the old folder; the new config rebuilds and swaps.
    stage = beside(doubling_stage(calls, atomic=True))
    assert run_stage(stage, ToyConfig(), {"rows": rows_file}, out).cached
    assert not run_stage(stage, ToyConfig(factor=5), {"rows": rows_file}, out).cached
    assert read_rows(out / "doubled.parquet")[0] == ("a", 10)
    assert [p.name for p in out.iterdir()] == ["doubled.parquet"]
