"""The responses file: verifier responses, one row per (instance, prompt, sample), and its reader.

`aletheia evaluate` writes every response it samples to `<out>/responses.jsonl` in this
format, and `aletheia evaluate --responses FILE` scores such a file without a model, so a
served model's outputs (or hand-written ones) are scored exactly as ours. A row
(JSON Lines, or a Parquet file with the same columns):

- `split`: the eval split (`heldout`, `strong`, `hard`, `adv`, ...);
- `row`: the instance's 0-based row number in that split, in the published order;
- `prompt_id`: the instance's `prompt_id` (checked against the row, so a file scored against
  the wrong dataset fails loudly);
- `pair`: null for the listwise prompt (all candidates); `[i, j]` (0-based, i < j) for the
  round-robin prompt that shows candidate i as A and candidate j as B (lists of 3+ only);
- `sample`: 0-based sample number; a listwise prompt's samples must be 0..K-1, and top-1
  reads sample 0; a pair prompt's verdict is its sample 0 (Aletheia samples pairs once);
- `response`: the raw response text (the Think prefill `<think>\\n` may be left out).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class ResponseRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str
    row: int = Field(ge=0)
    prompt_id: str
    pair: tuple[int, int] | None = None
    sample: int = Field(default=0, ge=0)
    response: str

    @field_validator("pair")
    @classmethod
    def _pair_order(cls, pair: tuple[int, int] | None) -> tuple[int, int] | None:
        if pair is not None and not 0 <= pair[0] < pair[1]:
            raise ValueError(f"{list(pair)} needs 0 <= i < j")
        return pair


class ResponsesError(ValueError):
    """A responses file that does not fit the dataset it is scored against."""


def read_responses(path: str | Path) -> list[ResponseRow]:
    """Read a .jsonl or .parquet responses file; a bad row is an error naming its line and field."""
    p = Path(path)
    if not p.is_file():
        raise ResponsesError(f"responses: {p} is not a file")
    if p.suffix == ".parquet":
        raw: Iterable[tuple[int, Any]] = enumerate(pq.read_table(p).to_pylist(), start=1)
        where = "row"
    else:
        raw = _json_lines(p)
        where = "line"
    rows = []
    for n, obj in raw:
        try:
            rows.append(ResponseRow.model_validate(obj))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"]) or "row"
            raise ResponsesError(f"{p} {where} {n}: field {loc}: {err['msg']}") from None
    if not rows:
        raise ResponsesError(f"responses: {p} has no rows")
    return rows


def _json_lines(p: Path) -> Iterable[tuple[int, Any]]:
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ResponsesError(f"{p} line {n}: not JSON ({exc.msg})") from None


def write_responses(rows: Iterable[ResponseRow], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return p


@dataclass
class InstanceResponses:
    """What a split's responses say about one instance."""

    listwise: list[str] = field(default_factory=list)  # by sample number
    pairs: dict[tuple[int, int], str] = field(default_factory=dict)  # sample 0 of each pair


def group_responses(
    rows: list[ResponseRow], instances: Mapping[str, list[dict[str, Any]]]
) -> dict[str, dict[int, InstanceResponses]]:
    """Responses by split and row, checked against the instances (split -> rows as dicts)."""
    listwise: dict[tuple[str, int], dict[int, str]] = defaultdict(dict)
    pairs: dict[tuple[str, int], dict[tuple[int, int], dict[int, str]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for n, r in enumerate(rows, start=1):
        where = f"responses row {n} (split={r.split}, row={r.row})"
        if r.split not in instances:
            raise ResponsesError(f"{where}: field split: not one of {sorted(instances)}")
        table = instances[r.split]
        if r.row >= len(table):
            raise ResponsesError(f"{where}: field row: split has {len(table)} rows")
        inst = table[r.row]
        if r.prompt_id != inst["prompt_id"]:
            raise ResponsesError(
                f"{where}: field prompt_id: {r.prompt_id!r}, the dataset row has {inst['prompt_id']!r}"
            )
        key = (r.split, r.row)
        if r.pair is None:
            slot = listwise[key]
        else:
            nc = inst["num_candidates"]
            if nc < 3 or r.pair[1] >= nc:
                raise ResponsesError(
                    f"{where}: field pair: {list(r.pair)} is not a round-robin pair of a "
                    f"{nc}-candidate list (pairs are asked for lists of 3+ only)"
                )
            slot = pairs[key][r.pair]
        if r.sample in slot:
            raise ResponsesError(f"{where}: field sample: sample {r.sample} given twice")
        slot[r.sample] = r.response
    out: dict[str, dict[int, InstanceResponses]] = defaultdict(dict)
    for (split, row), samples in listwise.items():
        if sorted(samples) != list(range(len(samples))):
            raise ResponsesError(
                f"split={split} row={row}: field sample: listwise samples {sorted(samples)} "
                "are not 0..K-1"
            )
        out[split].setdefault(row, InstanceResponses()).listwise = [
            samples[s] for s in range(len(samples))
        ]
    for (split, row), by_pair in pairs.items():
        inst_r = out[split].setdefault(row, InstanceResponses())
        for pair, samples in by_pair.items():
            if 0 not in samples:
                raise ResponsesError(
                    f"split={split} row={row} pair={list(pair)}: field sample: no sample 0"
                )
            inst_r.pairs[pair] = samples[0]
    return dict(out)
