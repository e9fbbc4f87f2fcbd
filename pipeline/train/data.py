"""Dataset rows (published Parquet configs) -> the HF `datasets` each TRL trainer reads.

The published layout is one folder of Parquet shards per config (`<dir>/<config>/*.parquet`,
see pipeline/publish/layout.py); a single `<dir>/<config>.parquet` file is accepted too.
Rows are checked against the lead's schemas on read, so a wrong column fails here with
the file's name rather than deep inside a trainer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from datasets import Dataset

from pipeline.common.parquet import read_parquet
from pipeline.instances.dpo.prompt import build_verifier_prompt
from schemas import DPO_SCHEMA, INSTANCE_SCHEMA, TRAIN_QUESTIONS_SCHEMA

_SCHEMAS = {
    "train": INSTANCE_SCHEMA,
    "mixed": INSTANCE_SCHEMA,
    "heldout": INSTANCE_SCHEMA,
    "strong": INSTANCE_SCHEMA,
    "hard": INSTANCE_SCHEMA,
    "adv": INSTANCE_SCHEMA,
    "dpo": DPO_SCHEMA,
    "mixed_dpo": DPO_SCHEMA,
    "train_questions": TRAIN_QUESTIONS_SCHEMA,
}


def config_path(data_dir: str | Path, config: str) -> Path:
    data_dir = Path(data_dir)
    for candidate in (data_dir / config, data_dir / f"{config}.parquet"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"dataset config {config!r} not found under {data_dir} "
        f"(looked for {data_dir / config}/ and {data_dir / config}.parquet)"
    )


def read_config(data_dir: str | Path, config: str, limit: int | None = None) -> pa.Table:
    if config not in _SCHEMAS:
        raise ValueError(f"unknown dataset config {config!r}; known: {sorted(_SCHEMAS)}")
    table = read_parquet(config_path(data_dir, config), _SCHEMAS[config])
    if table.num_rows == 0:
        raise ValueError(f"dataset config {config!r} under {data_dir} has no rows")
    return table.slice(0, limit) if limit else table


def _user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def _assistant(content: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": content}]


def verifier_prompt_rows(table: pa.Table, variant: Literal["think", "no_think"]) -> Dataset:
    """GRPO rows: a chat prompt plus the columns the rewards read (gold letter, pass rates)."""
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(table.to_pylist()):
        try:
            prompt = build_verifier_prompt(
                r["query"], r["candidates"], r["candidate_languages"], variant
            )
        except ValueError as e:
            raise ValueError(f"row {i} (prompt_id={r.get('prompt_id')}): {e}") from e
        rows.append(
            {
                "prompt": _user(prompt),
                "prompt_id": r["prompt_id"],
                "chosen_answer": r["chosen_answer"],
                "num_candidates": r["num_candidates"],
                "pass_rates": list(r["pass_rates"]),
            }
        )
    return Dataset.from_list(rows)


def preference_rows(table: pa.Table) -> Dataset:
    """DPO rows in TRL's conversational preference format (prompt / chosen / rejected)."""
    return Dataset.from_list(
        [
            {
                "prompt": _user(r["prompt"]),
                "chosen": _assistant(r["chosen"]),
                "rejected": _assistant(r["rejected"]),
            }
            for r in table.to_pylist()
        ]
    )


def sft_rows(table: pa.Table) -> Dataset:
    """SFT on the chosen verifier responses (prompt-completion format: loss on the response)."""
    return Dataset.from_list(
        [
            {"prompt": _user(r["prompt"]), "completion": _assistant(r["chosen"])}
            for r in table.to_pylist()
        ]
    )
