"""Conformance: Aletheia's model zoo and RAFT (docs/aletheia-conformance.md, rows Z1-Z7,
Z11-Z19, ST5 and RAFT1-RAFT6). Every expected value below is copied by hand from Aletheia's files (the commit
is named beside each), not computed by our code: the test fails if a zoo file or the
resolution of a cell drifts from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.train.recipes import Cell, RecipeError, cell_config, grid, launch, launch_command

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
    # BatchOnline-GRPO-Think: GRPO-Think's per-scale files (grpo/dsqwen_*.yaml, as Z1)
    ("batchonline-grpo-think", "1.5b", False): (R1 + "1.5B", 8, 32, None, "zero2", 8),
    ("batchonline-grpo-think", "7b", False): (R1 + "7B", 8, 32, None, "zero2", 4),
    ("batchonline-grpo-think", "14b", False): (R1 + "14B", 1, 128, None, "zero2", 8),
    # Z11 star/dsqwen_1_5b.yaml, dsqwen_7b.yaml, dsqwen_14b.yaml @9f0f72b
    ("star-think", "1.5b", False): (R1 + "1.5B", 4, 4, None, "zero2", 8),
    ("star-think", "7b", False): (R1 + "7B", 2, 8, None, "zero2", 4),
    ("star-think", "14b", False): (R1 + "14B", 1, 16, None, "zero2", 8),
    # Z12 restem/dsqwen_1_5b.yaml, dsqwen_7b.yaml, dsqwen_14b.yaml @58590fa
    ("restem-think", "1.5b", False): (R1 + "1.5B", 16, 1, None, "zero2", 8),
    ("restem-think", "7b", False): (R1 + "7B", 8, 2, None, "zero2", 4),
    ("restem-think", "14b", False): (R1 + "14B", 2, 8, None, "zero2", 8),
    # Z14 dpo_instruct/qwen_{1_5b,7b,14b}.yaml @103be65
    ("dpo-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 2, 8, None, "zero2", 8),
    ("dpo-instruct", "7b", False): (QWEN + "7B-Instruct", 1, 16, None, "zero2", 8),
    ("dpo-instruct", "14b", False): (QWEN + "14B-Instruct", 1, 16, None, "zero2", 4),
    # Z15 star_instruct/qwen_{1_5b,7b,14b}.yaml @103be65
    ("star-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 4, 4, None, "zero2", 8),
    ("star-instruct", "7b", False): (QWEN + "7B-Instruct", 2, 8, None, "zero2", 8),
    ("star-instruct", "14b", False): (QWEN + "14B-Instruct", 1, 16, None, "zero2", 4),
    # Z16 restem_instruct/qwen_1_5b.yaml @103be65, qwen_7b.yaml and qwen_14b.yaml @5c96bf8
    ("restem-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 16, 1, None, "zero2", 8),
    ("restem-instruct", "7b", False): (QWEN + "7B-Instruct", 8, 2, None, "zero2", 8),
    ("restem-instruct", "14b", False): (QWEN + "14B-Instruct", 4, 4, None, "zero2", 4),
    # Z17 genrm/dsqwen_{1_5b,7b,14b}.yaml @57c2651
    ("genrm-think", "1.5b", False): (R1 + "1.5B", 4, 4, None, "zero2", 8),
    ("genrm-think", "7b", False): (R1 + "7B", 2, 8, None, "zero2", 4),
    ("genrm-think", "14b", False): (R1 + "14B", 1, 16, None, "zero2", 8),
    # Z18 genrm_instruct/qwen_{1_5b,7b,14b}.yaml @103be65
    ("genrm-instruct", "1.5b", False): (QWEN + "1.5B-Instruct", 4, 4, None, "zero2", 8),
    ("genrm-instruct", "7b", False): (QWEN + "7B-Instruct", 2, 8, None, "zero2", 8),
    ("genrm-instruct", "14b", False): (QWEN + "14B-Instruct", 1, 16, None, "zero2", 4),
}


def _budget(recipe: str) -> str | None:
    return "4k" if recipe.endswith("grpo-think") else None  # GRPO-Think and BatchOnline


@pytest.mark.parametrize(
    ("key", "expected"), PER_SCALE.items(), ids=["-".join(map(str, k)) for k in PER_SCALE]
)
def test_per_scale_settings_are_aletheias(key: tuple[str, str, bool], expected: tuple) -> None:
    recipe, size, lora = key
    cell = Cell(recipe, size, _budget(recipe), lora)
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
    ("batchonline-grpo-think", "1.5b", False): (0.35, 1),
    ("batchonline-grpo-think", "7b", False): (0.35, 1),
    ("batchonline-grpo-think", "14b", False): (0.35, 2),
}


@pytest.mark.parametrize(
    ("key", "expected"), VLLM.items(), ids=["-".join(map(str, k)) for k in VLLM]
)
def test_grpo_vllm_colocate_settings_per_scale(key: tuple[str, str, bool], expected: tuple) -> None:
    recipe, size, lora = key
    cfg = cell_config(Cell(recipe, size, _budget(recipe), lora))
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


def test_batchonline_grpo_reaches_trl() -> None:
    """BatchOnline-GRPO (issue 29): generate_every 4 -> TRL's steps_per_generation =
    accumulation x 4 (Aletheia's cerebrm_rl.py), sequence-level ratios, eps 3e-4 / 4e-4;
    everything else GRPO-Think's. 7B: batch 8, accumulation 32, so one generation round of
    8 x 32 x 4 = 1024 rollouts (64 prompts x 16) serves 4 optimiser steps."""
    from trl import GRPOConfig

    from pipeline.train.common import base_trainer_args
    from pipeline.train.verifier import grpo_args

    cpu = {"optim": {"use_cpu": True, "bf16": False}}
    for budget, tokens in (("4k", 4096), ("8k", 8192), ("16k", 16384)):
        cfg = cell_config(Cell("batchonline-grpo-think", "7b", budget, False), overrides=cpu)
        trl = GRPOConfig(**(base_trainer_args(cfg) | grpo_args(cfg) | {"use_vllm": False}))
        assert (trl.steps_per_generation, trl.generation_batch_size) == (128, 1024)
        assert (trl.importance_sampling_level, trl.epsilon, trl.epsilon_high) == (
            "sequence",
            3e-4,
            4e-4,
        )
        assert (trl.max_completion_length, trl.beta, trl.loss_type, trl.num_generations) == (
            tokens, 1e-3, "dapo", 16)  # fmt: skip
        assert (trl.learning_rate, trl.gradient_accumulation_steps) == (1e-6, 32)
    # Plain GRPO-Think generates every step: steps_per_generation = accumulation (TRL's default)
    plain = cell_config(Cell("grpo-think", "7b", "4k", False), overrides=cpu)
    trl = GRPOConfig(**(base_trainer_args(plain) | grpo_args(plain) | {"use_vllm": False}))
    assert (trl.steps_per_generation, trl.generation_batch_size) == (32, 256)
    assert (trl.importance_sampling_level, trl.epsilon, trl.epsilon_high) == ("token", 0.2, 0.28)


def test_star_method_defaults_are_star_yaml() -> None:
    # src/configs/method/star.yaml@06ce17a: learning_rate 5e-5, cosine_with_min_lr, min_lr
    # 5e-6, warmup_ratio 0.05, weight_decay 1e-2, max_length 12288, num_epochs 1;
    # star_training.py@0d7e2ca: n=1, temperature 0.6, max_tokens = max_length - 4096 (8192),
    # a hinted second try for the misses, every episode trained from model_path (the base).
    cfg = cell_config(Cell("star-think", "7b", None, False))
    assert (cfg.method, cfg.data.config, cfg.prompt.style) == ("star", "train", "think")
    assert cfg.optim_value("learning_rate") == 5e-5
    assert cfg.optim_value("lr_scheduler_type") == "cosine_with_min_lr"
    assert cfg.optim_value("lr_scheduler_kwargs") == {"min_lr": 5e-6}
    assert (cfg.optim_value("warmup_ratio"), cfg.optim_value("weight_decay")) == (0.05, 0.01)
    s = cfg.star
    assert (s.num_generations, s.temperature, s.max_length, s.budget) == (1, 0.6, 12288, 8192)
    assert (s.keep_per_prompt, s.rationalize, s.train_from, s.completion_only_loss) == (
        1, True, "base", True)  # fmt: skip
    assert s.hint.format(answer="C") == "Hint: The correct answer is C"
    assert s.constrain_answer is False


def test_restem_method_defaults_are_restem_yaml() -> None:
    # src/configs/method/restem.yaml@06ce17a: learning_rate 5e-5, constant_with_warmup,
    # warmup_ratio 0.05, weight_decay 1e-2, max_length 20480, num_generations 16,
    # max_samples_to_keep 5; restem_training.py: temperature 1.0, max_tokens = max_length - 4096.
    cfg = cell_config(Cell("restem-think", "7b", None, False))
    assert (cfg.method, cfg.data.config, cfg.prompt.style) == ("restem", "train", "think")
    assert cfg.optim_value("learning_rate") == 5e-5
    assert cfg.optim_value("lr_scheduler_type") == "constant_with_warmup"
    assert cfg.optim_value("lr_scheduler_kwargs") is None
    assert (cfg.optim_value("warmup_ratio"), cfg.optim_value("weight_decay")) == (0.05, 0.01)
    r = cfg.restem
    assert (r.num_generations, r.temperature, r.max_length, r.budget) == (16, 1.0, 20480, 16384)
    assert (r.keep_per_prompt, r.episodes, r.completion_only_loss) == (5, 1, True)


def test_sft_think_length_and_dataset_option() -> None:
    # src/configs/method/sft.yaml@4d57bde (the only version; the file the per-scale
    # model/sft/*.yaml go with): max_length 4096. Its data (CodeShield/coldstart_curriculum_v2)
    # is `sft.dataset`; the zoo default stays the release's DPO chosen responses.
    cfg = cell_config(Cell("sft-think", "7b", None, False))
    assert (cfg.sft.max_length, cfg.sft.dataset, cfg.data.config) == (4096, None, "dpo")
    aletheia = cell_config(
        Cell("sft-think", "7b", None, False),
        overrides={"sft": {"dataset": "CodeShield/coldstart_curriculum_v2",
                           "curriculum_column": "currciulum_stage"}},
    )  # fmt: skip
    assert aletheia.sft.dataset == "CodeShield/coldstart_curriculum_v2"


# -- the Instruct variants and GenRM (rows Z14-Z19) -----------------------------------------------


def test_dpo_instruct_method_values_are_dpo_instruct_yaml() -> None:
    # src/configs/method/dpo_instruct.yaml@103be65 (f73d5b3 the same): learning_rate 5e-7,
    # constant_with_warmup, warmup 0.05, weight decay 0.01, beta 0.1, max_length 8192;
    # model/dpo_instruct/*: precompute_ref_batch_size 4 / 2 / 2
    for size, pre in (("1.5b", 4), ("7b", 2), ("14b", 2)):
        cfg = cell_config(Cell("dpo-instruct", size, None, False))
        assert (cfg.method, cfg.data.config, cfg.prompt.style) == ("dpo", "dpo", "instruct")
        assert (cfg.dpo.beta, cfg.dpo.max_length, cfg.dpo.precompute_ref_batch_size) == (
            0.1, 8192, pre)  # fmt: skip
        assert (cfg.dpo.precompute_ref_log_probs, cfg.dpo.sync_ref_model) == (True, False)
        assert cfg.optim_value("learning_rate") == 5e-7
        assert cfg.optim_value("lr_scheduler_type") == "constant_with_warmup"
        assert (cfg.optim_value("warmup_ratio"), cfg.optim_value("weight_decay")) == (0.05, 0.01)


def test_star_and_restem_instruct_method_values() -> None:
    # star_instruct.yaml@103be65 / restem_instruct.yaml@103be65: learning_rate 2e-6,
    # constant_with_warmup (no min_lr), warmup 0.05, weight decay 0.01, max_length 8192, so
    # star_training.py / restem_training.py sample up to 8192 - 4096 = 4096 tokens; STaR n=1 at
    # 0.6 with the hinted second try, ReST-EM num_generations 16 at 1.0; a non-deepseek model
    # gets the Instruct prompt (is_thinking_model = "deepseek" in model_path)
    from trl import SFTConfig

    from pipeline.train.common import base_trainer_args

    cpu = {"optim": {"use_cpu": True, "bf16": False}}
    for recipe in ("star-instruct", "restem-instruct"):
        cfg = cell_config(Cell(recipe, "7b", None, False), overrides=cpu)
        assert (cfg.data.config, cfg.prompt.style) == ("train", "instruct")
        args = SFTConfig(**base_trainer_args(cfg))
        assert (args.learning_rate, args.lr_scheduler_type.value) == (2e-6, "constant_with_warmup")
        assert not args.lr_scheduler_kwargs  # no min_lr from STaR-Think's cosine
        assert (args.warmup_steps, args.weight_decay) == (0.05, 0.01)
    s = cell_config(Cell("star-instruct", "7b", None, False)).star
    assert (s.num_generations, s.temperature, s.max_length, s.budget) == (1, 0.6, 8192, 4096)
    assert (s.rationalize, s.train_from, s.keep_per_prompt) == (True, "base", 1)
    r = cell_config(Cell("restem-instruct", "7b", None, False)).restem
    assert (r.num_generations, r.temperature, r.max_length, r.budget) == (16, 1.0, 8192, 4096)
    assert r.keep_per_prompt == 5  # restem.yaml@06ce17a's max_samples_to_keep (row RE2)


def test_genrm_method_values_are_genrm_yaml() -> None:
    # src/configs/method/genrm.yaml@06ce17a: the DPO dataset, learning_rate 5e-5,
    # constant_with_warmup, warmup 0.05, weight decay 0.01, max_length 20480;
    # genrm_training.py: SFTTrainer on prompt + chosen, completion_only_loss=True.
    # genrm_instruct.yaml@103be65: learning_rate 2e-6, constant_with_warmup, max_length 8192.
    from trl import SFTConfig

    from pipeline.train.common import base_trainer_args
    from pipeline.train.verifier import sft_args

    cpu = {"optim": {"use_cpu": True, "bf16": False}}
    for recipe, style, lr, length in (("genrm-think", "think", 5e-5, 20480),
                                      ("genrm-instruct", "instruct", 2e-6, 8192)):  # fmt: skip
        cfg = cell_config(Cell(recipe, "7b", None, False), overrides=cpu)
        assert (cfg.method, cfg.data.config, cfg.prompt.style, cfg.sft.dataset) == (
            "sft", "dpo", style, None)  # fmt: skip
        args = SFTConfig(**(base_trainer_args(cfg) | sft_args(cfg)))
        assert (args.learning_rate, args.lr_scheduler_type.value) == (lr, "constant_with_warmup")
        assert not args.lr_scheduler_kwargs  # no min_lr from SFT's cosine
        assert (args.warmup_steps, args.weight_decay) == (0.05, 0.01)
        assert (args.max_length, args.completion_only_loss) == (length, True)
    # SFT-Think keeps sft.yaml's 4096 and cosine: GenRM is another recipe, not SFT-Think
    sft = cell_config(Cell("sft-think", "7b", None, False))
    assert (sft.sft.max_length, sft.optim_value("lr_scheduler_type")) == (
        4096,
        "cosine_with_min_lr",
    )


def _two_variant_dpo(root: Path) -> Path:
    """The fixture's dpo config plus an instruct pair per instance (a build with
    `dpo.variants: [think, instruct]`)."""
    import pyarrow as pa

    from pipeline.common.parquet import write_parquet
    from pipeline.common.verifier_prompt import PromptSpec, build_messages, preference_turns
    from schemas import DPO_SCHEMA
    from tests.train.rowgen import dpo_rows, write_dataset

    write_dataset(root)
    rows = dpo_rows()
    extra = []
    for r in rows:
        messages = build_messages(
            r["query"], r["candidates"], r["candidate_languages"], PromptSpec("instruct")
        )
        prompt, chosen = preference_turns(messages, f"Analysis.\n\\boxed{{{r['chosen_answer']}}}")
        _, rejected = preference_turns(messages, f"Analysis.\n\\boxed{{{r['rejected_answer']}}}")
        extra.append(r | {"prompt": prompt, "chosen": chosen, "rejected": rejected,
                          "prompt_variant": "instruct"})  # fmt: skip
    table = pa.Table.from_pylist(rows + extra, schema=DPO_SCHEMA)
    write_parquet(table, root / "dpo" / "train-00000-of-00001.parquet", DPO_SCHEMA)
    return root


def test_instruct_cells_train_on_the_instruct_pairs(tmp_path: Path, tiny_model_dir: Path) -> None:
    """DPO-Instruct and GenRM-Instruct read a DPO config holding both prompt styles and train
    on its instruct rows only (a real TRL trainer on the tiny model); the Think cells on its
    think rows."""
    from pipeline.train.verifier import build_dpo, build_sft
    from tests.train.rowgen import dpo_rows

    data = _two_variant_dpo(tmp_path / "hub")
    per_style = len(dpo_rows())
    over = {"optim": {"use_cpu": True, "bf16": False, "per_device_train_batch_size": 1,
                      "gradient_checkpointing": False}}  # fmt: skip
    for recipe, build in (("dpo-instruct", build_dpo), ("genrm-instruct", build_sft),
                          ("dpo-think", build_dpo), ("genrm-think", build_sft)):  # fmt: skip
        cfg = cell_config(Cell(recipe, "7b", None, False), data_dir=data, model=str(tiny_model_dir),
                          output_dir=tmp_path / recipe, overrides=over)  # fmt: skip
        trainer = build(cfg, [])
        rows = trainer.train_dataset
        assert len(rows) == per_style, recipe
        roles = {tuple(m["role"] for m in p) for p in rows["prompt"]}
        turns = rows["chosen"] if "chosen" in rows.column_names else rows["completion"]
        thinks = {t[0]["content"].startswith("<think>") for t in turns}
        if cfg.prompt.style == "instruct":
            assert (roles, thinks) == ({("system", "user")}, {False}), recipe
        else:
            assert (roles, thinks) == ({("user",)}, {True}), recipe


# -- stored versions that disagree (row Z13, ST5): --snapshot ----------------------------------


def test_grpo_snapshot_4d57bde_is_the_other_per_scale_files() -> None:
    # src/configs/model/grpo/dsqwen_{1_5b,7b,14b}.yaml@4d57bde: batch 1 / 1 / 1, accumulation
    # 32 / 32 / 64, vllm_gpu_memory_utilization 0.15 / 0.25 / 0.2, tensor parallel 1 / 1 / 4
    expected = {"1.5b": (1, 32, 0.15, 1), "7b": (1, 32, 0.25, 1), "14b": (1, 64, 0.2, 4)}
    for recipe in ("grpo-think", "batchonline-grpo-think"):
        for size, values in expected.items():
            cfg = cell_config(Cell(recipe, size, "4k", False, "4d57bde"))
            o, v = cfg.optim, cfg.grpo.vllm
            got = (o.per_device_train_batch_size, o.gradient_accumulation_steps,
                   v.gpu_memory_utilization, v.tensor_parallel_size)  # fmt: skip
            assert got == values, (recipe, size)
            assert cfg.name == f"{recipe}-{size}-4k-4d57bde"
            # the default stays 9a901ce / 560be10: 8 x 32 / 8 x 32 / 1 x 128 (Z1)
            default = cell_config(Cell(recipe, size, "4k", False)).optim
            assert default.gradient_accumulation_steps == {"1.5b": 32, "7b": 32, "14b": 128}[size]


def test_star_and_restem_snapshot_c623c83_learning_rate() -> None:
    # star.yaml / restem.yaml @c623c83: learning_rate 2e-6, constant_with_warmup, max_length
    # 20480 (the default, 06ce17a: 5e-5; STaR cosine to 5e-6 and 12288)
    star = cell_config(Cell("star-think", "7b", None, False, "c623c83"))
    assert star.optim_value("learning_rate") == 2e-6
    assert star.optim_value("lr_scheduler_type") == "constant_with_warmup"
    assert star.optim_value("lr_scheduler_kwargs") == {}
    assert (star.star.max_length, star.star.budget) == (20480, 16384)
    restem = cell_config(Cell("restem-think", "7b", None, False, "c623c83"))
    assert restem.optim_value("learning_rate") == 2e-6
    assert restem.optim_value("lr_scheduler_type") == "constant_with_warmup"
    assert restem.restem.max_length == 20480
    for recipe in ("star-think", "restem-think"):
        assert cell_config(Cell(recipe, "7b", None, False)).optim_value("learning_rate") == 5e-5


def test_a_snapshot_the_recipe_lacks_is_one_clear_error() -> None:
    with pytest.raises(
        RecipeError, match=r"--snapshot 4d57bde: recipe dpo-think has snapshots: none"
    ):
        cell_config(Cell("dpo-think", "7b", None, False, "4d57bde"))
    with pytest.raises(RecipeError, match=r"recipe grpo-think has snapshots: 4d57bde"):
        cell_config(Cell("grpo-think", "7b", "4k", False, "c623c83"))
    assert launch_command(Cell("grpo-think", "14b", "4k", False, "4d57bde")).endswith(
        "--recipe grpo-think --size 14b --budget 4k --snapshot 4d57bde"
    )


def test_raft6_prompts_per_episode_is_a_seeded_sample(tmp_path: Path) -> None:
    """raft.prompts_per_episode (Aletheia 2adf692: 5,120 shuffled prompts): that many rows,
    drawn with the run's seed, the same every episode, kept in the config's order; unset (or
    at least the config's size) every row."""
    from pipeline.train.raft import episode_rows
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path)

    def ids(prompts_per_episode: int | None = None, seed: int = 42) -> list[str]:
        over = {"raft": {"prompts_per_episode": prompts_per_episode}, "optim": {"seed": seed}}
        cfg = cell_config(Cell("raft-think", "7b", None, False), data_dir=data, overrides=over)
        return [r["instance_id"] for r in episode_rows(cfg)]

    every = ids()
    assert len(every) == 9  # the fixture's 3 problems x 3 rotations
    picked = ids(prompts_per_episode=4)
    # random.Random(42).sample(range(9), 4) sorted: rows 0, 1, 2, 5
    assert picked == [every[i] for i in (0, 1, 2, 5)]
    assert ids(prompts_per_episode=4) == picked  # the same draw every episode and run
    assert ids(prompts_per_episode=4, seed=7) == [every[i] for i in (2, 3, 5, 8)]
    assert ids(prompts_per_episode=9) == ids(prompts_per_episode=20) == every


def test_cli_snapshot_shows_the_cell_and_its_launch(tmp_path: Path) -> None:
    import yaml
    from typer.testing import CliRunner

    from aletheia.cli import app

    args = ["train", "--recipe", "grpo-think", "--size", "7b", "--budget", "4k",
            "--snapshot", "4d57bde", "--data", str(tmp_path), "--show"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    body, _, launch_line = res.output.rpartition("# launch: ")
    cfg = yaml.safe_load(body)
    assert cfg["name"] == "grpo-think-7b-4k-4d57bde"
    assert (
        cfg["optim"]["per_device_train_batch_size"],
        cfg["optim"]["gradient_accumulation_steps"],
    ) == (1, 32)
    assert launch_line.strip().endswith("--budget 4k --snapshot 4d57bde")
    # a snapshot picks a zoo cell: not with a config file
    res = CliRunner().invoke(
        app, ["train", "-c", "configs/train/dpo_think.yaml", "--snapshot", "x"]
    )
    assert res.exit_code != 0 and "--snapshot: picks a zoo cell" in res.output
