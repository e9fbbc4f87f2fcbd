"""SPLITS as a stage value run by the one runner (issue 24, B2): its declared outputs are
what it writes, and the ingest quarantine is a declared input (keyed and read as given,
not looked up beside the problems file)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.common.parquet import write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import MARKER
from pipeline.problems.stage import INGEST, IngestCall
from pipeline.splits.config import SplitConfig
from pipeline.splits.stage import (
    SPLITS,
    SplitCall,
    ingest_quarantine_path,
    split_inputs,
    split_problems,
)
from schemas.common import QUARANTINE_SCHEMA, Quarantine
from schemas.tables import models_to_table

STAGE_MODULE = Path(__file__).resolve().parents[2] / "pipeline" / "splits" / "stage.py"


def _quarantine(path: Path, row_id: str) -> Path:
    row = Quarantine(stage="ingest", source="aaa", source_row_id=row_id, reason="planted")
    return write_parquet(models_to_table([row], QUARANTINE_SCHEMA), path, QUARANTINE_SCHEMA)


def test_splits_outputs_match_what_run_wrote(planted_parquet: Path, tmp_path: Path) -> None:
    call = SplitCall(splits=SplitConfig(heldout_fraction=0.5), progress=False)
    out = tmp_path / "splits"
    inputs = split_inputs(planted_parquet, call.splits, out, ingest_quarantine=None)
    result = run_stage(SPLITS, call, inputs, out)

    declared = SPLITS.outputs(call, out)
    assert set(declared) == {
        "train",
        "heldout",
        "train_questions",
        "assignments",
        "quarantine",
        "report",
    }
    assert set(out.iterdir()) == set(declared.values()) | {out / MARKER}
    assert result.outputs == {k: str(v) for k, v in declared.items()}
    marker = json.loads((out / MARKER).read_text())
    assert marker["stage"] == "splits" and marker["stats"] == result.stats
    report = json.loads((out / "report.json").read_text())
    assert result.stats["counts"] == report["counts"]


def test_the_ingest_quarantine_is_a_declared_input(planted_parquet: Path, tmp_path: Path) -> None:
    # Kept away from the problems file: only the declared input can bring it in.
    q1 = _quarantine(tmp_path / "elsewhere" / "q1.parquet", "row-1")
    call = SplitCall(splits=SplitConfig(), progress=False)
    out = tmp_path / "splits"

    def run(quarantine: Path | None):
        inputs = split_inputs(planted_parquet, call.splits, out, ingest_quarantine=quarantine)
        return run_stage(SPLITS, call, inputs, out)

    assert not run(q1).cached
    rows = pq.read_table(out / "quarantine.parquet").to_pylist()
    assert [(r["stage"], r["source_row_id"]) for r in rows] == [("ingest", "row-1")]
    assert run(q1).cached
    _quarantine(q1, "row-2")  # same path, other rows: the key follows the content
    assert not run(q1).cached
    assert pq.read_table(out / "quarantine.parquet").column("source_row_id").to_pylist() == [
        "row-2"
    ]
    assert not run(None).cached  # no quarantine at all is another input too
    assert pq.read_table(out / "quarantine.parquet").num_rows == 0


def test_the_old_entry_point_finds_the_quarantine_ingest_wrote(
    planted_parquet: Path, tmp_path: Path
) -> None:
    beside = ingest_quarantine_path(planted_parquet)
    assert beside == INGEST.outputs(IngestCall(sources=["bundled"]), planted_parquet)["quarantine"]
    _quarantine(beside, "row-9")
    report = split_problems(planted_parquet, tmp_path / "s", SplitConfig(), show_progress=False)
    assert report["cached"] is False and report["counts"]["quarantine_rows"] == 1
    assert report == {**json.loads((tmp_path / "s" / "report.json").read_text()), "cached": False}
    again = split_problems(planted_parquet, tmp_path / "s", SplitConfig(), show_progress=True)
    assert again["cached"] is True and again["counts"] == report["counts"]


def test_the_split_stage_does_not_import_the_problems_stage() -> None:
    """splits -> problems.stage was a folder-level cycle; the quarantine now
    comes in as an input."""
    tree = ast.parse(STAGE_MODULE.read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert not {m for m in imported if m.startswith("pipeline.problems")}
