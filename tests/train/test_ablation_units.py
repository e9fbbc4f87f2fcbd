"""The ablation's parts that need no training: cells from the zoo, which published split is
scored, the Pareto front, the guard against retraining a cell with other settings, and the
accelerate launch of a cell. (The whole ablation runs in tests/flows/test_ablation.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import UserError
from pipeline.train.ablation import (
    eval_config,
    eval_split,
    launch_args,
    published_splits,
    train_cell,
    train_config,
)
from pipeline.train.ablation_config import AblationConfig
from pipeline.train.ablation_report import pareto_front


def _cfg(tmp_path: Path, data: Path, **fields) -> AblationConfig:
    return AblationConfig.model_validate(
        {"out_dir": tmp_path / "out", "data_dir": data, "size": "7b"} | fields
    )


def _folder(root: Path, config: str, splits: list[str]) -> None:
    (root / config).mkdir(parents=True)
    for split in splits:
        pq.write_table(pa.table({"x": [1]}), root / config / f"{split}-00000-of-00001.parquet")


def test_cells_are_the_zoo_cells_at_the_ablation_size(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, tmp_path, models={"instruct": "local/instruct"},
               train={"optim": {"max_steps": 3}},
               recipe_train={"raft-think": {"raft": {"num_generations": 2}}})  # fmt: skip
    g = train_config(cfg, "grpo-think")
    assert (g.name, g.grpo.max_completion_length, g.model) == (
        "grpo-think-7b-4k", 4096, "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")  # fmt: skip
    assert g.output_dir == tmp_path / "out" / "cells" / "grpo-think" / "train"
    assert g.optim.max_steps == 3 and g.data.dir == tmp_path
    assert train_config(cfg, "grpo-instruct").model == "local/instruct"  # the family's override
    r = train_config(cfg, "raft-think")
    assert (r.raft.num_generations, r.optim.max_steps) == (2, 3)
    assert train_config(cfg, "dpo-think").raft.num_generations == 16  # recipe_train is per recipe
    with pytest.raises(UserError, match="not in this ablation's recipes"):
        train_config(cfg, "sft-think")


def test_published_splits_and_the_split_scored(tmp_path: Path) -> None:
    single, listwise = tmp_path / "single", tmp_path / "listwise"
    for name in ("heldout", "strong", "hard", "adv"):
        _folder(single, name, ["test"])
        _folder(listwise, name, ["test", "full"])
    assert published_splits(single, "heldout") == ["test"]
    assert published_splits(listwise, "heldout") == ["full", "test"]
    assert eval_split(_cfg(tmp_path, single)) is None  # one split: nothing to choose
    assert eval_split(_cfg(tmp_path, listwise)) == "test"  # several: `test`
    assert eval_split(_cfg(tmp_path, listwise, eval_split="full")) == "full"
    with pytest.raises(UserError, match="has \\['full', 'test'\\]"):
        eval_split(_cfg(tmp_path, listwise, eval_split="dev"))
    odd = tmp_path / "odd"
    for name in ("heldout", "strong", "hard", "adv"):
        _folder(odd, name, ["a", "b"])
    with pytest.raises(UserError, match="no `test`: set eval_split"):
        eval_split(_cfg(tmp_path, odd))
    with pytest.raises(UserError, match="no eval config 'heldout'"):
        eval_split(_cfg(tmp_path, tmp_path / "missing"))


def test_eval_config_is_the_same_protocol_with_the_recipes_prompt(tmp_path: Path) -> None:
    from pipeline.evaluate import EvalConfig

    single = tmp_path / "single"
    for name in ("heldout", "strong", "hard", "adv"):
        _folder(single, name, ["test"])
    cfg = _cfg(tmp_path, single, evaluation={"k": 4, "max_new_tokens": 64})
    think, instruct = eval_config(cfg, "grpo-think"), eval_config(cfg, "grpo-instruct")
    assert (think.style, instruct.style) == ("think", "instruct")
    for e in (think, instruct):
        assert (e.k, e.max_new_tokens, e.splits) == (4, 64, ["heldout", "strong", "hard", "adv"])
    listwise = tmp_path / "listwise"
    for name in ("heldout", "strong", "hard", "adv"):
        _folder(listwise, name, ["test", "full"])
    if "split" in EvalConfig.model_fields:  # the listwise evaluation: the split is passed
        assert eval_config(_cfg(tmp_path, listwise), "grpo-think").split == "test"
    else:  # reading test + full together would score both: refused
        with pytest.raises(UserError, match="reads a config folder whole"):
            eval_config(_cfg(tmp_path, listwise), "grpo-think")


def test_pareto_front_by_hand() -> None:
    points = [("a", 1.0, 0.5), ("b", 2.0, 0.7), ("c", 2.0, 0.6), ("d", 3.0, 0.7), ("e", 0.5, 0.1)]
    # c loses to b (same cost, less accurate), d to b (dearer, as accurate); a, b, e are the front
    assert pareto_front(points) == ["a", "b", "e"]
    assert pareto_front([("x", 1.0, 0.0), ("y", 1.0, 0.0)]) == ["x", "y"]  # ties beat nobody


def test_a_trained_cell_is_not_retrained_with_other_settings(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, tmp_path)
    folder = cfg.cell_dir("dpo-think")
    folder.mkdir(parents=True)
    (folder / "cell.json").write_text(json.dumps(
        {"recipe": "dpo-think", "status": "trained", "train_fingerprint": "other",
         "summary": {"model_path": "x"}}))  # fmt: skip
    with pytest.raises(UserError, match="trained already with other settings"):
        train_cell(cfg, "dpo-think")


def test_accelerate_launch_of_a_cell(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, tmp_path, launcher={"type": "accelerate"})
    args = launch_args(cfg, "grpo-think", tmp_path / "c.yaml")
    assert args == [sys.executable, "-m", "accelerate.commands.launch",
                    "--config_file", "configs/accelerate/deepspeed_zero2.yaml",
                    "--num_processes", "4", "-m", "aletheia", "train",
                    "--config", str(tmp_path / "c.yaml")]  # fmt: skip
    cpu = _cfg(tmp_path, tmp_path, launcher={"type": "accelerate", "config_file": "none",
                                              "num_processes": 1, "args": ["--cpu"]})  # fmt: skip
    assert launch_args(cpu, "dpo-think", tmp_path / "c.yaml")[3:7] == [
        "--num_processes", "1", "--cpu", "-m"]  # fmt: skip


def test_a_cells_fingerprint_ignores_other_methods_sections(tmp_path: Path) -> None:
    from pipeline.train.ablation import train_fingerprint

    base = _cfg(tmp_path, tmp_path)
    raft_changed = _cfg(tmp_path, tmp_path, train={"raft": {"num_generations": 2}})
    grpo_changed = _cfg(tmp_path, tmp_path, train={"grpo": {"num_generations": 8}})
    fp = {name: {r: train_fingerprint(train_config(c, r)) for r in ("grpo-think", "raft-think")}
          for name, c in (("base", base), ("raft", raft_changed), ("grpo", grpo_changed))}  # fmt: skip
    assert fp["raft"]["grpo-think"] == fp["base"]["grpo-think"]
    assert fp["raft"]["raft-think"] != fp["base"]["raft-think"]
    assert fp["grpo"]["grpo-think"] != fp["base"]["grpo-think"]
    assert fp["grpo"]["raft-think"] == fp["base"]["raft-think"]


def test_cells_at_several_budgets_and_the_new_recipes(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, tmp_path, recipes=["grpo-think", "grpo-think@16k", "batchonline-grpo-think",
                                            "star-think", "restem-think"],
               recipe_train={"grpo-think": {"grpo": {"num_generations": 4}},
                             "grpo-think@16k": {"grpo": {"max_completion_length": 128}}})  # fmt: skip
    g4, g16 = train_config(cfg, "grpo-think"), train_config(cfg, "grpo-think@16k")
    assert (g4.name, g4.grpo.max_completion_length, g4.grpo.num_generations) == (
        "grpo-think-7b-4k", 4096, 4)  # fmt: skip
    # the recipe's overrides reach every budget of it; the cell's come last
    assert (g16.name, g16.grpo.max_completion_length, g16.grpo.num_generations) == (
        "grpo-think-7b-16k", 128, 4)  # fmt: skip
    assert g16.output_dir == tmp_path / "out" / "cells" / "grpo-think-16k" / "train"
    b = train_config(cfg, "batchonline-grpo-think")
    assert (b.name, b.grpo.generate_every, b.grpo.importance_sampling_level) == (
        "batchonline-grpo-think-7b-4k", 4, "sequence")  # fmt: skip
    assert train_config(cfg, "star-think").method == "star"
    assert train_config(cfg, "restem-think").restem.keep_per_prompt == 5


@pytest.mark.parametrize(
    ("recipes", "recipe_train", "message"),
    [
        (["dpo-think@4k"], {}, "has one budget"),
        (["grpo-think@32k"], {}, "has budgets 4k, 8k, 16k"),
        (["grpo-think", "grpo-think@4k"], {}, "same cell as 'grpo-think'"),
        (["ppo"], {}, "unknown recipe 'ppo'"),
        (["grpo-think"], {"raft-think": {}}, "recipe_train: 'raft-think' is neither"),
    ],
)
def test_a_bad_cell_list_is_one_clear_error(
    tmp_path: Path, recipes: list[str], recipe_train: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _cfg(tmp_path, tmp_path, recipes=recipes, recipe_train=recipe_train)


def test_the_full_size_ablations_list_the_papers_grid() -> None:
    from pipeline.train.ablation_config import PAPER_CELLS

    repo = Path(__file__).resolve().parents[2]
    per_scale = {"1.5b": (8, 32), "7b": (8, 32), "14b": (1, 128)}  # grpo/dsqwen_*.yaml
    for size, (batch, accum) in per_scale.items():
        cfg = AblationConfig.from_yaml(repo / "configs" / "ablation" / f"{size}.yaml")
        assert cfg.recipes == PAPER_CELLS and cfg.budget == "4k"
        budgets = {e: train_config(cfg, e).grpo.max_completion_length
                   for e in ("grpo-think", "grpo-think@8k", "grpo-think@16k")}  # fmt: skip
        assert budgets == {"grpo-think": 4096, "grpo-think@8k": 8192, "grpo-think@16k": 16384}
        b = train_config(cfg, "batchonline-grpo-think")
        assert (b.optim.per_device_train_batch_size, b.optim.gradient_accumulation_steps) == (
            batch, accum)  # fmt: skip
        assert (b.grpo.generate_every, b.grpo.epsilon, b.grpo.epsilon_high) == (4, 3e-4, 4e-4)
        assert b.model.endswith(f"Qwen-{size.upper()}")
