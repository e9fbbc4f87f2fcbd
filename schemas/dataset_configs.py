"""The published dataset's configs, listed once: name, Arrow schema, kind, side and the
card's description of each.

Aletheia publishes nine configs. A training config has one split, `train`; an evaluation
config two, as Aletheia's evaluation sets: `test` (the default) and `full`. Publishing
(pipeline/publish), reading a Hub folder (pipeline/common/hub_folder.py), training and
evaluation all take the names and schemas from here, so no other name -> schema map exists
(tests/test_dataset_configs.py checks that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from schemas.dpo import DPO_SCHEMA
from schemas.instance import INSTANCE_SCHEMA
from schemas.problem import TRAIN_QUESTIONS_SCHEMA

Side = Literal["train", "eval"]
EVAL_SPLITS: tuple[str, ...] = ("test", "full")


@dataclass(frozen=True)
class DatasetConfig:
    """One Hub config: a name, the Arrow schema its files are written with, and its split."""

    name: str
    schema: pa.Schema
    kind: Literal["instances", "dpo", "questions"]
    side: Side  # which side of the train/eval wall (invariant 2)
    description: str

    @property
    def split(self) -> str:
        """The default split: `train` for training material, `test` for an evaluation set."""
        return "train" if self.side == "train" else "test"

    @property
    def splits(self) -> tuple[str, ...]:
        # Aletheia's evaluation sets are pushed as a DatasetDict of `test` and `full`.
        return ("train",) if self.side == "train" else EVAL_SPLITS


CONFIGS: tuple[DatasetConfig, ...] = (
    DatasetConfig(
        "train",
        INSTANCE_SCHEMA,
        "instances",
        "train",
        "A problem and a list of candidate programs, exactly one of them correct "
        "(execution-verified).",
    ),
    DatasetConfig(
        "train_questions",
        TRAIN_QUESTIONS_SCHEMA,
        "questions",
        "train",
        "Each unique problem of Train once, with its tests (for on-policy sampling and RLVR).",
    ),
    DatasetConfig(
        "dpo",
        DPO_SCHEMA,
        "dpo",
        "train",
        "A Train instance + a chosen verifier response that picks the correct candidate and a "
        "rejected one that does not.",
    ),
    DatasetConfig(
        "mixed",
        INSTANCE_SCHEMA,
        "instances",
        "train",
        "Train where a share of the instances (`mixed.share`) carry semantics-preserving "
        "adversarial bias edits, one bias type per row.",
    ),
    DatasetConfig(
        "mixed_dpo",
        DPO_SCHEMA,
        "dpo",
        "train",
        "DPO pairs built on Mixed.",
    ),
    DatasetConfig(
        "heldout",
        INSTANCE_SCHEMA,
        "instances",
        "eval",
        "In-distribution listwise test set: a problem and a list of candidates, exactly one "
        "correct, the incorrect ones of low pass rates (easy band); no problem (or "
        "near-duplicate of one) shared with Train.",
    ),
    DatasetConfig(
        "strong",
        INSTANCE_SCHEMA,
        "instances",
        "eval",
        "Listwise test set like Heldout, built from the strong tier's candidates.",
    ),
    DatasetConfig(
        "hard",
        INSTANCE_SCHEMA,
        "instances",
        "eval",
        "Listwise test set whose incorrect candidates are near misses of high pass rates "
        "(hard band).",
    ),
    DatasetConfig(
        "adv",
        INSTANCE_SCHEMA,
        "instances",
        "eval",
        "Heldout's `test` split once per bias type, with semantics-preserving bias edits "
        "(authority, self-declared correctness, fake references, misleading descriptions, "
        "...; the row's type in `modification`); every edited program re-judged. Its `full` "
        "split holds the same rows as `test`.",
    ),
)
CONFIG_BY_NAME: dict[str, DatasetConfig] = {c.name: c for c in CONFIGS}
CONFIG_NAMES: tuple[str, ...] = tuple(c.name for c in CONFIGS)
