"""scripts/repro_check.py compare on small published folders written here with pyarrow: the
real command line in a subprocess, its exit code and its report (no builds: those take
minutes; docs/repro.md has the control that runs them)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "repro_check.py"
TRAIN = "train/train-00000-of-00001.parquet"
HELDOUT_TEST = "heldout/test-00000-of-00001.parquet"
CARD = [f"card line {i}" for i in range(60)]


def _table(prefix: str, n: int) -> pa.Table:
    return pa.table(
        {
            "instance_id": [f"{prefix}-{i}" for i in range(n)],
            "build_id": ["b_0123456789ab"] * n,
            "label": ["A", "B", "C", "D"][:n],
            "pass_rate": [0.5, float("nan"), 1.0, 0.25][:n],
            "candidates": [[f"print({i})", "pass"] for i in range(n)],
        }
    )


def _hub(root: Path) -> Path:
    """A published folder like out/demo/hub: two configs, a card and a plot."""
    for rel, table in ((TRAIN, _table("t", 4)), (HELDOUT_TEST, _table("h", 3))):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / rel)
    (root / "README.md").write_text("\n".join(CARD) + "\n")
    (root / "assets").mkdir()
    (root / "assets" / "origins.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(64)))
    return root


def _compare(*args: str | Path) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "compare", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _hub(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    return a, b


def test_identical_folders_pass(pair: tuple[Path, Path]) -> None:
    rc, out = _compare(*pair)
    assert rc == 0, out
    assert f"= {TRAIN} 4 rows " in out
    assert f"= {HELDOUT_TEST} 3 rows " in out
    assert "= README.md " in out and "= assets/origins.png " in out
    assert "≠" not in out and "SAME" in out


def test_a_changed_cell_names_config_split_row_instance_and_column(
    pair: tuple[Path, Path],
) -> None:
    a, b = pair
    table = _table("h", 3)
    labels = table.column("label").to_pylist()
    labels[1] = "Z"
    pq.write_table(table.set_column(2, "label", pa.array(labels)), b / HELDOUT_TEST)
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert f"≠ {HELDOUT_TEST} 3/3 rows " in out
    assert "config heldout split test row 1 instance_id h-1, column label" in out
    assert 'A: "B"' in out and 'B: "Z"' in out
    assert f"= {TRAIN} 4 rows " in out  # the other config is untouched
    assert "DIFFERENT" in out


def test_a_changed_card_line_fails_with_a_diff(pair: tuple[Path, Path]) -> None:
    a, b = pair
    card = list(CARD)
    card[17] = "card line 17, edited"
    (b / "README.md").write_text("\n".join(card) + "\n")
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert "≠ README.md " in out
    assert "-card line 17\n" in out and "+card line 17, edited\n" in out
    assert "card line 30" not in out  # only the lines around the change


def test_same_rows_with_other_parquet_bytes_fail_as_such(pair: tuple[Path, Path]) -> None:
    a, b = pair
    pq.write_table(_table("t", 4), b / TRAIN, row_group_size=1, compression="zstd")
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert f"≠ {TRAIN} 4/4 rows " in out
    assert "same rows, other bytes" in out
    assert "first differing row" not in out


def test_a_changed_plot_fails_with_both_shas(pair: tuple[Path, Path]) -> None:
    a, b = pair
    (b / "assets" / "origins.png").write_bytes(b"\x89PNG\r\n\x1a\nother")
    rc, out = _compare(a, b)
    assert rc == 1, out
    line = next(x for x in out.splitlines() if x.startswith("≠ assets/origins.png"))
    assert len(line.split()) == 5  # ≠, path, sha A, vs, sha B
    assert line.split()[2] != line.split()[4]


def test_an_extra_or_missing_file_fails(pair: tuple[Path, Path]) -> None:
    a, b = pair
    (b / "assets" / "extra.png").write_bytes(b"png")
    (b / HELDOUT_TEST).unlink()
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert "only in B: assets/extra.png" in out
    assert f"only in A: {HELDOUT_TEST}" in out


def test_an_extra_row_is_the_first_difference(pair: tuple[Path, Path]) -> None:
    a, b = pair
    pq.write_table(_table("h", 4), b / HELDOUT_TEST)
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert "rows: 3 vs 4" in out
    assert "config heldout split test row 3, only in B" in out


def _build(root: Path, judged_times: list[float], candidate: str, mutant_seed: int = 0) -> Path:
    """A `build` output folder: hub/ beside work/ tables of four stages and build.json."""
    _hub(root / "hub")
    work = root / "work"
    (work / "splits").mkdir(parents=True)
    run_config = {"seed": 0, "sample": {"sources": [{"kind": "mutant", "seed": mutant_seed}]}}
    (work / "build.json").write_text(json.dumps({"run_config": run_config}))
    pq.write_table(pa.table({"problem_id": ["p1", "p2"]}), work / "problems.parquet")
    pq.write_table(pa.table({"problem_id": ["p1"]}), work / "splits" / "train.parquet")
    pq.write_table(pa.table({"candidate": ["x = 1", candidate]}), work / "candidates.parquet")
    judged = {"verdict": ["pass", "fail"], "test_times_s": [judged_times, judged_times]}
    pq.write_table(pa.table(judged), work / "judged.parquet")
    return root


def test_work_fingerprints_leave_out_times_and_name_the_first_stage_that_parts(
    tmp_path: Path,
) -> None:
    a = _build(tmp_path / "a", [0.01, 0.02], "y = 2")
    same = _build(tmp_path / "same", [0.03, 0.05], "y = 2")  # only test times differ
    other = _build(tmp_path / "other", [0.01, 0.02], "y = 3")
    rc, out = _compare(a, same, "--work")
    assert rc == 0, out
    assert "run configs: same" in out
    assert "= [judge] judged.parquet 2 rows " in out
    assert "every work table has the same rows" in out

    rc, out = _compare(a / "hub", other / "hub", "--work")  # out/demo/hub: work/ beside it
    assert rc == 0, out  # the exit code is the Hub's; the work report says where rows part
    lines = out.splitlines()
    order = [x.split()[1] for x in lines if x.startswith(("= [", "≠ ["))]
    assert order == ["[ingest]", "[splits]", "[sample]", "[judge]"]
    assert any(x.startswith("≠ [sample] candidates.parquet 2 rows ") for x in lines)
    assert "the builds part first at: sample (candidates.parquet)" in out


def test_run_configs_that_differ_are_named(tmp_path: Path) -> None:
    a = _build(tmp_path / "a", [0.01], "y = 2")
    b = _build(tmp_path / "b", [0.01], "y = 2", mutant_seed=1)
    rc, out = _compare(a, b)
    assert rc == 0, out  # same published bytes (this fake card does not embed the config)
    assert (
        "run configs differ (build.json; build_id and fit revisions are derived):\n    sample.sources.0.seed: 0 vs 1\n"
        in out
    )


def test_a_new_build_id_on_every_row_still_shows_what_else_differs(
    pair: tuple[Path, Path],
) -> None:
    a, b = pair
    train = _table("t", 4)
    train = train.set_column(1, "build_id", pa.array(["b_ffffffffffff"] * 4))
    pq.write_table(train, b / TRAIN)  # only the id differs
    test = _table("h", 3).set_column(1, "build_id", pa.array(["b_ffffffffffff"] * 3))
    test = test.set_column(3, "pass_rate", pa.array([0.5, float("nan"), 0.75]))
    pq.write_table(test, b / HELDOUT_TEST)  # the id and a pass rate in row 2
    rc, out = _compare(a, b)
    assert rc == 1, out
    assert "config train split train row 0 instance_id t-0, column build_id" in out
    assert "only build_id differs" in out
    assert (
        "build_id left out, first differing row: config heldout split test row 2 "
        "instance_id h-2, column pass_rate:\n      A: 1.0\n      B: 0.75" in out
    )


def test_build_refuses_an_unknown_revision_or_a_used_folder(tmp_path: Path) -> None:
    def build(rev: str, into: Path) -> tuple[int, str]:
        cmd = [sys.executable, str(SCRIPT), "build", "--rev", rev, "--into", str(into)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=REPO)
        return proc.returncode, " ".join((proc.stdout + proc.stderr).split())

    rc, out = build("no-such-rev-xyz", tmp_path / "new")
    assert rc == 2 and out.startswith("error: 'no-such-rev-xyz' is not a commit of"), out
    assert not (tmp_path / "new").exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "hub").mkdir()
    rc, out = build("HEAD", tmp_path / "used")
    assert rc == 2 and out.endswith("used is not empty: give a new folder"), out
