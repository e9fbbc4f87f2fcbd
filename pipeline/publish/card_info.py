"""The card header's `dataset_info`: per config and split, its example count and size, as the
Hub's dataset cards carry them (what `Dataset.push_to_hub` writes, less the features).

Written through `datasets`' own serialiser, so the header is exactly what the library reads
back: `load_dataset` checks every split's row count against `num_examples` (a mismatch
fails the load). The features are left out: they are the Parquet shards' own schema (each
written with its config's explicit Arrow schema), which `load_dataset` reads, and they
were two thirds of the card's lines. Sizes are measured, not estimated: `num_bytes` is the
split's in-memory Arrow size (as `datasets` records it), `download_size` the bytes of the
config's Parquet shards in the folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.common.hub_folder import split_files
from schemas.dataset_configs import CONFIG_BY_NAME

Splits = dict[str, dict[str, pa.Table]]


def dataset_info(splits: Splits, folder: Path) -> list[dict[str, Any]]:
    """One entry per config (sorted by name, as `datasets` writes them), for the YAML header.

    `folder`: the Hub folder whose shards are already written (their sizes are read)."""
    import datasets
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from huggingface_hub import DatasetCardData

    infos = DatasetInfosDict()
    for name, by_split in splits.items():
        split_dict = SplitDict()
        for split, table in by_split.items():
            split_dict.add(
                SplitInfo(name=split, num_bytes=table.nbytes, num_examples=table.num_rows)
            )
        shards = [p for s in by_split for p in split_files(folder, name, s)]
        infos[name] = DatasetInfo(
            features=datasets.Features.from_arrow_schema(CONFIG_BY_NAME[name].schema),
            splits=split_dict,
            download_size=sum(p.stat().st_size for p in shards),
            dataset_size=sum(t.nbytes for t in by_split.values()),
        )
    card_data = DatasetCardData()
    infos.to_dataset_card_data(card_data)
    info = card_data.to_dict()["dataset_info"]
    entries = info if isinstance(info, list) else [info]
    return [{k: v for k, v in e.items() if k != "features"} for e in entries]
