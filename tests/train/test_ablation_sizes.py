"""The ablation across sizes (the paper's relative-importance view), from per-size
comparison.json files written by hand: each gain and share below is worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.train.ablation_sizes import across_sizes, to_markdown

SPLITS = ["heldout", "strong"]


def _row(recipe: str, heldout: float, strong: float, budget: str | None = None) -> dict:
    metrics = {"heldout": {"top1_accuracy": heldout}, "strong": {"top1_accuracy": strong}}
    return {"recipe": recipe if budget in (None, "4k") else f"{recipe}@{budget}",
            "base_recipe": recipe, "budget": budget, "metrics": metrics,
            "mean": {"top1_accuracy": (heldout + strong) / 2}}  # fmt: skip


def _write(root: Path, size: str, rows: list[dict]) -> Path:
    folder = root / size
    folder.mkdir(parents=True)
    result = {"size": size, "budget": "4k", "splits": SPLITS, "rows": rows,
              "pareto": {"metric": "top1_accuracy"}}  # fmt: skip
    (folder / "comparison.json").write_text(json.dumps(result))
    return folder


def _sizes(tmp_path: Path) -> list[Path]:
    seven = _write(tmp_path, "7b", [
        _row("grpo-think", 0.70, 0.50, "4k"),      # mean 0.60
        _row("grpo-instruct", 0.55, 0.45),         # mean 0.50 -> thinking +0.10
        _row("raft-think", 0.60, 0.50),            # mean 0.55 -> negatives +0.05
        _row("dpo-think", 0.50, 0.40),             # mean 0.45 -> on-policy +0.15
        _row("grpo-think", 0.64, 0.60, "8k"),      # mean 0.62
        _row("grpo-think", 0.70, 0.60, "16k"),     # mean 0.65
    ])  # fmt: skip
    small = _write(tmp_path, "1.5b", [
        _row("grpo-think", 0.40, 0.40, "4k"),      # mean 0.40
        _row("grpo-instruct", 0.50, 0.40),         # mean 0.45 -> thinking -0.05
        _row("raft-think", 0.30, 0.40),            # mean 0.35 -> negatives +0.05
    ])  # no DPO-Think cell: on-policy undefined  # fmt: skip
    return [seven, small]  # out of order on purpose


def test_gains_and_shares_by_hand(tmp_path: Path) -> None:
    view = across_sizes(_sizes(tmp_path))
    assert view["metric"] == "top1_accuracy"
    small, seven = view["sizes"]  # sorted: 1.5b first
    assert (small["size"], seven["size"]) == ("1.5b", "7b")

    g = seven["gains"]
    assert g["thinking"]["gain"] == pytest.approx(0.10)
    assert g["negatives"]["gain"] == pytest.approx(0.05)
    assert g["on_policy"]["gain"] == pytest.approx(0.15)
    # shares: 0.10 / 0.30, 0.05 / 0.30, 0.15 / 0.30
    assert [g[a]["share"] for a in ("thinking", "negatives", "on_policy")] == pytest.approx(
        [1 / 3, 1 / 6, 1 / 2]
    )
    # per split: heldout 0.70 - 0.55, strong 0.50 - 0.45
    assert g["thinking"]["per_split"] == pytest.approx({"heldout": 0.15, "strong": 0.05})
    assert (g["on_policy"]["with"], g["on_policy"]["without"]) == pytest.approx((0.60, 0.45))
    assert seven["grpo_think_by_budget"] == pytest.approx({"4k": 0.60, "8k": 0.62, "16k": 0.65})

    s = small["gains"]
    assert s["thinking"]["gain"] == pytest.approx(-0.05)  # thinking hurt at this size
    assert s["negatives"]["gain"] == pytest.approx(0.05)
    assert s["on_policy"]["gain"] is None and s["on_policy"]["share"] is None  # not 0
    assert (s["thinking"]["share"], s["negatives"]["share"]) == pytest.approx((0.5, 0.5))
    assert small["grpo_think_by_budget"] == {"4k": pytest.approx(0.40), "8k": None, "16k": None}

    md = to_markdown(view)
    assert "| 1.5b | -0.050 | +0.050 | - | 0.500 | 0.500 | - | 0.400 | - | - |" in md
    assert "| 7b | +0.100 | +0.050 | +0.150 | 0.333 | 0.167 | 0.500 | 0.600 | 0.620 | 0.650 |" in md


def test_across_from_the_command_line(tmp_path: Path) -> None:
    from aletheia.cli import app

    paths = _sizes(tmp_path)
    out = tmp_path / "view"
    args = ["ablation", "--out", str(out)]
    for p in paths:
        args += ["--across", str(p)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| 7b | +0.100 |" in result.output
    view = json.loads((out / "across_sizes.json").read_text())
    assert [s["size"] for s in view["sizes"]] == ["1.5b", "7b"]
    assert (out / "across_sizes.md").read_text() == to_markdown(
        {k: v for k, v in view.items() if k != "files"}
    )


def test_two_comparisons_of_one_size_are_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", "7b", [_row("grpo-think", 0.5, 0.5, "4k")])
    b = _write(tmp_path / "b", "7b", [_row("grpo-think", 0.5, 0.5, "4k")])
    with pytest.raises(ValueError, match="two comparisons of one size"):
        across_sizes([a, b])
    with pytest.raises(FileNotFoundError, match="no comparison.json"):
        across_sizes([tmp_path / "missing"])
