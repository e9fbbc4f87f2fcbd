"""INGEST as a stage value run by the one runner (issue 24, B2): its declared outputs are
what it writes, its marker sits in `.problems.stage/` beside the problems file, its key
follows the source files' content, and the old `ingest(...)` entry point is the same run."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.common.runner import run_stage
from pipeline.common.stage import MARKER
from pipeline.problems.stage import INGEST, IngestCall, ingest, ingest_inputs, output_paths


def _jsonl_source(path: Path, problems: int) -> str:
    """A jsonl source of `problems` bundled problems (a real source file on disk)."""
    ingest(["bundled"], path.parent / "bundled.parquet", show_progress=False)
    rows = pq.read_table(path.parent / "bundled.parquet").to_pylist()[:problems]
    path.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    return f"jsonl:{path}"


def test_ingest_outputs_match_what_run_wrote(tmp_path: Path) -> None:
    call = IngestCall(sources=["bundled"], progress=False)
    out = tmp_path / "work" / "problems.parquet"
    result = run_stage(INGEST, call, ingest_inputs(call), out)

    declared = INGEST.outputs(call, out)
    assert set(declared) == {"problems", "quarantine", "report"}
    files = {p for p in out.parent.iterdir() if p.is_file()}
    folders = [p.name for p in out.parent.iterdir() if p.is_dir()]
    assert files == set(declared.values())  # nothing undeclared, nothing missing
    assert folders == [".problems.stage"]  # the marker folder, named as before the runner
    assert result.outputs == {k: str(v) for k, v in declared.items()}
    assert result.stats["outputs"] == result.outputs
    marker = json.loads((out.parent / ".problems.stage" / MARKER).read_text())
    assert marker["stage"] == "ingest" and marker["stats"] == result.stats
    assert output_paths(out) == {**declared, "stage_dir": out.parent / ".problems.stage"}
    assert pq.read_table(out).num_rows == result.stats["problems"] > 0


def test_the_old_entry_point_is_the_stage_run(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "problems.parquet", tmp_path / "b" / "problems.parquet"
    old = ingest(["bundled"], a, show_progress=False)
    call = IngestCall(sources=["bundled"], progress=False)
    new = run_stage(INGEST, call, ingest_inputs(call), b)
    assert old["cached"] is False and not new.cached
    for name in ("problems", "quarantine"):
        assert output_paths(a)[name].read_bytes() == output_paths(b)[name].read_bytes()
    assert {k: v for k, v in old.items() if k not in ("cached", "outputs")} == {
        k: v for k, v in new.stats.items() if k != "outputs"
    }
    # the progress bars stay out of the key: drawing them reuses the marker
    assert ingest(["bundled"], a, show_progress=True)["cached"] is True


def test_a_changed_source_file_runs_again(tmp_path: Path) -> None:
    src = tmp_path / "mine.jsonl"
    spec = _jsonl_source(src, 3)
    out = tmp_path / "problems.parquet"
    assert ingest([spec], out, show_progress=False)["problems"] == 3
    assert ingest([spec], out, show_progress=False)["cached"] is True
    _jsonl_source(src, 2)  # same spec, other content
    again = ingest([spec], out, show_progress=False)
    assert again["cached"] is False and again["problems"] == 2
    assert pq.read_table(out).num_rows == 2


def test_bad_calls_are_named_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one --source"):
        ingest([], tmp_path / "p.parquet", show_progress=False)
    with pytest.raises(ValueError, match="needs a file name such as problems.parquet"):
        ingest(["bundled"], tmp_path / "problems", show_progress=False)
    assert list(tmp_path.iterdir()) == []
