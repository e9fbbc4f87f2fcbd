"""SFT-Think's own dataset (`sft.dataset`): a Hub dataset id or a local folder, read with
`datasets.load_dataset`, as Aletheia trains SFT-Think on its cold-start curriculum
(`CodeShield/coldstart_curriculum_v2`, configs/method/sft.yaml) rather than on DPO pairs.

A row holds either `messages` (a chat, each turn `role` + `content`, the last turn the
assistant's: it is what the loss is on, as Aletheia's collator masks everything before the
assistant turn) or `prompt` + `completion` (TRL's prompt-completion shape, text or turns).
Other columns are ignored, other turn keys (Aletheia's raw rows carry an `info` record) dropped.

With `sft.curriculum_column` the rows are trained stage by stage: stages in sorted order,
each shuffled with the run's seed, never mixed (Aletheia's sft_coldstart.py 4d57bde: stage_1
then stage_2, each shuffled, a sequential sampler).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from datasets import Dataset

from pipeline.errors import UserError
from pipeline.train.config import TrainConfig


def load_source(source: str, split: str) -> Dataset:
    """The split of a local folder (Parquet / JSON / CSV files, or a saved dataset) or a Hub id."""
    from datasets import load_dataset, load_from_disk

    path = Path(source)
    try:
        if (path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file():
            saved = load_from_disk(str(path))
            return saved[split] if hasattr(saved, "keys") else saved
        return load_dataset(str(path) if path.is_dir() else source, split=split)
    except Exception as e:  # any loader failure is one clear config error
        where = "folder" if path.is_dir() else "Hub dataset (or a missing folder)"
        raise UserError(f"sft.dataset {source!r} ({where}), split {split!r}: {e}") from e


def _turns(value: Any, row: int, field: str) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise UserError(f"sft.dataset row {row}: field {field}: expected a non-empty list of turns")
    turns = []
    for j, turn in enumerate(value):
        if (
            not isinstance(turn, dict)
            or not isinstance(turn.get("role"), str)
            or not isinstance(turn.get("content"), str)
        ):
            raise UserError(
                f"sft.dataset row {row}: field {field}[{j}]: expected a turn with string "
                "`role` and `content`"
            )
        turns.append({"role": turn["role"], "content": turn["content"]})
    return turns


def example(r: dict[str, Any], row: int) -> dict[str, Any]:
    """One row as TRL's prompt-completion example (loss on the completion)."""
    if "messages" in r:
        turns = _turns(r["messages"], row, "messages")
        if turns[-1]["role"] != "assistant" or len(turns) < 2:
            raise UserError(
                f"sft.dataset row {row}: field messages: the last of 2+ turns must be the "
                f"assistant's (got {[t['role'] for t in turns]})"
            )
        return {"prompt": turns[:-1], "completion": turns[-1:]}
    if "prompt" in r and "completion" in r:
        p, c = r["prompt"], r["completion"]
        if isinstance(p, str) and isinstance(c, str):
            return {"prompt": p, "completion": c}
        return {"prompt": _turns(p, row, "prompt"), "completion": _turns(c, row, "completion")}
    raise UserError(
        f"sft.dataset row {row}: expected a `messages` field or `prompt` + `completion` "
        f"(fields: {sorted(r)})"
    )


def curriculum_order(stages: list[Any], seed: int) -> list[int]:
    """Row indices stage by stage (sorted stage names), each stage shuffled with `seed`."""
    by_stage: dict[Any, list[int]] = {}
    for i, stage in enumerate(stages):
        by_stage.setdefault(stage, []).append(i)
    order: list[int] = []
    for stage in sorted(by_stage, key=str):
        rows = list(by_stage[stage])
        random.Random(seed).shuffle(rows)
        order += rows
    return order


def external_sft_rows(cfg: TrainConfig) -> Dataset:
    """`sft.dataset` as prompt-completion rows, in curriculum order when asked, first
    `data.limit` rows (after ordering) for smoke runs."""
    s = cfg.sft
    assert s.dataset is not None
    table = load_source(s.dataset, s.dataset_split)
    if s.curriculum_column is not None:
        if s.curriculum_column not in table.column_names:
            raise UserError(
                f"sft.curriculum_column {s.curriculum_column!r}: {s.dataset} has no such "
                f"column ({table.column_names})"
            )
        table = table.select(curriculum_order(table[s.curriculum_column], cfg.optim.seed))
    if cfg.data.limit is not None:
        table = table.select(range(min(cfg.data.limit, len(table))))
    return Dataset.from_list([example(r, i) for i, r in enumerate(table)])
