"""RAFT trains for real: the tiny random Qwen2 samples responses through the transformers
backend, the project's one answer reader decides which are correct, only those are kept,
and TRL's SFTTrainer fine-tunes on them, episode after episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.answers import parse_answer
from pipeline.common.hub_folder import read_config
from pipeline.train import TrainConfig, train
from pipeline.train.raft import NothingToLearnError, keep_correct, sft_dataset

CPU = {"max_steps": 2, "per_device_train_batch_size": 2, "bf16": False, "use_cpu": True,
       "learning_rate": 1e-4, "save_steps": 1}  # fmt: skip


def _config(tmp_path: Path, model: Path, data: Path, **raft: Any) -> TrainConfig:
    return TrainConfig.model_validate(
        {"method": "raft", "model": str(model), "output_dir": tmp_path / "run",
         "data": {"dir": data, "config": "train", "limit": 4}, "optim": dict(CPU),
         "raft": {"num_generations": 4, "max_completion_length": 24, "max_length": 1024,
                  "backend": {"type": "transformers", "device": "cpu"}} | raft}
    )  # fmt: skip


def _samples(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def test_raft_learns_only_from_its_own_correct_responses(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    cfg = _config(tmp_path, tiny_model_dir, dataset_dir, constrain_answer=True, episodes=2)
    summary = train(cfg)
    rows = read_config(dataset_dir, "train", 4).to_pylist()
    ep0, ep1 = cfg.output_dir / "episodes" / "0", cfg.output_dir / "episodes" / "1"

    for folder in (ep0, ep1):
        samples = _samples(folder)
        assert len(samples) == 4 * 4  # 4 instances x 4 responses
        for s in samples:  # the one reader decides, on the whole turn (prefill included)
            row = rows[s["row"]]
            assert s["response"].startswith("<think>\n")
            assert s["answer"] == parse_answer(s["response"], row["num_candidates"])
            assert s["correct"] == (s["answer"] == row["chosen_answer"])
        kept = [s for s in samples if s["kept"]]
        assert kept and all(s["correct"] for s in kept)  # no negative is ever kept
        per_row = [s["row"] for s in kept]
        assert len(per_row) == len(set(per_row))  # keep_per_prompt 1
        assert set(per_row) == {s["row"] for s in samples if s["correct"]}
        stats = json.loads((folder / "stats.json").read_text())
        assert stats["correct"] == sum(s["correct"] for s in samples)
        assert stats["rows_kept"] == len(kept)
        assert any(not s["correct"] for s in samples), "a random model should miss sometimes"

    # Episode 1 samples from the model episode 0 wrote; the run's model is the last episode's.
    assert json.loads((ep1 / "stats.json").read_text())["model"] == str(ep0 / "final")
    assert (ep0 / "final" / "model.safetensors").exists()
    assert summary["model_path"] == str(cfg.output_dir / "final")
    assert summary["global_step"] == 2
    assert [e["episode"] for e in summary["raft"]["episodes"]] == [0, 1]
    cost = summary["cost"]
    assert cost["tokens"] > summary["raft"]["generated_tokens"] > 0  # sampled + trained on
    assert cost["wall_s"] > summary["train_runtime_s"]  # sampling and episode 0 count too

    # The training rows are exactly the kept responses, the prefill leading each completion.
    data = sft_dataset(cfg, rows, _samples(ep1))
    kept1 = [s for s in _samples(ep1) if s["kept"]]
    assert [d["completion"][0]["content"] for d in data] == [s["response"] for s in kept1]
    assert all(d["prompt"][-1]["role"] == "user" for d in data)

    # A re-run: finished episode 0 is not redone, episode 1's samples are reused.
    stamps = {p: p.stat().st_mtime_ns for p in (ep0 / "done.json", ep1 / "samples.jsonl")}
    again = train(cfg)
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert (
        again["raft"]["episodes"][1]["fingerprint"] == summary["raft"]["episodes"][1]["fingerprint"]
    )


def test_raft_with_nothing_correct_is_a_clear_error(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    # Sampled freely, a random model never writes a valid box: no positive, nothing to learn.
    cfg = _config(tmp_path, tiny_model_dir, dataset_dir, num_generations=2)
    with pytest.raises(NothingToLearnError, match="none of the 8 responses to 4 prompts"):
        train(cfg)
    stats = json.loads((cfg.output_dir / "episodes" / "0" / "stats.json").read_text())
    assert stats["correct"] == 0 and stats["responses"] == 8


def test_keep_correct_takes_at_most_n_correct_per_row() -> None:
    samples = [
        {"row": 0, "sample": 0, "correct": True},
        {"row": 0, "sample": 1, "correct": False},
        {"row": 0, "sample": 2, "correct": True},
        {"row": 0, "sample": 3, "correct": True},
        {"row": 1, "sample": 0, "correct": False},
        {"row": 2, "sample": 0, "correct": True},
    ]
    one = keep_correct(samples, 1, seed=0, episode=0)
    assert [s["row"] for s in one] == [0, 2] and all(s["correct"] for s in one)
    two = keep_correct(samples, 2, seed=0, episode=0)
    assert [s["row"] for s in two] == [0, 0, 2]
    assert keep_correct(samples, 5, seed=0, episode=0) == [s for s in samples if s["correct"]]
    assert keep_correct(samples, 1, seed=0, episode=0) == one  # seeded: the same draw


def test_raft_reads_instances_and_budget_leaves_room_for_the_prompt(tmp_path: Path) -> None:
    base = {"method": "raft", "model": "m", "output_dir": tmp_path}
    with pytest.raises(ValueError, match="method raft reads one of"):
        TrainConfig.model_validate(base | {"data": {"dir": tmp_path, "config": "dpo"}})
    cfg = TrainConfig.model_validate(base | {"data": {"dir": tmp_path, "config": "mixed"}})
    assert cfg.raft.budget == 20480 - 4096
    small = cfg.raft.model_copy(update={"max_length": 4096})
    with pytest.raises(ValueError, match="leaves no response budget"):
        _ = small.budget
