"""`constrain_answer`: a random tiny model's answers all parse, so Aletheia's ranking metrics
(Kendall tau-b, NDCG, transitivity over round-robin pair verdicts) are defined on every
evaluation config: what the demo's evaluation after publish relies on. Real tiny model, real
transformers backend, real scoring; the dataset folder is in the published layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipeline.common.answers import valid_options
from pipeline.evaluate import evaluate
from pipeline.evaluate.config import EVAL_SPLITS
from pipeline.evaluate.report import headline

RANKING = ("kendall_tau_b", "ndcg", "transitivity")
KNOBS = {
    "k": 2,
    "max_new_tokens": 10,
    "progress": False,
    "backend": {"type": "transformers", "device": "cpu", "batch_size": 4, "threads": 1},
}


def test_constrained_answers_define_the_ranking_metrics_on_every_config(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    out = tmp_path / "eval"
    evaluate(tiny_model_dir, eval_dataset_dir, out, KNOBS | {"constrain_answer": True})
    report = json.loads((out / "report.json").read_text())  # as written: NaN would be null
    assert list(report["splits"]) == list(EVAL_SPLITS)
    for split, m in report["splits"].items():
        a = m["aletheia"]
        assert a["instances"] == 9 and a["invalid_rate"] == 0.0, split
        # every list has 3 candidates: 3 pairs each, every verdict a letter
        assert a["pair_verdicts"] == 27 and a["pair_verdicts_invalid"] == 0, split
        for key in RANKING:
            assert a[key] is not None, f"{split}: {key} is null"
        assert -1.0 <= a["kendall_tau_b"] <= 1.0 and 0.0 <= a["ndcg"] <= 1.0, split
        assert 0.0 <= a["transitivity"] <= 1.0, split
    # each response is free text then \boxed{X}, X a letter of its own prompt
    for line in (out / "responses.jsonl").read_text().splitlines():
        row = json.loads(line)
        letters = valid_options(2 if row["pair"] else 3)
        found = re.findall(r"\\boxed\{([A-Z])\}$", row["response"])
        assert found and found[0] in letters, row
    assert "Constrained answers" in (out / "report.md").read_text()
    # the demo's table: one line per config, its rows and three defined values with baselines
    lines = headline(report).splitlines()
    assert [ln.split()[0] for ln in lines[1:]] == list(EVAL_SPLITS)
    for ln in lines[1:]:
        cells = ln.split()
        assert cells[1] == "9" and "-" not in cells[2::2], ln


def test_unconstrained_the_random_model_leaves_the_ranking_metrics_undefined(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    """Why the demo constrains: free text from a random model never parses."""
    out = tmp_path / "eval"
    knobs = KNOBS | {"k": 1, "splits": ["heldout"]}
    evaluate(tiny_model_dir, eval_dataset_dir, out, knobs)
    a = json.loads((out / "report.json").read_text())["splits"]["heldout"]["aletheia"]
    assert a["invalid_rate"] == 1.0 and a["pair_verdicts_invalid"] == a["pair_verdicts"]
    assert all(a[key] is None for key in RANKING)
