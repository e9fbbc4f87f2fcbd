"""Find the malformed lines of a JSON-lines file, so one bad line costs one row, not the source.

`datasets`' JSON reader fails a whole file on its first undecodable line. Ingest scans
each `.jsonl` file first: a line that is not a JSON object is reported (file, 1-based
line number, reason) for the quarantine, and the rest of the file is read from a copy
without those lines. A file with no bad line is read as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MalformedLine:
    file: str
    line: int  # 1-based, as an editor shows it
    reason: str
    raw: str

    @property
    def row_id(self) -> str:
        return f"{self.file}:{self.line}"


def _problem(text: str) -> str | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not valid JSON: {e.msg} (column {e.colno})"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    return None


def malformed_lines(path: Path) -> list[MalformedLine]:
    """Every non-blank line of `path` that is not a JSON object (undecodable bytes included)."""
    bad = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                reason: str | None = f"not UTF-8: {e.reason} at byte {e.start}"
                text = raw.decode("utf-8", errors="replace")
            else:
                reason = _problem(text) if text.strip() else None
            if reason:
                bad.append(MalformedLine(str(path), number, reason, text.rstrip("\r\n")))
    return bad


def copy_without(path: Path, lines: set[int], out: Path) -> Path:
    """`path` minus the given 1-based line numbers, written to `out`."""
    with open(path, "rb") as src, open(out, "wb") as dst:
        for number, raw in enumerate(src, start=1):
            if number not in lines:
                dst.write(raw)
    return out
