"""`--split` checked against a problems file before torch loads (pipeline/common/problem_splits.py).

fit-policy and evaluate-policy said a split was absent only after 5-6 s of imports, and
bundled problems, which carry no source split, were described as "(it has None)"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.problem_splits import check_split
from pipeline.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def _problems(path: Path, splits: list[str | None]) -> Path:
    pq.write_table(pa.table({"problem_id": [f"p{i}" for i in range(len(splits))],
                             "source_split": pa.array(splits, pa.string())}), path)  # fmt: skip
    return path


def test_a_present_split_and_all_pass(tmp_path: Path) -> None:
    path = _problems(tmp_path / "p.parquet", ["train", "test", "train"])
    check_split(path, "train")
    check_split(path, "all")
    check_split(path, None)


def test_an_absent_split_names_what_the_file_has_and_the_closest(tmp_path: Path) -> None:
    path = _problems(tmp_path / "p.parquet", ["train", "test", "validation"])
    with pytest.raises(UserError) as e:
        check_split(path, "tets")
    assert str(e.value) == (
        f"--split tets: no problem in {path} has source_split 'tets' (it has test, train, "
        "validation; did you mean 'test'?); --split all uses every problem"
    )


def test_problems_without_splits_say_so_not_none(tmp_path: Path) -> None:
    path = _problems(tmp_path / "p.parquet", [None, None])
    with pytest.raises(UserError) as e:
        check_split(path, "test")
    message = str(e.value)
    assert "None" not in message and "none of its 2 problems has a source split" in message
    assert message.endswith(
        f"--split all uses every problem, or `aletheia problems split -p {path} -o DIR` writes "
        "DIR/train.parquet and DIR/heldout.parquet to give with --split all"
    )


def test_a_missing_or_foreign_file(tmp_path: Path) -> None:
    _problems(tmp_path / "problems.parquet", ["train"])
    with pytest.raises(UserError, match=r"no such file .*did you mean .*problems\.parquet"):
        check_split(tmp_path / "problem.parquet", "train")
    pq.write_table(pa.table({"reason": ["x"]}), tmp_path / "quarantine.parquet")
    (tmp_path / "text.parquet").write_text("not parquet\n")
    for name in ("quarantine.parquet", "text.parquet"):
        with pytest.raises(UserError, match="not a problems Parquet file"):
            check_split(tmp_path / name, "all")


@pytest.mark.parametrize("command", ["fit-policy", "evaluate-policy"])
def test_the_commands_answer_before_torch_loads(tmp_path: Path, command: str) -> None:
    """The mistake is one `error:` line, and torch was never imported (what took 5-6 s)."""
    path = _problems(tmp_path / "p.parquet", [None, None])
    args = [command, "-p", str(path), "-o", str(tmp_path / "out")]
    if command == "evaluate-policy":  # a model folder that passes the path check
        (tmp_path / "model").mkdir()
        (tmp_path / "model" / "config.json").write_text("{}")
        args += ["--model", str(tmp_path / "model")]
    code = (
        "import sys\nfrom aletheia.cli import main\ntry:\n"
        f"    main({args!r})\nexcept SystemExit as e:\n    print('rc', e.code)\n"
        "print('torch' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPO, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    assert r.stdout.split() == ["rc", "2", "False"], r.stdout + r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("error: --split ") and "--split all uses every problem" in line
