"""Conformance: the training defaults that differed from Aletheia's (issue 29, "Defaults";
docs/aletheia-conformance.md rows DF1-DF7).

Aletheia's values, copied by hand (insait-institute/aletheia, `src/`):

- DF1 `seed: 42` in every method config (`configs/method/grpo.yaml` 36b612c, `thinkdpo.yaml`
  29384a5, `sft.yaml` 4d57bde, `raft.yaml` ac65cf4), passed as `seed` and `data_seed`;
- DF2 `dataloader_drop_last=True` in `grpo_training.py` b1dfd31, `thinkdpo_training.py`
  (both stored versions) and `raft_training.py` (every version);
- DF3 `save_steps: 0.1` (grpo.yaml, grpo_instruct.yaml), `0.25` (thinkdpo.yaml, sft.yaml,
  raft.yaml): transformers reads a value below 1 as a fraction of the run's steps and saves
  every ceil(fraction x steps) steps;
- DF4 `thinkdpo_training.py` 07efb3a: `precompute_ref_log_probs=True`,
  `precompute_ref_batch_size` from `configs/model/thinkdpo/dsqwen_{1_5b,7b,14b}.yaml`
  (4 / 2 / 1), no `sync_ref_model`; its other stored version e77025e re-syncs instead;
- DF5 the LoRA GRPO cells (`grpo_use_lora`, `kl_penalty: dynamic`) ran TRL 0.23.0
  (requirements.txt), whose GRPOTrainer keeps no reference model for a PEFT model and whose
  SyncRefModelCallback acts only when it has one: the reference stayed the base model;
- DF6 `thinkdpo_datagen.py` 07bb964: `--size` in 1.5B, 7B, 14B, 32B, R1 (R1 in fp8 with
  expert parallelism); `thinkdpo_pairs.py`: the gold is spliced into an R1 trace, rejected
  traces come from 1.5B, 7B, 14B;
- DF7 `configs/model/raft/*.yaml` at bb11921: 16 x 1, 8 x 2, 2 x 8 (Think and Instruct).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.train.common import base_trainer_args
from pipeline.train.config import TrainConfig
from pipeline.train.recipes import Cell, cell_config, recipe_spec

CPU = {"bf16": False, "use_cpu": True, "learning_rate": 1e-4, "save_total_limit": None}
DATA_FOR = {"grpo": "train", "dpo": "dpo", "sft": "dpo", "raft": "train", "rlvr": "train_questions"}


def _cfg(tmp_path: Path, method: str, **fields: Any) -> TrainConfig:
    base = {"method": method, "model": "m", "output_dir": tmp_path / "run",
            "data": {"dir": tmp_path, "config": DATA_FOR[method]}}  # fmt: skip
    return TrainConfig.model_validate(base | fields)


@pytest.fixture(scope="module")
def rows_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.train.rowgen import write_dataset

    return write_dataset(tmp_path_factory.mktemp("defaults-rows"))


# --------------------------------------------------------------------------- DF1, DF2, DF3


@pytest.mark.parametrize(
    ("method", "save"), [("grpo", 0.1), ("dpo", 0.25), ("sft", 0.25), ("raft", 0.25)]
)
def test_df1_to_df3_seed_drop_last_and_save_fraction_reach_the_trainer(
    tmp_path: Path, method: str, save: float
) -> None:
    from trl import DPOConfig, GRPOConfig, SFTConfig

    trl_cls = {"grpo": GRPOConfig, "dpo": DPOConfig, "sft": SFTConfig, "raft": SFTConfig}[method]
    cfg = _cfg(tmp_path, method, optim={"use_cpu": True, "bf16": False})
    args = trl_cls(**base_trainer_args(cfg))
    assert (args.seed, args.data_seed) == (42, None)  # transformers: data_seed None = seed
    assert args.dataloader_drop_last is True
    assert (args.save_strategy.value, args.save_steps) == ("steps", save)


def test_df1_the_build_seed_is_left_alone() -> None:
    # The training seed moved to 42; the build's seed (what the published rows are drawn
    # with) stays 0, so the demo's data is byte-identical.
    from pipeline.config import load_run_config

    assert load_run_config({}).seed == 0
    assert yaml.safe_load(Path("configs/demo.yaml").read_text()).get("seed", 0) == 0


def test_df3_rlvr_keeps_the_projects_save_interval(tmp_path: Path) -> None:
    assert base_trainer_args(_cfg(tmp_path, "rlvr"))["save_steps"] == 500
    with pytest.raises(ValueError, match="save_steps"):
        _cfg(tmp_path, "sft", optim={"save_steps": 0})


@pytest.mark.parametrize(
    ("drop_last", "steps", "checkpoints"),
    [
        # 9 rows, 2 per batch, one epoch. Aletheia's: floor(9 / 2) = 4 steps; saves every
        # ceil(0.25 x 4) = 1 step -> checkpoints 1, 2, 3, 4.
        (True, 4, [1, 2, 3, 4]),
        # The option: ceil(9 / 2) = 5 steps (the last batch holds 1 row); saves every
        # ceil(0.25 x 5) = 2 steps -> checkpoints 2 and 4, and 5 (transformers saves the
        # last step too).
        (False, 5, [2, 4, 5]),
    ],
)
def test_df2_df3_short_last_batch_and_saves_in_a_real_run(
    tmp_path: Path, tiny_model_dir: Path, rows_dir: Path,
    drop_last: bool, steps: int, checkpoints: list[int],
) -> None:  # fmt: skip
    from pipeline.train import train

    cfg = TrainConfig.model_validate(
        {"method": "sft", "model": str(tiny_model_dir), "output_dir": tmp_path / "run",
         "data": {"dir": rows_dir, "config": "dpo"}, "sft": {"max_length": 1024},
         "optim": CPU | {"per_device_train_batch_size": 2, "dataloader_drop_last": drop_last}}
    )  # fmt: skip
    assert cfg.optim.save_steps is None and cfg.optim_value("save_steps") == 0.25
    summary = train(cfg)
    assert summary["global_step"] == steps == (9 // 2 if drop_last else math.ceil(9 / 2))
    found = sorted(
        int(p.name.split("-")[1]) for p in (cfg.output_dir / "checkpoints").glob("checkpoint-*")
    )
    assert found == checkpoints


def test_df2_rows_that_fill_no_batch_are_an_error_not_a_silent_no_op(
    tmp_path: Path, tiny_model_dir: Path, rows_dir: Path
) -> None:
    from pipeline.errors import UserError
    from pipeline.train.verifier import build_sft

    def cfg(drop_last: bool) -> TrainConfig:
        return TrainConfig.model_validate(
            {"method": "sft", "model": str(tiny_model_dir), "output_dir": tmp_path / "run",
             "data": {"dir": rows_dir, "config": "dpo", "limit": 3}, "sft": {"max_length": 1024},
             "optim": CPU | {"per_device_train_batch_size": 4, "dataloader_drop_last": drop_last}}
        )  # fmt: skip

    # 3 rows, batches of 4: drop_last leaves the only (short) batch out -> 0 steps
    with pytest.raises(UserError, match=r"3 training rows fill no batch of 4 .*dataloader_drop_last"):
        build_sft(cfg(True), [])
    assert len(build_sft(cfg(False), []).get_train_dataloader()) == 1


# --------------------------------------------------------------------------- DF4


def test_df4_dpo_reference_is_fixed_and_precomputed_per_scale(tmp_path: Path) -> None:
    from trl import DPOConfig

    from pipeline.train.verifier import dpo_args

    d = _cfg(tmp_path, "dpo").dpo
    assert (d.precompute_ref_log_probs, d.sync_ref_model, d.precompute_ref_batch_size) == (
        True,
        False,
        None,
    )
    # configs/model/thinkdpo/dsqwen_1_5b.yaml@d73a8d0: 4, dsqwen_7b.yaml@d73a8d0: 2,
    # dsqwen_14b.yaml@6ca676b: 1
    for size, batch in (("1.5b", 4), ("7b", 2), ("14b", 1)):
        cfg = cell_config(Cell("dpo-think", size, None, False),
                          overrides={"optim": {"use_cpu": True, "bf16": False}})  # fmt: skip
        args = DPOConfig(**(base_trainer_args(cfg) | dpo_args(cfg)))
        assert (args.precompute_ref_log_probs, args.precompute_ref_batch_size) == (True, batch)
        assert args.sync_ref_model is False
    # e77025e's re-synced reference is the option; both at once is refused, naming the fields.
    synced = _cfg(tmp_path, "dpo", dpo={"sync_ref_model": True, "precompute_ref_log_probs": False})
    assert dpo_args(synced)["sync_ref_model"] is True
    with pytest.raises(ValueError, match="dpo.sync_ref_model.*precompute_ref_log_probs: false"):
        _cfg(tmp_path, "dpo", dpo={"sync_ref_model": True})


def test_df4_first_dpo_loss_is_log_2_against_the_precomputed_reference(
    tmp_path: Path, tiny_model_dir: Path, rows_dir: Path
) -> None:
    """At step 1 the policy is the model the reference log-probs were computed from, so every
    margin is 0 and the sigmoid loss is -log(sigmoid(0)) = log 2 = 0.693147; the reference
    columns sit in the training rows and no reference model or sync callback exists."""
    from trl.trainer.callbacks import SyncRefModelCallback

    from pipeline.train.metrics_log import JsonlMetricsCallback, read_metrics
    from pipeline.train.verifier import build_dpo

    cfg = TrainConfig.model_validate(
        {"method": "dpo", "model": str(tiny_model_dir), "output_dir": tmp_path / "run",
         "data": {"dir": rows_dir, "config": "dpo", "limit": 4}, "dpo": {"max_length": 1024},
         "optim": CPU | {"max_steps": 2, "per_device_train_batch_size": 2}}
    )  # fmt: skip
    log = tmp_path / "metrics.jsonl"
    trainer = build_dpo(cfg, [JsonlMetricsCallback(log)])
    assert trainer.ref_model is None
    assert {"ref_chosen_logps", "ref_rejected_logps"} <= set(trainer.train_dataset.column_names)
    assert not any(
        isinstance(cb, SyncRefModelCallback) for cb in trainer.callback_handler.callbacks
    )
    ref_before = list(trainer.train_dataset["ref_chosen_logps"])
    trainer.train()
    first = next(r for r in read_metrics(log) if "loss" in r)
    assert first["step"] == 1 and first["loss"] == pytest.approx(math.log(2), abs=1e-4)
    assert list(trainer.train_dataset["ref_chosen_logps"]) == ref_before  # never recomputed


# --------------------------------------------------------------------------- DF5


def test_df5_lora_cells_train_against_the_base_model(
    tmp_path: Path, tiny_model_dir: Path, rows_dir: Path
) -> None:
    from trl.trainer.callbacks import SyncRefModelCallback

    from pipeline.train.verifier import build_grpo

    for size in ("7b", "14b"):
        cfg = cell_config(Cell("grpo-think", size, "4k", True))
        assert (cfg.grpo.beta, cfg.grpo.sync_ref_model) == (1e-3, False)
    # The full-weight cells keep Aletheia's dynamic KL (a reference re-synced every 100 steps).
    full = cell_config(Cell("grpo-think", "7b", "4k", False))
    assert (full.grpo.sync_ref_model, full.grpo.ref_model_sync_steps) == (True, 100)
    # The 7B LoRA cell on the tiny model: TRL keeps no reference model and no "ref" adapter,
    # so the reference log-probs come from the base model (adapter disabled) all run long.
    cfg = cell_config(
        Cell("grpo-think", "7b", "4k", True), data_dir=rows_dir, output_dir=tmp_path / "run",
        model=str(tiny_model_dir),
        overrides={"optim": CPU | {"max_steps": 1, "per_device_train_batch_size": 2,
                                   "gradient_accumulation_steps": 1, "gradient_checkpointing": False},
                   "lora": {"r": 4, "alpha": 8},
                   "grpo": {"num_generations": 2, "max_completion_length": 8, "overlong_buffer": 4,
                            "vllm": {"enabled": False}}},
    )  # fmt: skip
    trainer = build_grpo(cfg, [])
    model = trainer.accelerator.unwrap_model(trainer.model)
    assert trainer.ref_model is None and trainer.beta == 1e-3
    assert list(model.peft_config) == ["default"]
    assert not any(
        isinstance(cb, SyncRefModelCallback) for cb in trainer.callback_handler.callbacks
    )
    with pytest.raises(ValueError, match="grpo.sync_ref_model: TRL cannot re-sync"):
        cell_config(Cell("grpo-think", "7b", "4k", True), overrides={"grpo": {"sync_ref_model": True}})


# --------------------------------------------------------------------------- DF6


def test_df6_the_full_builds_dpo_judges_are_aletheias_with_r1_strong() -> None:
    from pipeline.config import load_run_config

    dpo = load_run_config(yaml.safe_load(Path("configs/aletheia-full.yaml").read_text())).dpo
    distill = "deepseek-ai/DeepSeek-R1-Distill-Qwen-"
    r1 = "deepseek-ai/DeepSeek-R1"
    assert [j.name for j in dpo.judges] == [distill + s for s in ("1.5B", "7B", "14B", "32B")] + [r1]
    assert dpo.strong_judge == r1
    assert dpo.rejected_judges == [distill + s for s in ("1.5B", "7B", "14B")]
    assert (dpo.samples_per_judge, dpo.temperature, dpo.max_tokens) == (4, 0.6, 16384)
    backend = dpo.judges[-1].backend
    assert backend.type == "vllm" and backend.tensor_parallel_size == 8
    assert backend.engine_args == {
        "quantization": "fp8",
        "enable_expert_parallel": True,
        "max_model_len": 20480,
    }


def test_df6_missing_r1_weights_stop_the_preflight(tmp_path: Path) -> None:
    """"Where weights exist": R1 is a local model; a machine without it fails the preflight
    naming the judge, instead of sampling with a stand-in."""
    from pipeline.common.stage import CheckContext
    from pipeline.config import load_run_config
    from pipeline.instances.dpo.checks import check_dpo

    raw = yaml.safe_load(Path("configs/aletheia-full.yaml").read_text())
    dpo = load_run_config(raw).dpo
    r1 = dpo.judges[-1].model_copy(update={"model": str(tmp_path / "no-DeepSeek-R1")})
    dpo = dpo.model_copy(update={"judges": [*dpo.judges[:-1], r1]})
    findings = [f for f in check_dpo(dpo, CheckContext()) if f.check == "models"]
    about_r1 = [f for f in findings if "no-DeepSeek-R1" in f.message]
    assert len(about_r1) == 1 and about_r1[0].fatal
    assert about_r1[0].message.startswith("dpo.judges.deepseek-ai/DeepSeek-R1: ")


# --------------------------------------------------------------------------- DF7


def test_df7_raft_cells_follow_one_snapshot_bb11921() -> None:
    # configs/model/raft/*.yaml@bb11921 (batch_size x gradient_accumulation_steps):
    # dsqwen_1_5b 16 x 1, dsqwen_7b 8 x 2, dsqwen_14b 2 x 8;
    # qwen2_5_1_5b 16 x 1, qwen2_5_7b 8 x 2, qwen2_5_14b 2 x 8.
    # (9d54f12: 1 x 32, 8 x 32, 1 x 128; ac65cf4: 16 x 1, 8 x 2, 4 x 4.)
    want = {"1.5b": (16, 1), "7b": (8, 2), "14b": (2, 8)}
    for recipe in ("raft-think", "raft-instruct"):
        spec = recipe_spec(recipe)
        for size, (batch, accum) in want.items():
            assert spec["sizes"][size]["source"].endswith("@bb11921")
            o = cell_config(Cell(recipe, size, None, False)).optim
            assert (o.per_device_train_batch_size, o.gradient_accumulation_steps) == (batch, accum)
