"""Every verifier method trains for real (TRL trainers, tiny random Qwen2, CPU, a few steps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from transformers import AutoModelForCausalLM

from pipeline.train import TrainConfig, train
from pipeline.train.metrics_log import read_metrics

CPU = {
    "max_steps": 2,
    "per_device_train_batch_size": 4,
    "bf16": False,
    "use_cpu": True,
    "learning_rate": 1e-4,
}


def _config(tmp_path: Path, model: Path, data_dir: Path, **fields: Any) -> TrainConfig:
    base = {"model": str(model), "output_dir": tmp_path / "run", "optim": dict(CPU)}
    return TrainConfig.model_validate(
        base | fields | {"data": {"dir": data_dir, "limit": 4} | fields["data"]}
    )


def _losses(summary: dict) -> list[dict]:
    log = read_metrics(summary["metrics_log"])
    steps = [r for r in log if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2]
    return steps


def test_grpo_think_full_finetune_with_checkpoints(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, dataset_dir,
        method="grpo", data={"config": "train"},
        optim=CPU | {"save_steps": 1},
        prompt={"style": "think"},
        grpo={"num_generations": 4, "max_completion_length": 24, "overlong_buffer": 8,
              "rewards": {"accuracy": 1.0, "format": 0.5, "overlong": 1.0, "rank_aware": 0.5}},
    )  # fmt: skip
    summary = train(cfg)
    steps = _losses(summary)
    for name in ("accuracy", "format", "overlong", "rank_aware"):
        assert f"rewards/{name}/mean" in steps[-1]
    # A random model never writes a valid thinking-then-box answer: the format penalty is certain.
    assert steps[-1]["rewards/format/mean"] == -1.0
    assert steps[-1]["completions/mean_length"] <= 24
    assert (Path(summary["model_path"]) / "model.safetensors").exists()
    assert sorted(p.name for p in (cfg.output_dir / "checkpoints").glob("checkpoint-*")) == [
        "checkpoint-1",
        "checkpoint-2",
    ]
    assert json.loads((cfg.output_dir / "summary.json").read_text())["global_step"] == 2


def test_grpo_instruct_lora_gspo_merges_a_loadable_model(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, dataset_dir,
        method="grpo", data={"config": "mixed"}, lora={"r": 4, "alpha": 8},
        prompt={"style": "instruct"},
        grpo={"sync_ref_model": False, "num_generations": 4, "max_completion_length": 16,
              "importance_sampling_level": "sequence", "loss_type": "grpo",
              "rewards": {"accuracy": 1.0, "format": 0.5}},
    )  # fmt: skip
    summary = train(cfg)
    _losses(summary)
    assert (cfg.output_dir / "final" / "adapter_config.json").exists()
    assert summary["model_path"].endswith("merged")
    merged = AutoModelForCausalLM.from_pretrained(summary["model_path"])
    assert not any("lora" in name for name, _ in merged.named_parameters())


def test_dpo_think_trains_and_prefers_chosen(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, dataset_dir,
        method="dpo", data={"config": "dpo"}, optim=CPU | {"max_steps": 6, "logging_steps": 3},
        dpo={"max_length": 1024, "beta": 0.1},
    )  # fmt: skip
    summary = train(cfg)
    log = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert [r["step"] for r in log] == [3, 6]
    # Six steps at lr 1e-4 on 4 pairs: the margin between chosen and rejected grows.
    assert log[-1]["rewards/margins"] > log[0]["rewards/margins"]
    assert log[-1]["loss"] < 0.6931  # below log(2), DPO's loss at zero margin


def test_dpo_with_lora(tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, dataset_dir,
        method="dpo", data={"config": "mixed_dpo"}, lora={"r": 4, "alpha": 8, "merge_on_save": False},
        dpo={"max_length": 1024, "sync_ref_model": False},
    )  # fmt: skip
    summary = train(cfg)
    _losses(summary)
    assert summary["model_path"].endswith("final")
    assert (Path(summary["model_path"]) / "adapter_model.safetensors").exists()


def test_sft_on_chosen_responses_lowers_the_loss(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, dataset_dir,
        method="sft", data={"config": "dpo"}, optim=CPU | {"max_steps": 6, "learning_rate": 1e-3},
        sft={"max_length": 1024},
    )  # fmt: skip
    summary = train(cfg)
    log = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert len(log) == 6
    assert log[-1]["loss"] < log[0]["loss"]


def test_data_config_must_fit_the_method(tmp_path: Path, dataset_dir: Path) -> None:
    with pytest.raises(ValueError, match="method dpo reads one of"):
        TrainConfig.model_validate(
            {
                "method": "dpo",
                "model": "m",
                "output_dir": tmp_path,
                "data": {"dir": dataset_dir, "config": "train"},
            }
        )


def test_missing_dataset_config_names_the_paths(tmp_path: Path, tiny_model_dir: Path) -> None:
    cfg = _config(
        tmp_path, tiny_model_dir, tmp_path / "nowhere", method="sft", data={"config": "dpo"}
    )
    with pytest.raises(FileNotFoundError, match="dataset config 'dpo' not found"):
        train(cfg)


def test_every_shipped_config_validates() -> None:
    configs = sorted(Path("configs/train").glob("*.yaml"))
    assert len(configs) >= 8
    methods = {TrainConfig.from_yaml(p).method for p in configs}
    assert methods == {"grpo", "dpo", "sft", "raft", "rlvr"}
    budgets = {
        TrainConfig.from_yaml(p).grpo.max_completion_length
        for p in configs
        if "grpo_think" in p.name
    }
    assert budgets == {4096, 8192, 16384}


def test_old_variant_key_names_its_new_place(tmp_path: Path) -> None:
    from pipeline.evaluate import EvalConfig

    base = {
        "method": "grpo",
        "model": "m",
        "output_dir": tmp_path,
        "data": {"dir": tmp_path, "config": "train"},
    }
    with pytest.raises(ValueError, match="grpo.variant moved to prompt.style"):
        TrainConfig.model_validate(base | {"grpo": {"variant": "no_think"}})
    with pytest.raises(ValueError, match="variant is now style"):
        EvalConfig.model_validate({"variant": "think"})


def test_lora_with_a_synced_reference_is_a_config_error(tmp_path: Path) -> None:
    base = {
        "method": "grpo",
        "model": "m",
        "output_dir": tmp_path,
        "data": {"dir": tmp_path, "config": "train"},
    }
    with pytest.raises(ValueError, match="grpo.sync_ref_model: TRL cannot re-sync"):
        TrainConfig.model_validate(base | {"lora": {"r": 4}})
    with pytest.raises(ValueError, match="with beta 0 there is no reference"):
        TrainConfig.model_validate(base | {"grpo": {"beta": 0.0}})
