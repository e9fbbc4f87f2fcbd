"""Which split of an evaluation config is read and scored: `test` by default, `full` on
request (the reader, `evaluate(config={"split": ...})` and `aletheia evaluate --split`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.common.hub_folder import read_config
from pipeline.common.parquet import write_parquet
from pipeline.evaluate import evaluate
from pipeline.evaluate.responses import ResponsesError
from schemas import INSTANCE_SCHEMA


@pytest.fixture
def two_splits(tmp_path: Path, eval_dataset_dir: Path) -> Path:
    """Heldout as published: `test` = the fixture's rows, `full` = those plus one more row."""
    root = tmp_path / "data"
    shutil.copytree(eval_dataset_dir, root)
    test = read_config(root, "heldout").to_pylist()
    extra = test[0] | {"instance_id": "only-in-full", "prompt_id": "p-full"}
    full = pa.Table.from_pylist([*test, extra], schema=INSTANCE_SCHEMA)
    write_parquet(full, root / "heldout" / "full-00000-of-00001.parquet", INSTANCE_SCHEMA)
    return root


def _responses(path: Path, instance_id: str) -> Path:
    row = {"split": "heldout", "instance_id": instance_id, "sample": 0, "response": "\\boxed{A}"}
    path.write_text(json.dumps(row) + "\n")
    return path


def test_reader_takes_the_split(two_splits: Path) -> None:
    test = read_config(two_splits, "heldout")  # default: test
    assert read_config(two_splits, "heldout", split="test").num_rows == test.num_rows
    full = read_config(two_splits, "heldout", split="full")
    assert full.num_rows == test.num_rows + 1
    assert full.column("instance_id").to_pylist()[-1] == "only-in-full"
    assert read_config(two_splits, "train").num_rows > 0  # a training config: `train`
    with pytest.raises(ValueError, match=r"'train' has no split 'full'; its splits: \['train'\]"):
        read_config(two_splits, "train", split="full")
    with pytest.raises(FileNotFoundError, match=r"no 'full' split .* splits there: \['test'\]"):
        read_config(two_splits, "strong", split="full")


def test_evaluate_scores_the_test_split_unless_told(two_splits: Path, tmp_path: Path) -> None:
    resp = _responses(tmp_path / "r.jsonl", "only-in-full")
    with pytest.raises(ResponsesError, match="only-in-full"):
        evaluate(None, two_splits, tmp_path / "a", responses=resp)  # not a row of test
    report = evaluate(
        None, two_splits, tmp_path / "b", {"split": "full"}, responses=resp, allow_partial=True
    )
    assert report["config"]["split"] == "full"
    assert report["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0  # gold A


def test_cli_split_option(two_splits: Path, tmp_path: Path) -> None:
    resp = _responses(tmp_path / "r.jsonl", "only-in-full")
    args = ["evaluate", "--data", str(two_splits), "--responses", str(resp), "--allow-partial"]
    full = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "full"), "--split", "full"])
    assert full.exit_code == 0, full.output
    report = json.loads((tmp_path / "full" / "report.json").read_text())
    assert report["config"]["split"] == "full"
    default = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "test")])
    assert default.exit_code != 0  # the default split is test, which lacks the row
    assert "only-in-full" in str(default.exception) + default.output
