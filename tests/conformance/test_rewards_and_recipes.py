"""Conformance: verifier rewards and training recipes (docs/aletheia-conformance.md, rows
R1-R4 and T1-T4). Expected values are written out by hand from Aletheia's definitions
(src/rewards.py, src/grpo_training.py, src/configs/method/*.yaml), not computed by our code."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.train.config import TrainConfig
from pipeline.train.rewards import (
    RANK_VALUES,
    accuracy_reward,
    aletheia_overlong_buffer,
    format_reward,
    overlong_reward,
    rank_aware_reward,
)


@pytest.mark.parametrize(
    ("text", "gold", "expected"),
    [
        ("<think>\nI pick \\boxed{A}\n</think>\n\\boxed{B}", "B", 1.0),
        ("<think>\nI pick \\boxed{A}\n</think>\n\\boxed{B}", "A", 0.0),  # box in thinking: nothing
        ("<think>\n\\boxed{A}\n</think>\nA", "A", 0.0),  # no box after </think>
        ("Analysis: A is right.\nFinal Answer: \\boxed{A}", "A", 1.0),  # no </think>: whole text
        ("<think>\nx\n</think>\n\\boxed{A} or \\boxed{B}", "B", 0.0),  # the first box counts
    ],
)
def test_r1_accuracy_first_box_after_think(text: str, gold: str, expected: float) -> None:
    assert accuracy_reward(text, gold, 2) == expected


@pytest.mark.parametrize(
    ("text", "style", "expected"),
    [
        ("<think>\nB handles zero.\n</think>\n\\boxed{B}", "think", 0.0),
        ("B handles zero.\n</think>\n\\boxed{B}", "think", -1.0),  # must start with <think>
        ("<think>\nB\n</think>\n\\boxed{B} done", "think", -1.0),  # text after the box
        ("<think>\nB\n</think>\n\\boxed{C}", "think", -1.0),  # C is not an option of 2
        ("Analysis: B.\nFinal Answer: \\boxed{B}", "instruct", 0.0),
        ("Final Answer: \\boxed{B}.", "instruct", -1.0),  # the box must end the response
    ],
)
def test_r2_format_reward_is_zero_or_minus_one(text: str, style: str, expected: float) -> None:
    assert format_reward(text, 2, style) == expected  # type: ignore[arg-type]


def test_r3_overlong_buffer_and_values() -> None:
    # 1024 for budgets up to 4096, else 2048
    assert [aletheia_overlong_buffer(b) for b in (2048, 4096, 8192, 16384)] == [
        1024,
        1024,
        2048,
        2048,
    ]
    # budget 4096, buffer 1024: 0 up to 3072, (3072 - L) / 1024 after, -1 past 4096
    assert overlong_reward(3072, 4096, 1024) == 0.0
    assert overlong_reward(3584, 4096, 1024) == -0.5
    assert overlong_reward(4096, 4096, 1024) == -1.0
    assert overlong_reward(5000, 4096, 1024) == -1.0
    # budget 8192, buffer 2048: (6144 - 7168) / 2048
    assert overlong_reward(7168, 8192, 2048) == -0.5


def test_r4_rank_aware_table() -> None:
    # [1, -0.8, -0.6, -0.4, -0.2][:n] sorted high to low, by rank of the pick's pass rate
    assert RANK_VALUES == {
        2: (1.0, -0.8),
        3: (1.0, -0.6, -0.8),
        4: (1.0, -0.4, -0.6, -0.8),
        5: (1.0, -0.2, -0.4, -0.6, -0.8),
    }
    rates = [0.2, 1.0, 0.5, 0.0]  # ranks: B 1st, C 2nd, A 3rd, D 4th
    got = {x: rank_aware_reward(f"<think>\nx\n</think>\n\\boxed{{{x}}}", rates) for x in "ABCDE"}
    assert got == {"A": -0.6, "B": 1.0, "C": -0.4, "D": -0.8, "E": -1.0}  # E: not an option
    assert rank_aware_reward("no answer", rates) == -1.0
    # equal pass rates keep list order: B ranks 2nd, C 3rd
    assert rank_aware_reward("\\boxed{B}", [1.0, 0.25, 0.25]) == -0.6
    assert rank_aware_reward("\\boxed{C}", [1.0, 0.25, 0.25]) == -0.8


@pytest.fixture(scope="module")
def rows_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.train.rowgen import write_dataset

    return write_dataset(tmp_path_factory.mktemp("conformance-rows"))


def _cfg(path: str) -> TrainConfig:
    return TrainConfig.from_yaml(Path("configs/train") / path)


def test_t1_grpo_defaults_reach_trl(tmp_path: Path) -> None:
    from trl import GRPOConfig

    from pipeline.train.common import base_trainer_args
    from pipeline.train.verifier import grpo_args

    cfg = TrainConfig.model_validate(
        {"method": "grpo", "model": "m", "output_dir": tmp_path, "data": {"dir": tmp_path, "config": "train"},
         "optim": {"use_cpu": True, "bf16": False, "per_device_train_batch_size": 16}}
    )  # fmt: skip
    trl = GRPOConfig(**(base_trainer_args(cfg) | grpo_args(cfg)))
    assert (trl.beta, trl.sync_ref_model, trl.ref_model_sync_steps, trl.ref_model_mixup_alpha) == (
        1e-3,
        True,
        100,
        1.0,
    )
    assert (trl.num_generations, trl.mask_truncated_completions, trl.learning_rate) == (
        16,
        True,
        1e-6,
    )
    assert (trl.loss_type, trl.epsilon, trl.epsilon_high, trl.temperature) == (
        "dapo",
        0.2,
        0.28,
        1.0,
    )
    assert (trl.importance_sampling_level, trl.scale_rewards) == ("token", "group")
    assert (trl.lr_scheduler_type.value, trl.weight_decay) == ("constant_with_warmup", 0.01)
    assert list(cfg.grpo.rewards) == ["accuracy", "format", "overlong"]  # summed unweighted
    assert cfg.grpo.buffer == 1024


def test_t2_grpo_budgets_and_instruct() -> None:
    for name, budget, buffer in (("grpo_think_4k.yaml", 4096, 1024), ("grpo_think_8k.yaml", 8192, 2048),
                                 ("grpo_think_16k.yaml", 16384, 2048)):  # fmt: skip
        c = _cfg(name)
        assert (c.prompt.style, c.grpo.max_completion_length, c.grpo.buffer) == (
            "think",
            budget,
            buffer,
        )
        assert (c.grpo.num_generations, c.grpo.beta, c.grpo.ref_model_sync_steps) == (16, 1e-3, 100)
        assert c.grpo.mask_truncated_completions and c.optim_value("learning_rate") == 1e-6
    c = _cfg("grpo_instruct.yaml")
    assert (c.prompt.style, c.grpo.max_completion_length, c.lora) == ("instruct", 4096, None)


def test_t3_dpo_and_sft_recipes() -> None:
    d = _cfg("dpo_think.yaml")
    # a fixed, precomputed reference (thinkdpo_training.py 07efb3a; row DF4)
    assert (d.dpo.beta, d.dpo.max_length, d.dpo.sync_ref_model, d.dpo.precompute_ref_log_probs) == (
        0.1,
        20480,
        False,
        True,
    )
    assert (d.optim_value("learning_rate"), d.optim_value("lr_scheduler_type")) == (
        5e-7,
        "constant_with_warmup",
    )
    s = _cfg("sft_think.yaml")
    assert (s.sft.max_length, s.optim_value("learning_rate"), s.optim_value("lr_scheduler_type")) == (
        4096, 5e-5, "cosine_with_min_lr",
    )  # fmt: skip
    assert s.optim_value("lr_scheduler_kwargs") == {"min_lr": 5e-6}


def test_t4_think_prompt_is_continued_in_training(tiny_model_dir: Path, rows_dir: Path) -> None:
    """GRPO: the rendered prompt ends inside the assistant turn, on the prefill (as Aletheia's
    TRL continued it); DPO/SFT: prompt + response renders the same text generation sees."""
    from transformers import AutoTokenizer

    from pipeline.common.hub_folder import read_config
    from pipeline.common.verifier_prompt import PromptSpec
    from pipeline.train.data import preference_rows, render_prefilled, verifier_prompt_rows

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    grpo = verifier_prompt_rows(read_config(rows_dir, "train", 1), PromptSpec("think"), tok)[0]
    assert (
        grpo["prompt"].endswith("<|im_start|>assistant\n<think>\n")
        and grpo["prefill"] == "<think>\n"
    )
    assert "<think>\n<|im_end|>" not in grpo["prompt"]  # not closed and re-opened
    dpo = preference_rows(read_config(rows_dir, "dpo", 1), PromptSpec("think"))[0]
    assert [m["role"] for m in dpo["prompt"]] == ["user"]
    assert dpo["chosen"][0]["content"].startswith("<think>\n")
    trained = tok.apply_chat_template(dpo["prompt"], tokenize=False, add_generation_prompt=True)
    generated = render_prefilled(
        dpo["prompt"] + [{"role": "assistant", "content": "<think>\n"}], tok
    )
    assert trained + "<think>\n" == generated
