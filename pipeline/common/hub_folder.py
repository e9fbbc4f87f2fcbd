"""Reading a published Hub folder (local, or a download of a pushed one) back, config by config.

The layout is one folder of Parquet shards per config, the shards of each split named after
it (`<dir>/<config>/<split>-*.parquet`, written by pipeline/publish/layout.py): a training
config has `train`, an evaluation config `test` (the default) and `full`. A folder without
split-named shards, or a single `<dir>/<config>.parquet` file, is read whole as the config's
default split. Rows are checked against the config's schema (schemas/dataset_configs.py) on
read, so a wrong column fails here with the file's name rather than deep inside a trainer or
an evaluation. Training, evaluation, publishing and the flows' artifacts all read through here.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.common.parquet import read_parquet
from schemas.dataset_configs import CONFIG_BY_NAME, CONFIG_NAMES
from schemas.dpo import dpo_table
from schemas.problem import train_questions_table


def split_glob(config: str, split: str) -> str:
    """The Hub-folder path pattern of one split's shards (the card's `data_files`)."""
    return f"{config}/{split}-*.parquet"


def split_files(folder: str | Path, config: str, split: str) -> list[Path]:
    """The shards of one split of a published folder, sorted."""
    return sorted(Path(folder).glob(split_glob(config, split)))


def config_path(data_dir: str | Path, config: str) -> Path:
    """Where a config lives under `data_dir`: its folder, else one `<config>.parquet` file."""
    data_dir = Path(data_dir)
    for candidate in (data_dir / config, data_dir / f"{config}.parquet"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"dataset config {config!r} not found under {data_dir} "
        f"(looked for {data_dir / config}/ and {data_dir / config}.parquet)"
    )


def split_paths(data_dir: str | Path, config: str, split: str | None = None) -> list[Path]:
    """The files of one split of a config (None: its default split, `train` or `test`)."""
    cfg = CONFIG_BY_NAME[config]
    split = split or cfg.split
    if split not in cfg.splits:
        raise ValueError(
            f"dataset config {config!r} has no split {split!r}; its splits: {list(cfg.splits)}"
        )
    path = config_path(data_dir, config)
    if path.is_dir():
        files = split_files(path.parent, config, split)
        if files:
            return files
        named = {s: split_files(path.parent, config, s) for s in cfg.splits}
        if not any(named.values()) and split == cfg.split:  # an older folder: one split
            return [path]
        have = [s for s, f in named.items() if f]
        raise FileNotFoundError(
            f"dataset config {config!r} under {data_dir} has no {split!r} split "
            f"(no {path}/{split}-*.parquet; splits there: {have or 'none'})"
        )
    if split != cfg.split:
        raise FileNotFoundError(
            f"{path} is one file, read as the {cfg.split!r} split of {config!r}; "
            f"the {split!r} split needs the published folder layout ({config}/{split}-*.parquet)"
        )
    return [path]


def read_config_file(path: Path, config: str) -> pa.Table:
    """One Parquet file of a config, checked and cast to its schema; a file of an older schema
    version is read (Train-Questions v1 where it can be) or refused with the reason."""
    if config == "train_questions":
        return train_questions_table(read_parquet(path), name=str(path))
    if CONFIG_BY_NAME[config].kind == "dpo":
        return dpo_table(read_parquet(path), name=str(path))
    return read_parquet(path, CONFIG_BY_NAME[config].schema)


def read_config(
    data_dir: str | Path, config: str, limit: int | None = None, split: str | None = None
) -> pa.Table:
    """One split of a published config (None: `train`, or `test` for an evaluation set),
    checked against its schema; `limit`: the first N rows."""
    if config not in CONFIG_BY_NAME:
        raise ValueError(f"unknown dataset config {config!r}; known: {sorted(CONFIG_NAMES)}")
    paths = split_paths(data_dir, config, split)
    parts = [read_config_file(p, config) for p in paths]
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    if table.num_rows == 0:
        which = split or CONFIG_BY_NAME[config].split
        raise ValueError(
            f"dataset config {config!r}, split {which!r}, under {data_dir} has no rows"
        )
    return table.slice(0, limit) if limit else table
