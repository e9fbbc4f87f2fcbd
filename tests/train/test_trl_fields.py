"""The training sections take TRL's fields from TRL's own config dataclasses: read from the
source without importing TRL, the same fields TRL's classes have, any of them passed to TRL
as written, and a misspelt one refused with the closest name."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.train.config import (
    TRL_CONFIG,
    DpoSettings,
    GrpoSettings,
    OptimSettings,
    RaftSettings,
    RlvrSettings,
    SftSettings,
    TrainConfig,
)
from pipeline.train.trl_fields import SHARED, own_fields, trl_fields

REPO = Path(__file__).resolve().parents[2]
SECTIONS = [OptimSettings, GrpoSettings, DpoSettings, SftSettings, RaftSettings, RlvrSettings]


def _cfg(method: str = "grpo", **more: Any) -> TrainConfig:
    config = {
        "grpo": "train",
        "dpo": "dpo",
        "sft": "dpo",
        "raft": "train",
        "rlvr": "train_questions",
    }
    return TrainConfig.model_validate({"method": method, "model": "m", "output_dir": "o",
                                       "data": {"dir": "d", "config": config[method]}, **more})  # fmt: skip


def test_the_fields_read_from_source_are_trls_own() -> None:
    """The ast reading gives exactly the fields (and annotations' names) the imported classes
    have: nothing missed through a base class, nothing extra."""
    import trl

    for name in sorted(set(TRL_CONFIG.values())):
        real = {f.name for f in dataclasses.fields(getattr(trl, name)) if f.init}
        assert set(trl_fields(name)) == real, name
    base = {f.name for f in dataclasses.fields(trl.GRPOConfig.__mro__[1]) if f.init}
    assert set(trl_fields(SHARED)) == base


def test_every_aletheia_value_names_a_trl_field() -> None:
    """A field TRL renames or drops fails here, not in a run."""
    for section in SECTIONS:
        allowed = section.trl_allowed()
        assert set(section.trl_defaults) <= set(allowed), section.__name__
        assert not set(section.trl_defaults) & set(section.model_fields), section.__name__


def test_a_field_not_modelled_here_reaches_trl_as_written() -> None:
    from pipeline.train.common import base_trainer_args
    from pipeline.train.verifier import dpo_args, grpo_args, sft_args

    cfg = _cfg(optim={"optim": "adamw_torch_fused", "warmup_ratio": 0.1, "eval_steps": 3},
               grpo={"shuffle_dataset": False, "num_iterations": 2, "temperature": "0.5"})  # fmt: skip
    assert (
        "shuffle_dataset" in own_fields("GRPOConfig")
        and "shuffle_dataset" not in GrpoSettings.model_fields
    )
    args = base_trainer_args(cfg) | grpo_args(cfg)
    assert args["optim"] == "adamw_torch_fused" and args["eval_steps"] == 3.0
    assert args["shuffle_dataset"] is False and args["num_iterations"] == 2
    assert args["temperature"] == 0.5  # a YAML string read as TRL's float
    assert dpo_args(_cfg("dpo", dpo={"label_smoothing": 0.1}))["label_smoothing"] == 0.1
    assert sft_args(_cfg("sft", sft={"packing": True}))["packing"] is True


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"grpo": {"num_generation": 4}}, ["grpo", "'num_generation'", "'num_generations'"]),
        ({"optim": {"learning_rat": 1.0}}, ["optim", "'learning_rate'"]),
        ({"grpo": {"warmup_steps": 3}}, ["grpo", "TrainingArguments field", "optim"]),
        ({"optim": {"max_steps": "many"}}, ["optim.max_steps", "'many'", "int"]),
        ({"trainer_overrides": {"save_stratgy": "no"}}, ["trainer_overrides", "'save_strategy'"]),
    ],
)
def test_a_wrong_field_is_refused_naming_the_closest(fields: dict, words: list[str]) -> None:
    with pytest.raises(ValidationError) as e:
        _cfg(**fields)
    for word in words:
        assert word in str(e.value), str(e.value)


def test_a_config_dump_keeps_aletheias_values_and_types() -> None:
    """The dump (config.json, the ablation cell's key) holds every Aletheia value, set or not,
    in its type: `logging_steps: 5` an int as before, `num_train_epochs: 2` a float."""
    dump = _cfg(optim={"logging_steps": 5, "num_train_epochs": 2}).model_dump(mode="json")
    assert dump["optim"]["logging_steps"] == 5 and type(dump["optim"]["logging_steps"]) is int
    assert type(dump["optim"]["num_train_epochs"]) is float
    assert dump["grpo"]["beta"] == 1e-3 and dump["dpo"]["max_length"] == 20480
    assert "shuffle_dataset" not in dump["grpo"]  # TRL's own default: left to TRL


def test_validating_a_training_config_imports_neither_trl_nor_torch() -> None:
    code = (
        "import sys\nfrom pipeline.train.config import TrainConfig\n"
        "TrainConfig.from_yaml('configs/train/demo-grpo-think.yaml')\n"
        "TrainConfig.model_json_schema()\n"
        "print('HEAVY', [m for m in ('torch', 'trl', 'transformers') if m in sys.modules])"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=False)  # fmt: skip
    assert "HEAVY []" in r.stdout, r.stdout + r.stderr


def test_the_schema_names_trls_fields_and_refuses_a_typo() -> None:
    import jsonschema

    from pipeline.config_docs import json_schema

    validator = jsonschema.Draft202012Validator(json_schema(TrainConfig))
    base = {
        "method": "grpo",
        "model": "m",
        "output_dir": "o",
        "data": {"dir": "d", "config": "train"},
    }
    assert validator.is_valid(base | {"grpo": {"shuffle_dataset": False}})
    assert not validator.is_valid(base | {"grpo": {"shuffle_datset": False}})


@pytest.mark.parametrize(
    ("section", "fields", "words"),
    [
        (GrpoSettings, {"num_generations": 1}, ["grpo.num_generations", "1", "greater than or equal to 2"]),
        (GrpoSettings, {"importance_sampling_level": "seq"}, ["grpo.importance_sampling_level", "'token' or 'sequence'"]),
        (RlvrSettings, {"top_p": 1.5}, ["rlvr.top_p", "1.5", "less than or equal to 1"]),
        (RlvrSettings, {"num_generations": 1}, ["rlvr.num_generations"]),
    ],
)  # fmt: skip
def test_a_value_trl_would_refuse_only_at_training_is_refused_at_validation(
    section: type, fields: dict, words: list[str]
) -> None:
    with pytest.raises(ValidationError) as exc:
        section(**fields)
    for word in words:
        assert word in str(exc.value)


def test_values_inside_the_limits_pass() -> None:
    assert (
        GrpoSettings(num_generations=2, importance_sampling_level="sequence").trl_args()[
            "num_generations"
        ]
        == 2
    )
    assert RlvrSettings(top_p=0.95).trl_args()["top_p"] == 0.95
