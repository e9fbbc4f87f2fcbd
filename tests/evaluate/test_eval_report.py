"""evaluate() end to end on the tiny model over all four eval splits, and the two CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.evaluate import EvalConfig, evaluate
from pipeline.evaluate.config import EVAL_SPLITS
from pipeline.evaluate.report import to_markdown

SMALL = EvalConfig(k=2, max_new_tokens=8, limit=2, temperature=1.0)


def test_report_covers_all_four_eval_splits_and_its_responses_rescore_the_same(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    report = evaluate(tiny_model_dir, eval_dataset_dir, tmp_path / "eval", SMALL)
    assert list(report["splits"]) == list(EVAL_SPLITS)
    rows = [json.loads(x) for x in (tmp_path / "eval" / "responses.jsonl").read_text().splitlines()]
    for split, m in report["splits"].items():
        a = m["aletheia"]
        assert a["instances"] == 2 and a["k"] == 2, split
        assert (
            0.0 <= a["top1_accuracy"] <= 1.0 and a["majority_accuracy"] <= a["best_of_k_accuracy"]
        )
        # the fixture's lists have 3 candidates: 3 round-robin pairs each, one sample per pair
        assert a["lists"] == 2 and a["pair_verdicts"] == 6, split
        assert m["vote_share"]["instances"] == 2
        cal = m["calibration"]  # the K = 2 votes' share as confidence (calibration.py)
        assert cal["instances"] == 2 and cal["k"] == 2
        assert cal["scored"] + cal["unscored"] == 2
        assert sum(b["n"] for b in cal["bins"]) == cal["scored"] and len(cal["bins"]) == 10
        mine = [r for r in rows if r["split"] == split]
        assert len([r for r in mine if r["pair"] is None]) == 2 * 2
        assert sorted({tuple(r["pair"]) for r in mine if r["pair"]}) == [(0, 1), (0, 2), (1, 2)]
    assert "authority" in report["flip"]  # the Adv fixture's first bias type, paired by prompt_id
    on_disk = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert list(on_disk["splits"]) == list(EVAL_SPLITS)
    md = (tmp_path / "eval" / "report.md").read_text()
    assert md.index("## Aletheia protocol") < md.index("## Vote-share metrics")
    for split in EVAL_SPLITS:
        assert md.count(f"| {split} |") >= 4  # both metric tables, calibration, gold positions
    assert md.index("## Self-consistency curves") < md.index("## Calibration")

    # The same responses, scored from the file without a model, give the same numbers.
    again = evaluate(
        None,
        eval_dataset_dir,
        tmp_path / "rescored",
        responses=tmp_path / "eval" / "responses.jsonl",
    )
    assert (
        json.loads((tmp_path / "rescored" / "report.json").read_text())["splits"]
        == on_disk["splits"]
    )
    assert again["model"] is None


def test_markdown_puts_the_aletheia_protocol_first() -> None:
    nan = float("nan")
    aletheia = {
        "instances": 3,
        "k": 4,
        "top1_accuracy": 0.5,
        "majority_accuracy": 2 / 3,
        "best_of_k_accuracy": 1.0,
        "invalid_rate": 0.0,
        "lists": 2,
        "lists_scored": 2,
        "kendall_tau_b": -1.0,
        "kendall_tau_b_undefined": 1,
        "ndcg": 0.9,
        "pairwise_accuracy": 0.75,
        "pairwise_counted": 4,
        "transitivity": nan,
    }
    vote = {
        "instances": 3, "k": 4, "top1_accuracy": 0.5, "self_consistency_accuracy": 2 / 3,
        "best_of_n_accuracy": 1.0, "invalid_rate": 0.0, "pairwise_accuracy": 0.75,
        "pairwise_pairs": 6, "kendall_tau_b": nan, "kendall_tau_b_instances": 0, "ndcg": 0.9,
        "ndcg_instances": 3, "accuracy_by_gold_position": {"A": 1.0, "C": 0.0},
    }  # fmt: skip
    random = {"aletheia": {"top1_accuracy": 1 / 3, "kendall_tau_b": -0.25},
              "vote_share": {"top1_accuracy": 1 / 3}}  # fmt: skip
    best = {"letter": "C", "aletheia": aletheia | {"top1_accuracy": 0.25}, "vote_share": vote}
    always_a = {"letter": "A", "aletheia": aletheia | {"top1_accuracy": 0.0}, "vote_share": vote}
    split = {
        "aletheia": aletheia, "vote_share": vote, "flags": ["mostly invalid: 90% of ..."],
        "baselines": {"random": random, "always_a": always_a, "best_letter": best},
    }  # fmt: skip
    md = to_markdown(
        {"model": "m", "config": {"k": 4, "style": "think"}, "splits": {"heldout": split}}
    )
    assert (
        "| heldout | 3 | 4 | 0.500 | 0.667 | 1.000 | 0.000 | 2 | 2 | -1.000 | 1 | 0.900 | 0.750 | 4 "
        "| - |" in md
    )
    assert (
        "| heldout | 3 | 4 | 0.500 | 0.667 | 1.000 | 0.000 | 0.750 | 6 | - | 0 | 0.900 | 3 |" in md
    )
    # the baselines sit under the split's row, each in the section's own columns
    aletheia_table = md[md.index("## Aletheia protocol") : md.index("## Vote-share")]
    assert "| ↳ random verifier (expected) |  |  | 0.333 |  |" in aletheia_table
    assert "| -0.250 |" in aletheia_table
    assert "| ↳ always A | 3 | 4 | 0.000 |" in aletheia_table
    assert "| ↳ always C (best letter) | 3 | 4 | 0.250 |" in aletheia_table
    # the flag: at the top of the report and of each section, before the table
    warning = "> **Warning** (heldout): mostly invalid: 90% of ..."
    assert md.count(warning) == 1 and md.index(warning) < md.index("## Aletheia protocol")
    short = "> **Warning** (heldout): mostly invalid answers (see the top)"
    assert md.count(short) == 2
    assert aletheia_table.index(short) < aletheia_table.index("| split |")
    assert "| heldout | 1.000 | 0.000 |" in md  # gold positions A and C (the letters present)
    assert md.index("Aletheia protocol") < md.index("Vote-share")


def test_missing_split_fails_before_loading_a_model(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(FileNotFoundError, match="dataset config 'heldout' not found"):
        evaluate(tmp_path / "no-model", tmp_path, tmp_path / "out", EvalConfig())
    with pytest.raises(ValueError, match="unknown dataset config 'nope'"):
        evaluate(tmp_path / "no-model", tmp_path, tmp_path / "out", EvalConfig(splits=["nope"]))


def test_a_budget_past_the_context_is_an_error_not_a_zero(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    import pytest

    cfg = EvalConfig(
        k=1, max_new_tokens=5000, limit=1, splits=["heldout"]
    )  # tiny model: 4096 positions
    with pytest.raises(RuntimeError, match="every generation failed.*prompt_too_long"):
        evaluate(tiny_model_dir, eval_dataset_dir, tmp_path / "eval", cfg)


def test_cli_train_then_evaluate(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    config = {
        "name": "cli-sft",
        "method": "sft",
        "model": str(tiny_model_dir),
        "output_dir": str(tmp_path / "sft"),
        "data": {"dir": str(eval_dataset_dir), "config": "dpo", "limit": 2},
        "optim": {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False, "use_cpu": True},
        "sft": {"max_length": 1024},
    }
    path = tmp_path / "sft.yaml"
    path.write_text(yaml.safe_dump(config))
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--config", str(path)])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "sft" / "summary.json").read_text())
    assert summary["global_step"] == 1

    result = runner.invoke(
        app,
        ["evaluate", "--model", summary["model_path"], "--data", str(eval_dataset_dir),
         "--out", str(tmp_path / "eval"), "--k", "1", "--limit", "1", "--max-new-tokens", "8"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # a line per split and where the report is (the whole report stays in report.md)
    assert any(ln.startswith("adv ") for ln in result.output.splitlines())
    assert f"report: {tmp_path / 'eval' / 'report.md'}" in result.output
    assert json.loads((tmp_path / "eval" / "report.json").read_text())["config"]["k"] == 1

    # --responses: score that run's responses again, no model loaded
    result = runner.invoke(
        app,
        ["evaluate", "--responses", str(tmp_path / "eval" / "responses.jsonl"),
         "--data", str(eval_dataset_dir), "--out", str(tmp_path / "rescored")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "no model loaded" in result.output and "K = 1, 8 new tokens" in result.output
    assert "## Aletheia protocol" in (tmp_path / "rescored" / "report.md").read_text()
    first = json.loads((tmp_path / "eval" / "report.json").read_text())["splits"]
    assert json.loads((tmp_path / "rescored" / "report.json").read_text())["splits"] == first

    both = runner.invoke(
        app, ["evaluate", "--model", "m", "--responses", str(tmp_path / "eval" / "responses.jsonl"),
              "--data", str(eval_dataset_dir), "--out", str(tmp_path / "x")],
    )  # fmt: skip
    assert both.exit_code != 0 and "exactly one of --model or --responses" in both.output
