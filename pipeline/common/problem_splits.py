"""`--split`, checked against a problems file's `source_split` column alone.

`fit-policy` and `evaluate-policy` choose their problems by source split. They said that a
split was absent only after loading torch and every problem (5-6 s), and the bundled
problems, which carry no split, got "(it has None)". This reads the one column, before
anything heavy loads, and says what the file has and what to give instead.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.errors import UserError, did_you_mean, near_path


def check_split(problems: Path, split: str | None, option: str = "--split") -> None:
    """Raise a one-line UserError unless `problems` exists and some problem has source
    split `split` (None or "all": every problem, so only the file's column is checked)."""
    if not problems.is_file():
        raise UserError(f"--problems: no such file {problems}{near_path(problems)}")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:  # ParquetFile, not read_table: that one loads pyarrow.dataset and pandas (0.8 s)
        file = pq.ParquetFile(problems)
    except pa.ArrowInvalid:
        file = None
    if file is None or "source_split" not in file.schema_arrow.names:
        raise UserError(
            f"--problems {problems}: not a problems Parquet file (no source_split column); "
            "write one with `aletheia problems ingest`"
        )
    if split is None or split == "all":
        return
    values = file.read(columns=["source_split"]).column(0).to_pylist()
    if split in values:
        return
    have = sorted({v for v in values if v is not None})
    if have:
        held = f"it has {', '.join(have)}{did_you_mean(split, have)}"
        instead = f"{option} all uses every problem"
    else:  # bundled and JSON-lines problems carry no source split: split them by problem
        held = f"none of its {len(values)} problems has a source split, as with bundled problems"
        instead = (
            f"{option} all uses every problem, or `aletheia problems split -p {problems} -o DIR` "
            f"writes DIR/train.parquet and DIR/heldout.parquet to give with {option} all"
        )
    raise UserError(
        f"{option} {split}: no problem in {problems} has source_split {split!r} ({held}); {instead}"
    )
