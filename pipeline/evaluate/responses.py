"""The responses file: verifier responses, one row per (instance, prompt, sample), and its reader.

`aletheia evaluate` writes every response it samples to `<out>/responses.jsonl` in this
format, and `aletheia evaluate --responses FILE` scores such a file without a model, so a
served model's outputs (or hand-written ones) are scored exactly as ours. A row
(JSON Lines, or a Parquet file with the same columns):

- `split`: the eval split (`heldout`, `strong`, `hard`, `adv`, ...);
- `instance_id`: the instance's `instance_id` (the key: it names one row of the split, so a
  file scored against another build or another row order fails loudly or still fits);
- `pair`: null for the listwise prompt (all candidates); `[i, j]` (0-based, i < j) for the
  round-robin prompt that shows candidate i as A and candidate j as B (lists of 3+ only);
- `sample`: 0-based sample number; a listwise prompt's samples must be 0..K-1, and top-1
  reads sample 0; a pair prompt's verdict is its sample 0 (Aletheia samples pairs once);
- `response`: the raw response text (the Think prefill `<think>\\n` may be left out).

Files written before rows had an `instance_id` key them by `row` (the 0-based row number in
the published order) and `prompt_id`; they are still read. Since `prompt_id` became the
problem's id, shared by all its rows, it no longer checks the row number: where it is shared,
the row number alone decides the instance, and the report says so (`warnings`). A row may
give `row` and `prompt_id` beside `instance_id`; they must then agree with it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ResponseRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str
    instance_id: str | None = None  # the key
    row: int | None = Field(default=None, ge=0)  # old files: the key, with prompt_id
    prompt_id: str | None = None
    pair: tuple[int, int] | None = None
    sample: int = Field(default=0, ge=0)
    response: str

    @field_validator("pair")
    @classmethod
    def _pair_order(cls, pair: tuple[int, int] | None) -> tuple[int, int] | None:
        if pair is not None and not 0 <= pair[0] < pair[1]:
            raise ValueError(f"{list(pair)} needs 0 <= i < j")
        return pair

    @model_validator(mode="after")
    def _has_a_key(self) -> ResponseRow:
        if self.instance_id is None and self.row is None:
            raise ValueError("give instance_id (files written before it: row and prompt_id)")
        return self


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
            # keys left out rather than null: a row names its instance one way
            unset = {k for k in ("instance_id", "row", "prompt_id") if getattr(r, k) is None}
            f.write(json.dumps(r.model_dump(mode="json", exclude=unset), ensure_ascii=False) + "\n")
    return p


@dataclass
class InstanceResponses:
    """What a split's responses say about one instance."""

    listwise: list[str] = field(default_factory=list)  # by sample number
    pairs: dict[tuple[int, int], str] = field(default_factory=dict)  # sample 0 of each pair


class _SplitIndex:
    """Where each instance_id sits in a split, and how many rows share each prompt_id."""

    def __init__(self, split: str, table: list[dict[str, Any]]) -> None:
        self.split, self.table = split, table
        self.by_id: dict[str, int] = {}
        for i, inst in enumerate(table):
            iid = inst["instance_id"]
            if iid in self.by_id:
                raise ResponsesError(
                    f"dataset split {split}: rows {self.by_id[iid]} and {i} share instance_id "
                    f"{iid!r}, so it cannot key responses"
                )
            self.by_id[iid] = i
        self.prompt_rows = Counter(inst["prompt_id"] for inst in table)

    def locate(self, r: ResponseRow, where: str) -> tuple[int, bool]:
        """The row a response belongs to, and whether only an old (row, prompt_id) key placed it
        on a prompt_id that several rows share (the row number alone decided)."""
        if r.instance_id is not None:
            if r.instance_id not in self.by_id:
                raise ResponsesError(
                    f"{where}: field instance_id: {r.instance_id!r} is not a row of split "
                    f"{self.split} ({len(self.table)} rows)"
                )
            i = self.by_id[r.instance_id]
            if r.row is not None and r.row != i:
                raise ResponsesError(
                    f"{where}: field row: {r.row}, but instance_id {r.instance_id!r} is row {i}"
                )
        else:
            assert r.row is not None  # the model's validator
            if r.row >= len(self.table):
                raise ResponsesError(f"{where}: field row: split has {len(self.table)} rows")
            i = r.row
        inst = self.table[i]
        if r.prompt_id is not None and r.prompt_id != inst["prompt_id"]:
            raise ResponsesError(
                f"{where}: field prompt_id: {r.prompt_id!r}, the dataset row has {inst['prompt_id']!r}"
            )
        return i, r.instance_id is None and self.prompt_rows[inst["prompt_id"]] > 1


def group_responses(
    rows: list[ResponseRow],
    instances: Mapping[str, list[dict[str, Any]]],
    warnings: list[str] | None = None,
) -> dict[str, dict[int, InstanceResponses]]:
    """Responses by split and row, checked against the instances (split -> rows as dicts).

    Rows keyed the old way on a shared prompt_id add one line per split to `warnings`."""
    listwise: dict[tuple[str, int], dict[int, str]] = defaultdict(dict)
    pairs: dict[tuple[str, int], dict[tuple[int, int], dict[int, str]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    index: dict[str, _SplitIndex] = {}
    by_row_only: Counter[str] = Counter()
    for n, r in enumerate(rows, start=1):
        key_text = f"instance_id={r.instance_id}" if r.instance_id is not None else f"row={r.row}"
        where = f"responses row {n} (split={r.split}, {key_text})"
        if r.split not in instances:
            raise ResponsesError(f"{where}: field split: not one of {sorted(instances)}")
        if r.split not in index:
            index[r.split] = _SplitIndex(r.split, instances[r.split])
        row, ambiguous = index[r.split].locate(r, where)
        by_row_only[r.split] += ambiguous
        inst = instances[r.split][row]
        key = (r.split, row)
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
                f"split={split} row={row} (instance_id={instances[split][row]['instance_id']}): "
                f"field sample: listwise samples {sorted(samples)} "
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
                    f"split={split} row={row} (instance_id={instances[split][row]['instance_id']}) "
                    f"pair={list(pair)}: field sample: no sample 0"
                )
            inst_r.pairs[pair] = samples[0]
    for split, count in by_row_only.items():
        if count and warnings is not None:
            warnings.append(
                f"{split}: {count} responses rows are keyed by row number and prompt_id (a file "
                "written before instance_id), and their prompt_id is a problem id shared by "
                "several rows: only the row number says which instance they answer, so they "
                "score right only against a dataset in the row order they were written for; "
                "write instance_id to key them"
            )
    return dict(out)
