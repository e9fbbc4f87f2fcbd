"""A cell trained in its own `accelerate launch` (the full-size ablations' launcher), here on
the CPU with one process: the real launcher, the real DPO trainer, the cell's summary read back."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from pipeline.train.ablation import train_cell
from pipeline.train.ablation_config import AblationConfig


def test_a_cell_trains_under_accelerate_launch(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = AblationConfig.model_validate(
        {"out_dir": tmp_path / "out", "data_dir": dataset_dir, "size": "1.5b",
         "recipes": ["dpo-think"], "models": {"think": str(tiny_model_dir)},
         "train": {"data": {"limit": 4},
                   "optim": {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False,
                             "use_cpu": True, "gradient_checkpointing": False,
                             "gradient_accumulation_steps": 1},
                   "dpo": {"max_length": 1024}},
         "launcher": {"type": "accelerate", "config_file": "none", "num_processes": 1,
                      "args": ["--cpu"]}}
    )  # fmt: skip
    summary = train_cell(cfg, "dpo-think")
    folder = cfg.cell_dir("dpo-think")
    written = yaml.safe_load((folder / "train_config.yaml").read_text())
    assert (written["method"], written["model"]) == ("dpo", str(tiny_model_dir))
    assert summary["global_step"] == 1 and summary["cost"]["processes"] == 1
    assert Path(summary["model_path"], "model.safetensors").exists()
    assert (folder / "train.log").stat().st_size > 0  # the launched run's own output
    state = json.loads((folder / "cell.json").read_text())
    assert state["status"] == "trained" and state["summary"] == summary
