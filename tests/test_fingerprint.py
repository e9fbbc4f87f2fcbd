"""Stage fingerprints: rows + a hash of the rows' content, the same for the same rows
however they were written, different for any changed value; measurements left out."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.common.fingerprint import LENGTH, fingerprints, table_fingerprint

ROWS = [
    {"candidate_id": "c1", "verdict": "AC", "pass_rate": 1.0, "test_times_s": [0.1, 0.2]},
    {"candidate_id": "c2", "verdict": "WA", "pass_rate": 0.5, "test_times_s": [0.3, 0.1]},
]


def _write(path: Path, rows: list[dict], **kw) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path, **kw)
    return path


def test_same_rows_same_fingerprint_whatever_the_writer(tmp_path: Path) -> None:
    a = table_fingerprint(_write(tmp_path / "a.parquet", ROWS))
    b = table_fingerprint(
        _write(tmp_path / "b.parquet", ROWS, compression="gzip", row_group_size=1)
    )
    assert a == b and a["rows"] == 2 and len(a["hash"]) == LENGTH


def test_any_changed_value_changes_it(tmp_path: Path) -> None:
    base = table_fingerprint(_write(tmp_path / "a.parquet", ROWS))
    changed = [dict(ROWS[0]), dict(ROWS[1], verdict="TLE")]
    assert table_fingerprint(_write(tmp_path / "b.parquet", changed))["hash"] != base["hash"]
    rate = [dict(ROWS[0]), dict(ROWS[1], pass_rate=0.5000001)]
    assert table_fingerprint(_write(tmp_path / "c.parquet", rate))["hash"] != base["hash"]
    reordered = [ROWS[1], ROWS[0]]  # row order is content (Parquet outputs are ordered)
    assert table_fingerprint(_write(tmp_path / "d.parquet", reordered))["hash"] != base["hash"]


def test_measured_columns_are_left_out(tmp_path: Path) -> None:
    base = table_fingerprint(_write(tmp_path / "a.parquet", ROWS))
    slower = [dict(r, test_times_s=[t * 3 for t in r["test_times_s"]]) for r in ROWS]
    assert table_fingerprint(_write(tmp_path / "b.parquet", slower)) == base


def test_fingerprints_of_a_stage_result_skip_missing_and_non_parquet(tmp_path: Path) -> None:
    p = _write(tmp_path / "judged.parquet", ROWS)
    (tmp_path / "fit.json").write_text("{}")
    got = fingerprints(
        {"judged": p, "fit": tmp_path / "fit.json", "quarantine": tmp_path / "none.parquet"}
    )
    assert list(got) == ["judged"] and got["judged"] == table_fingerprint(p)
