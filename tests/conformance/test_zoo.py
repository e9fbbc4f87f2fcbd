"""Conformance: Aletheia's model zoo and RAFT (docs/aletheia-conformance.md, rows Z1-Z7 and
RAFT1-RAFT4). Every expected value below is copied by hand from Aletheia's files (the commit
is named beside each), not computed by our code: the test fails if a zoo file or the
resolution of a cell drifts from them."""

from __future__ import annotations

import pytest

from pipeline.train.recipes import Cell, cell_config, grid, launch

# (recipe, size, lora) -> (base model, per-device batch, gradient accumulation, LoRA (r, alpha) or
#  None, DeepSpeed stage, processes). Batch and accumulation: src/configs/model/<method>/*.yaml
# (`batch_size`, `gradient_accumulation_steps`); stage and processes: the accelerate configs in
# src/configs/deepspeed/ (dsqwen_config.yaml: ZeRO-2 x 8, dsqwen7b_config.yaml: ZeRO-2 x 4,
# dsqwen14b_config.yaml: ZeRO-2 x 8, qwen2_5_14b_config.yaml: ZeRO-2 x 4).
R1 = "deepseek-ai/DeepSeek-R1-Distill-Qwen-"
QWEN = "Qwen/Qwen2.5-"
PER_SCALE = {
    # Z1 grpo/dsqwen_1_5b.yaml@9a901ce, dsqwen_7b.yaml@560be10, dsqwen_14b.yaml@560be10
    ("grpo-think", "1.5b", False): (R1 + "1.5B", 8, 32, None, "zero2", 8),
    ("grpo-think", "7b", False): (R1 + "7B", 8, 32, None, "zero2", 4),
    ("grpo-think", "14b", False): (R1 + "14B", 1, 128, None, "zero2", 8),
    # Z2 grpo/dsqwen_7b_lora.yaml, dsqwen_14b_lora.yaml @eb596f4; LoraConfig(r=16, lora_alpha=32)
    ("grpo-think", "7b", True): (R1 + "7B", 4, 32, (16, 32), "zero2", 4),
    ("grpo-think", "14b", True): (R1 + "14B", 2, 64, (16, 32), "zero2", 8),
    # Z3 grpo_instruct/qwen_1_5b.yaml@103be65, qwen_7b.yaml@b572d95, qwen_14b.yaml@103be65
    ("grpo-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 8, 32, None, "zero2", 8),
    ("grpo-instruct", "7b", False): (QWEN + "7B-Instruct", 8, 32, None, "zero2", 8),
    ("grpo-instruct", "14b", False): (QWEN + "14B-Instruct", 1, 128, None, "zero2", 4),
    # Z4 thinkdpo/dsqwen_1_5b.yaml@d73a8d0, dsqwen_7b.yaml@d73a8d0, dsqwen_14b.yaml@6ca676b
    ("dpo-think", "1.5b", False): (R1 + "1.5B", 2, 8, None, "zero2", 8),
    ("dpo-think", "7b", False): (R1 + "7B", 1, 16, None, "zero2", 4),
    ("dpo-think", "14b", False): (R1 + "14B", 1, 16, None, "zero2", 8),
    # Z5 raft/dsqwen_{1_5b,7b,14b}.yaml@bb11921 (the last snapshot: row DF7)
    ("raft-think", "1.5b", False): (R1 + "1.5B", 16, 1, None, "zero2", 8),
    ("raft-think", "7b", False): (R1 + "7B", 8, 2, None, "zero2", 4),
    ("raft-think", "14b", False): (R1 + "14B", 2, 8, None, "zero2", 8),
    # Z6 raft/qwen2_5_{1_5b,7b,14b}.yaml@bb11921
    ("raft-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 16, 1, None, "zero2", 8),
    ("raft-instruct", "7b", False): (QWEN + "7B-Instruct", 8, 2, None, "zero2", 8),
    ("raft-instruct", "14b", False): (QWEN + "14B-Instruct", 2, 8, None, "zero2", 4),
    # Z7 sft/dsqwen_7b.yaml, dsqwen_14b.yaml @4d57bde (no 1.5B SFT config)
    ("sft-think", "7b", False): (R1 + "7B", 4, 8, None, "zero2", 4),
    ("sft-think", "14b", False): (R1 + "14B", 2, 16, None, "zero2", 8),
}


@pytest.mark.parametrize(
    ("key", "expected"), PER_SCALE.items(), ids=["-".join(map(str, k)) for k in PER_SCALE]
)
def test_per_scale_settings_are_aletheias(key: tuple[str, str, bool], expected: tuple) -> None:
    recipe, size, lora = key
    budget = "4k" if recipe == "grpo-think" else None
    cell = Cell(recipe, size, budget, lora)
    cfg = cell_config(cell)
    model, batch, accum, lora_ra, stage, procs = expected
    assert cfg.model == model
    assert (cfg.optim.per_device_train_batch_size, cfg.optim.gradient_accumulation_steps) == (
        batch,
        accum,
    )
    assert (None if cfg.lora is None else (cfg.lora.r, cfg.lora.alpha)) == lora_ra
    if cfg.lora is not None:  # peft's LoraConfig defaults: no dropout; Aletheia: all-linear
        assert (cfg.lora.dropout, cfg.lora.target_modules) == (0.0, "all-linear")
    lc = launch(cell)
    assert (lc.deepspeed, lc.num_processes) == (stage, procs)


def test_the_grid_is_exactly_the_hand_table() -> None:
    cells = {(c.recipe, c.size, c.lora) for c in grid()}
    assert cells == set(PER_SCALE)


# GRPO's vLLM colocate settings per scale (gen_params): (gpu_memory_utilization, tensor_parallel_size)
VLLM = {
    ("grpo-think", "1.5b", False): (0.35, 1),
    ("grpo-think", "7b", False): (0.35, 1),
    ("grpo-think", "14b", False): (0.35, 2),
    ("grpo-think", "7b", True): (0.45, 1),
    ("grpo-think", "14b", True): (0.55, 2),
    ("grpo-instruct", "1.5b", False): (0.4, 1),
    ("grpo-instruct", "7b", False): (0.35, 1),
    ("grpo-instruct", "14b", False): (0.25, 4),
}


@pytest.mark.parametrize(
    ("key", "expected"), VLLM.items(), ids=["-".join(map(str, k)) for k in VLLM]
)
def test_grpo_vllm_colocate_settings_per_scale(key: tuple[str, str, bool], expected: tuple) -> None:
    recipe, size, lora = key
    cfg = cell_config(Cell(recipe, size, "4k" if recipe == "grpo-think" else None, lora))
    assert (cfg.grpo.vllm.gpu_memory_utilization, cfg.grpo.vllm.tensor_parallel_size) == expected
    # LoRA cells: a fixed reference, as Aletheia's TRL 0.23 left it (row DF5).
    assert cfg.grpo.sync_ref_model is (not lora)


def test_grpo_think_budgets_and_instruct_budget() -> None:
    # README: grpo_params.max_completion_length = 4096 / 8192 / 16384; grpo_instruct.yaml: 4096
    for budget, tokens, buffer in (("4k", 4096, 1024), ("8k", 8192, 2048), ("16k", 16384, 2048)):
        cfg = cell_config(Cell("grpo-think", "7b", budget, False))
        assert (cfg.grpo.max_completion_length, cfg.grpo.buffer) == (tokens, buffer)
        assert cfg.prompt.style == "think"
    cfg = cell_config(Cell("grpo-instruct", "7b", None, False))
    assert (cfg.grpo.max_completion_length, cfg.prompt.style) == (4096, "instruct")


def test_raft_method_defaults_are_raft_yaml() -> None:
    # src/configs/method/raft.yaml@ac65cf4: learning_rate 5e-5, cosine_with_min_lr, min_lr 5e-6,
    # warmup_ratio 0.05, weight_decay 1e-2, max_length 20480, num_epochs 1, num_generations 16;
    # raft_training.py@2adf692: temperature 1.0, one correct response kept per prompt,
    # completion-only loss, responses up to max_length - 4096 (its 12288 / 8192 pair).
    cfg = cell_config(Cell("raft-think", "7b", None, False))
    assert cfg.method == "raft" and cfg.data.config == "train"
    assert cfg.optim_value("learning_rate") == 5e-5
    assert cfg.optim_value("lr_scheduler_type") == "cosine_with_min_lr"
    assert cfg.optim_value("lr_scheduler_kwargs") == {"min_lr": 5e-6}
    assert (cfg.optim_value("warmup_ratio"), cfg.optim_value("weight_decay")) == (0.05, 0.01)
    assert cfg.optim.num_train_epochs == 1.0
    r = cfg.raft
    assert (r.num_generations, r.temperature, r.max_length, r.budget) == (16, 1.0, 20480, 16384)
    assert (r.keep_per_prompt, r.episodes, r.completion_only_loss) == (1, 1, True)
    assert r.constrain_answer is False  # Aletheia samples freely
    assert cfg.prompt.style == "think"
    assert cell_config(Cell("raft-instruct", "7b", None, False)).prompt.style == "instruct"


def test_raft_trains_on_sft_arguments() -> None:
    """The RAFT episode's trainer gets TRL SFT arguments with raft.yaml's values."""
    from trl import SFTConfig

    from pipeline.train.common import base_trainer_args

    cfg = cell_config(
        Cell("raft-think", "1.5b", None, False),
        overrides={"optim": {"use_cpu": True, "bf16": False}},
    )
    args = SFTConfig(**(base_trainer_args(cfg) | {"max_length": cfg.raft.max_length,
                                                  "completion_only_loss": cfg.raft.completion_only_loss}))  # fmt: skip
    assert (args.learning_rate, args.lr_scheduler_type.value) == (5e-5, "cosine_with_min_lr")
    assert args.lr_scheduler_kwargs == {"min_lr": 5e-6}
    assert (args.max_length, args.completion_only_loss, args.weight_decay) == (20480, True, 0.01)
