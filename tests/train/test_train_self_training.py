"""STaR, ReST-EM and SFT-Think's own dataset train for real: the tiny random Qwen2 samples
through the transformers backend (answers constrained, so some are right), the project's one
answer reader marks them, and TRL's SFTTrainer fine-tunes on the kept ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.answers import gold_letter
from pipeline.common.hub_folder import read_config
from pipeline.errors import UserError
from pipeline.train import TrainConfig, train
from pipeline.train.raft import sft_dataset
from pipeline.train.self_training import as_raft, build_star, with_hint

# No warmup: one step must move the weights (with the methods' 5 % warmup its lr is 0).
CPU = {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False, "use_cpu": True,
       "learning_rate": 1e-4, "save_steps": 1, "warmup_ratio": 0.0}  # fmt: skip
SAMPLER = {"max_completion_length": 16, "max_length": 1024, "constrain_answer": True,
           "backend": {"type": "transformers", "device": "cpu"}}  # fmt: skip


def _config(tmp_path: Path, model: Path, data: Path, method: str, **section: Any) -> TrainConfig:
    return TrainConfig.model_validate(
        {"method": method, "model": str(model), "output_dir": tmp_path / method,
         "data": {"dir": data, "config": "train", "limit": 4}, "optim": dict(CPU, dataloader_drop_last=False),
         method: SAMPLER | section}
    )  # fmt: skip


def _samples(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def test_star_rationalises_the_misses_and_restarts_from_the_base(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(tmp_path, tiny_model_dir, dataset_dir, "star", episodes=2)
    assert (cfg.star.num_generations, cfg.star.temperature, cfg.star.max_length) == (1, 0.6, 1024)
    summary = train(cfg)
    rows = read_config(dataset_dir, "train", 4).to_pylist()
    ep0, ep1 = cfg.output_dir / "episodes" / "0", cfg.output_dir / "episodes" / "1"
    for folder in (ep0, ep1):
        samples = _samples(folder)
        plain = [s for s in samples if not s["hinted"]]
        hinted = [s for s in samples if s["hinted"]]
        assert sorted(s["row"] for s in plain) == [0, 1, 2, 3]  # one plain response per row
        # Stage 2 asks again exactly where stage 1 was wrong, once each.
        assert sorted(s["row"] for s in hinted) == sorted(
            s["row"] for s in plain if not s["correct"]
        )
        for s in samples:
            assert s["correct"] == (s["answer"] == gold_letter(rows[s["row"]]["chosen_answer"]))
        kept = [s for s in samples if s["kept"]]
        assert kept and all(s["correct"] for s in kept)
        stats = json.loads((folder / "stats.json").read_text())
        assert stats["hinted_prompts"] == len(hinted)
        assert stats["rows_kept_hinted"] == sum(s["hinted"] for s in kept)
        # The hint is never trained on: every training prompt is the row's plain prompt.
        data = sft_dataset(as_raft(cfg), rows, samples)
        assert len(data) == len(kept)
        assert not any("Hint:" in turn["content"] for d in data for turn in d["prompt"])
    # Episode 1 samples from episode 0's model; both episodes fine-tune the base.
    assert json.loads((ep1 / "stats.json").read_text())["model"] == str(ep0 / "final")
    assert json.loads((cfg.output_dir / "config.json").read_text())["star"]["train_from"] == "base"
    assert [e["episode"] for e in summary["raft"]["episodes"]] == [0, 1]
    assert summary["method"] == "star" and summary["global_step"] == 1
    # STaR's optimiser defaults are star.yaml's: cosine down to 5e-6 (the test sets lr 1e-4).
    assert (cfg.optim_value("lr_scheduler_type"), cfg.optim_value("lr_scheduler_kwargs")) == (
        "cosine_with_min_lr", {"min_lr": 5e-6})  # fmt: skip

    # The last episode's trainer starts from the base weights, not from episode 0's model.
    import torch
    from transformers import AutoModelForCausalLM

    trainer = build_star(cfg, [])  # both episodes done: nothing is sampled or trained again
    start = dict(trainer.model.named_parameters())
    base = dict(AutoModelForCausalLM.from_pretrained(tiny_model_dir).named_parameters())
    ep0_model = dict(AutoModelForCausalLM.from_pretrained(ep0 / "final").named_parameters())
    name = "model.layers.0.mlp.down_proj.weight"
    assert torch.equal(start[name].detach().cpu(), base[name].detach())
    assert not torch.equal(base[name].detach(), ep0_model[name].detach())


def test_star_hint_ends_the_user_turn() -> None:
    messages = [{"role": "user", "content": "Q and candidates\n"},
                {"role": "assistant", "content": "<think>\n"}]  # fmt: skip
    out = with_hint(messages, "Hint: The correct answer is B")
    assert out[0]["content"] == "Q and candidates\n\nHint: The correct answer is B"
    assert out[1] == messages[1] and messages[0]["content"] == "Q and candidates\n"


def test_restem_keeps_up_to_five_correct_per_prompt(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(tmp_path, tiny_model_dir, dataset_dir, "restem", num_generations=8)
    assert cfg.restem.keep_per_prompt == 5 and cfg.optim_value("lr_scheduler_type") == (
        "constant_with_warmup")  # fmt: skip
    summary = train(cfg)
    samples = _samples(cfg.output_dir / "episodes" / "0")
    assert len(samples) == 4 * 8
    for row in range(4):
        right = [s for s in samples if s["row"] == row and s["correct"]]
        kept = [s for s in samples if s["row"] == row and s["kept"]]
        assert len(kept) == min(len(right), 5) and all(s["correct"] for s in kept)
    assert summary["method"] == "restem" and summary["raft"]["episodes"][0]["rows_kept"] == sum(
        s["kept"] for s in samples)  # fmt: skip


def _sft_folder(root: Path) -> Path:
    """Aletheia's cold-start shape: a chat per row and its curriculum stage."""
    root.mkdir(parents=True)
    rows = [
        {"messages": [{"role": "user", "content": f"question {i}"},
                      {"role": "assistant", "content": f"<think>\nstep {i}\n</think>\n\\boxed{{A}}"}],
         "currciulum_stage": "stage_2" if i % 2 else "stage_1"}
        for i in range(6)
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), root / "train-00000-of-00001.parquet")
    return root


def test_sft_trains_on_its_own_dataset_in_curriculum_order(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    from pipeline.train.sft_data import curriculum_order, external_sft_rows
    from pipeline.train.verifier import build_sft

    folder = _sft_folder(tmp_path / "coldstart")
    cfg = TrainConfig.model_validate(
        {"method": "sft", "model": str(tiny_model_dir), "output_dir": tmp_path / "sft",
         "data": {"dir": dataset_dir, "config": "dpo"}, "optim": dict(CPU, max_steps=2),
         "sft": {"dataset": str(folder), "curriculum_column": "currciulum_stage"}}
    )  # fmt: skip
    assert cfg.sft.max_length == 4096  # Aletheia's sft.yaml (4d57bde)
    rows = external_sft_rows(cfg)
    # stage_1 (even questions) first, then stage_2, each shuffled by the seed
    order = [int(r["prompt"][0]["content"].split()[-1]) for r in rows]
    assert sorted(order[:3]) == [0, 2, 4] and sorted(order[3:]) == [1, 3, 5]
    assert order == curriculum_order(
        ["stage_1", "stage_2"] * 3, cfg.optim.seed
    )  # row i = question i
    assert (
        rows[0]["completion"][0]["role"] == "assistant" and rows[0]["prompt"][-1]["role"] == "user"
    )
    trainer = build_sft(cfg, [])
    assert trainer.args.train_sampling_strategy == "sequential"  # no reshuffle across stages
    summary = train(cfg)
    assert summary["global_step"] == 2 and Path(summary["model_path"], "model.safetensors").exists()


def test_curriculum_order_by_hand() -> None:
    from pipeline.train.sft_data import curriculum_order

    order = curriculum_order(["b", "a", "b", "a", "a"], seed=42)
    assert sorted(order[:3]) == [1, 3, 4] and sorted(order[3:]) == [0, 2]  # stage a, then b
    assert order == curriculum_order(["b", "a", "b", "a", "a"], seed=42)  # seeded


def test_sft_dataset_rows_in_a_bad_shape_name_the_row(tmp_path: Path, dataset_dir: Path) -> None:
    from pipeline.train.sft_data import external_sft_rows

    folder = tmp_path / "bad"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist([{"messages": [{"role": "user", "content": "q"}]}]),
                   folder / "train-00000-of-00001.parquet")  # fmt: skip
    cfg = TrainConfig.model_validate(
        {"method": "sft", "model": "m", "output_dir": tmp_path / "o",
         "data": {"dir": dataset_dir, "config": "dpo"}, "sft": {"dataset": str(folder)}}
    )  # fmt: skip
    with pytest.raises(UserError, match="row 0: field messages: the last of 2\\+ turns"):
        external_sft_rows(cfg)
    missing = cfg.model_copy(
        update={"sft": cfg.sft.model_copy(update={"dataset": str(tmp_path / "nope")})}
    )
    with pytest.raises(UserError, match="sft.dataset"):
        external_sft_rows(missing)
