"""What every source adapter is: a name, the columns it needs, and row -> Problem fields."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import RowError


@dataclass
class AdapterContext:
    """Per-source state an adapter reports into (kept in the ingest report, never dropped)."""

    source: str
    config: IngestConfig
    split: str = "train"
    skipped_solutions: Counter[str] = field(default_factory=Counter)  # language -> count
    capped_solutions: Counter[str] = field(default_factory=Counter)  # over the per-language cap
    notes: Counter[str] = field(default_factory=Counter)  # e.g. "contest_date unparsed"


class Adapter:
    """Base class. Subclasses set `name`, `required_columns` and implement `convert`."""

    name: ClassVar[str]
    default_hub_id: ClassVar[str | None] = None
    default_split: ClassVar[str | None] = None  # when the spec names none (else IngestConfig.split)
    required_columns: ClassVar[tuple[str, ...]] = ()

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        """The id the source gives the row (default: split and position)."""
        return f"{ctx.split}/{index}"

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        """Problem fields (without problem_id / prompt_statement); raise RowError for a bad row."""
        raise NotImplementedError


# ---- small helpers the adapters share -------------------------------------------------


def parse_json_field(row: dict[str, Any], name: str) -> Any:
    raw = row.get(name)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        return raw  # already decoded (e.g. a jsonl that stores the object itself)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise RowError(name, f"undecodable JSON: {e.msg} at char {e.pos}") from e


def as_text(value: Any) -> str:
    """A test input/output as text: lists of lines are joined, numbers stringified."""
    if isinstance(value, list):
        return "\n".join(as_text(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value)


def parse_date(value: Any, ctx: AdapterContext, field_name: str) -> dt.date | None:
    """ISO dates/datetimes, unix seconds, or datetime objects; unparseable -> None (counted)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (int, float)):
        return dt.datetime.fromtimestamp(float(value), tz=dt.UTC).date()
    text = str(value).strip()
    m = re.match(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if m:
        try:
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            pass
    ctx.notes[f"{field_name} unparsed (set to null)"] += 1
    return None


_UNIT_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1.0, "sec": 1.0, "second": 1.0}
_UNIT_MB = {
    "kb": 1 / 1024,
    "kilobyte": 1 / 1024,
    "mb": 1.0,
    "megabyte": 1.0,
    "m": 1.0,
    "gb": 1024.0,
    "gigabyte": 1024.0,
    "g": 1024.0,
}


def parse_quantity(
    value: Any, units: dict[str, float], default_unit: float, name: str
) -> float | None:
    """'2 seconds' / '1.5 s' / '256 megabytes' / 2 -> a number in the target unit; None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value) * default_unit
    m = re.match(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)", str(value))
    if not m:
        raise RowError(name, f"undecodable limit {value!r}")
    unit = m[2].lower().rstrip("s") if m[2].lower() not in ("s", "ms") else m[2].lower()
    if unit and unit not in units:
        raise RowError(name, f"unknown unit in limit {value!r}")
    return float(m[1]) * (units[unit] if unit else default_unit)


def parse_time_limit(value: Any, name: str = "time_limit") -> float | None:
    return parse_quantity(value, _UNIT_SECONDS, 1.0, name)


def parse_memory_limit_mb(value: Any, name: str = "memory_limit") -> float | None:
    return parse_quantity(value, _UNIT_MB, 1.0, name)


def cap_solutions(solutions: list[dict[str, Any]], ctx: AdapterContext) -> list[dict[str, Any]]:
    """Keep the first `max_solutions_per_language` per (language, correct); count the rest."""
    cap = ctx.config.max_solutions_per_language
    if cap is None:
        return solutions
    seen: Counter[tuple[str, bool]] = Counter()
    kept = []
    for s in solutions:
        key = (s["language"], s["correct"])
        seen[key] += 1
        if seen[key] <= cap:
            kept.append(s)
        else:
            ctx.capped_solutions[s["language"]] += 1
    return kept


def require_text(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RowError(name, f"expected text, got {type(value).__name__}")
    return value
