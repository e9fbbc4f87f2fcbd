"""The aletheia-ablation flow end to end at demo size, on a real Prefect server: tiny random
models through the real TRL trainers (GRPO-Think at three budgets, GRPO-Instruct, DPO-Think,
RAFT-Think, BatchOnline-GRPO-Think, STaR-Think, ReST-EM-Think), the real evaluation with
constrained answers on a small published folder (tests/train/rowgen.py), one table, one
Pareto plot. A cell that fails does not stop the others, and the next run redoes it alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.flows.flows_helpers import REPO
from tests.train.rowgen import write_dataset

CORE = ["grpo-think", "grpo-instruct", "dpo-think", "raft-think"]
RECIPES = CORE + ["grpo-think@8k", "grpo-think@16k", "batchonline-grpo-think", "star-think",
                  "restem-think"]  # fmt: skip
TITLES = ["GRPO-Think 4k", "GRPO-Instruct", "DPO-Think", "RAFT-Think", "GRPO-Think 8k",
          "GRPO-Think 16k", "BatchOnline-GRPO-Think 4k", "STaR-Think", "ReST-EM-Think"]  # fmt: skip
SPLITS = ["heldout", "strong", "hard", "adv"]


def _config(tmp_path: Path, model: Path, data: Path, raft: dict) -> Path:
    cfg = yaml.safe_load((REPO / "configs" / "ablation" / "demo.yaml").read_text())
    cfg.update(out_dir=str(tmp_path / "ablation"), data_dir=str(data),
               models={"think": str(model), "instruct": str(model)})  # fmt: skip
    cfg["train"]["data"]["limit"] = 4
    cfg["train"]["optim"]["max_steps"] = 1
    cfg["train"]["raft"].update(raft)
    cfg["evaluation"].update(limit=3, max_new_tokens=16)
    path = tmp_path / "ablation.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _stamps(out: Path, recipes: list[str]) -> dict[str, int]:
    files = [out / "cells" / r.replace("@", "-") / sub for r in recipes
             for sub in ("train/summary.json", "train/final/model.safetensors", "eval/report.json")]  # fmt: skip
    return {str(f): f.stat().st_mtime_ns for f in files}


@pytest.mark.timeout(3600)
def test_ablation_demo_with_a_failed_cell_redone_alone(
    prefect_api: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from flows.ablation import aletheia_ablation

    data = write_dataset(tmp_path / "data")
    out = tmp_path / "ablation"

    # Run 1: RAFT samples freely from a random model: no response is correct, nothing to learn.
    broken = _config(
        tmp_path, tiny_model_dir, data, {"constrain_answer": False, "num_generations": 2}
    )
    with pytest.raises(RuntimeError, match="raft-think .*NothingToLearnError"):
        aletheia_ablation(str(broken))
    raft_state = json.loads((out / "cells" / "raft-think" / "cell.json").read_text())
    assert raft_state["status"] == "failed" and "nothing to learn" in raft_state["error"]
    partial = json.loads((out / "comparison.json").read_text())
    others = [r for r in RECIPES if r != "raft-think"]
    assert [r["recipe"] for r in partial["rows"]] == others
    assert list(partial["failed"]) == ["raft-think"]
    assert "Failed cells" in (out / "comparison.md").read_text()
    done = _stamps(out, others)

    # Run 2, RAFT fixed: only RAFT trains and is evaluated; the finished cells are read back.
    fixed = _config(tmp_path, tiny_model_dir, data, {"constrain_answer": True})
    result = aletheia_ablation(str(fixed))
    assert result["rows"] == len(RECIPES)
    assert _stamps(out, others) == done, "a finished cell was trained or evaluated again"

    cmp = json.loads((out / "comparison.json").read_text())
    assert [r["recipe"] for r in cmp["rows"]] == RECIPES and cmp["failed"] == {}
    assert cmp["splits"] == SPLITS and cmp["k"] == 2 and cmp["eval_split"] is None
    assert [r["title"] for r in cmp["rows"]] == TITLES
    for row in cmp["rows"]:
        cell = out / "cells" / row["recipe"].replace("@", "-")
        state = json.loads((cell / "cell.json").read_text())
        report = json.loads(Path(state["report"]).read_text())
        assert report["config"]["style"] == (
            "instruct" if row["recipe"] == "grpo-instruct" else "think"
        )
        for split in SPLITS:  # the table is the report's protocol section, split by split
            a = report["splits"][split]["aletheia"]
            m = row["metrics"][split]
            assert m["top1_accuracy"] == a["top1_accuracy"]
            assert m["majority_accuracy"] == a["majority_accuracy"]
            assert m["instances"] == 3 and m["k"] == 2
            # constrained answers (issue 30): every answer parses, so the table has numbers
            assert report["config"]["constrain_answer"] is True
            assert m["top1_accuracy"] is not None and m["kendall_tau_b"] is not None
            assert m["flags"] == []
        summary = json.loads((cell / "train" / "summary.json").read_text())
        assert row["cost"] == summary["cost"] and row["cost"]["device_hours"] > 0
        assert row["cost"]["tokens"] > 0 and row["cost"]["steps"] == 1
    axes = {r["recipe"]: r["axes"] for r in cmp["rows"]}
    assert axes["grpo-instruct"]["thinking"] is False and axes["raft-think"]["negatives"] is False
    assert axes["dpo-think"]["on_policy"] is False
    raft = json.loads((out / "cells" / "raft-think" / "train" / "summary.json").read_text())
    assert raft["raft"]["episodes"][0]["rows_kept"] > 0
    _check_new_cells(out)

    md = (out / "comparison.md").read_text()
    for title in TITLES:
        assert f"| {title} |" in md
    assert "chance level" in md and "Answers constrained" in md  # the notes, also on the plot
    assert cmp["notes"][0].startswith("Demo: every cell starts from a tiny random model")
    assert "Flagged by the evaluation" not in md
    for split in SPLITS:
        for metric in ("top-1", "maj@K", "tau-b", "NDCG"):
            assert f"{split} {metric}" in md
    assert "Failed cells" not in md
    assert (out / "pareto.png").stat().st_size > 1000
    front = cmp["pareto"]["front"]
    assert front["device_hours"] and front["tokens"]  # someone is always on the front
    assert {p["recipe"] for p in cmp["pareto"]["points"]} == set(RECIPES)
    assert all(p["top1_accuracy"] is not None for p in cmp["pareto"]["points"])


def _check_new_cells(out: Path) -> None:
    """Issue 29's cells did what their recipes say."""
    import torch

    def train_dir(cell: str) -> Path:
        return out / "cells" / cell / "train"

    def config(cell: str) -> dict:
        return json.loads((train_dir(cell) / "config.json").read_text())

    budgets = {c: config(c)["grpo"]["max_completion_length"]
               for c in ("grpo-think", "grpo-think-8k", "grpo-think-16k")}  # fmt: skip
    assert budgets == {"grpo-think": 32, "grpo-think-8k": 64, "grpo-think-16k": 128}
    # BatchOnline: what TRL itself ran with (the checkpoint's training arguments)
    args = torch.load(train_dir("batchonline-grpo-think") / "checkpoints" / "checkpoint-1" /
                      "training_args.bin", weights_only=False)  # fmt: skip
    assert (args.steps_per_generation, args.importance_sampling_level) == (4, "sequence")
    assert (args.epsilon, args.epsilon_high) == (3e-4, 4e-4)

    # STaR: one plain response per prompt, a hinted one for each miss
    def samples(cell: str) -> list[dict]:
        path = train_dir(cell) / "episodes" / "0" / "samples.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()]

    star = samples("star-think")
    plain = [s for s in star if not s["hinted"]]
    assert sorted(s["row"] for s in plain) == [0, 1, 2, 3]
    assert sorted(s["row"] for s in star if s["hinted"]) == sorted(
        s["row"] for s in plain if not s["correct"])  # fmt: skip
    assert any(s["kept"] for s in star) and config("star-think")["method"] == "star"
    # ReST-EM: up to 5 of its correct responses per prompt
    restem = samples("restem-think")
    for row in {s["row"] for s in restem}:
        right = sum(s["correct"] for s in restem if s["row"] == row)
        assert sum(s["kept"] for s in restem if s["row"] == row) == min(right, 5)
    assert config("restem-think")["restem"]["keep_per_prompt"] == 5


def test_the_ablation_deployments_and_configs() -> None:
    from pipeline.train.ablation import train_config
    from pipeline.train.ablation_config import AblationConfig

    deps = yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"]
    ablation = {
        d["name"]: d for d in deps if d["entrypoint"] == "flows/ablation.py:aletheia_ablation"
    }
    assert set(ablation) == {"demo", "7b"}
    for d in ablation.values():
        path = REPO / d["parameters"]["ablation_config"]
        cfg = AblationConfig.from_yaml(path)
        assert cfg.recipes == RECIPES
        for recipe in cfg.recipes:
            train_config(cfg, recipe)  # every cell resolves
    for size in ("1.5b", "7b", "14b"):
        cfg = AblationConfig.from_yaml(REPO / "configs" / "ablation" / f"{size}.yaml")
        assert cfg.size == size and cfg.launcher.type == "accelerate"
        assert str(cfg.data_dir) == "/data/aletheia/hub"
        assert train_config(cfg, "grpo-think").model.endswith(f"Qwen-{size.upper()}")
