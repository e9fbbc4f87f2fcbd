"""A verifier whose answers are all invalid is flagged, not scored as a good ranker (issue #15).

Before: a model with 100% invalid responses scored vote-share NDCG 0.71-0.96 (all vote
shares 0, so the "ranking" was the list order) and a 0.0 flip rate (no decision on either
side counted as "did not flip"). These tests run `aletheia evaluate --responses FILE`, the
command a user runs, on the fixture dataset.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.common.hub_folder import read_config
from pipeline.evaluate.metrics import ndcg
from pipeline.evaluate.protocol import round_robin_pairs


def _responses(data: Path, splits: list[str], answer: str, k: int = 4) -> list[dict]:
    """Every listwise sample and every round-robin pair of every row answered `answer`."""
    out = []
    for split in splits:
        for r in read_config(data, split).to_pylist():
            key = {"split": split, "instance_id": r["instance_id"]}
            out += [key | {"sample": s, "response": answer} for s in range(k)]
            out += [
                key | {"pair": [i, j], "response": answer}
                for i, j in round_robin_pairs(r["num_candidates"])
            ]
    return out


def _run(tmp_path: Path, data: Path, rows: list[dict], *extra: str) -> tuple[dict, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "eval"
    result = CliRunner().invoke(
        app, ["evaluate", "--responses", str(path), "--data", str(data), "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_all_invalid_responses_are_flagged_and_score_no_ranking(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    rows = _responses(eval_dataset_dir, ["heldout", "adv"], "I cannot tell which one.")
    report, md = _run(tmp_path, eval_dataset_dir, rows)

    # What the old vote-share NDCG gave these rows: the list order scored against pass rates.
    heldout = read_config(eval_dataset_dir, "heldout").to_pylist()
    old = [ndcg([0.0] * r["num_candidates"], r["pass_rates"]) for r in heldout]
    assert max(old) == 1.0 and sum(old) / len(old) > 0.7  # "NDCG 0.71-0.96" from nothing

    for split in ("heldout", "adv"):
        m = report["splits"][split]
        a, v = m["aletheia"], m["vote_share"]
        assert a["invalid_rate"] == 1.0 and a["pair_verdicts_invalid"] == a["pair_verdicts"] == 27
        # ranking metrics: undefined, beside the zero they rest on
        assert (v["ndcg"], v["ndcg_instances"]) == (None, 0)
        assert (v["pairwise_accuracy"], v["pairwise_pairs"]) == (None, 0)
        assert (a["ndcg"], a["lists_scored"], a["pairwise_counted"]) == (None, 0, 0)
        assert len(m["flags"]) == 2  # listwise and pair answers
        assert "100% of 36 listwise responses have no valid answer" in m["flags"][0]
        assert "100% of 27 pair-prompt answers" in m["flags"][1] and "0 of 9 lists" in m["flags"][1]
    assert len(report["flags"]) == 4 and report["flags"][0].startswith("heldout: mostly invalid")

    # flips: no pair has a decision on both sides, so the rate is undefined, not 0.0
    for bias, f in report["flip"].items():
        assert f["valid"] == 0 and f["flip_rate"] is None and f["correct_to_wrong"] is None, bias

    # markdown: the warning opens the report and each section, before any number
    first_table = md.index("| split |")
    assert md.index("> **Warning** (heldout): mostly invalid: 100%") < first_table
    vote_section = md[md.index("## Vote-share") :]
    assert vote_section.index("> **Warning** (adv): mostly invalid") < vote_section.index(
        "| split |"
    )
    # the fixture's Adv: 6 rows with the authority edit; pairs, valid pairs, rates
    assert "| authority | 6 | 0 | - | - |" in md
    # and the random baseline sits under the split for comparison
    assert "| ↳ random verifier (expected) |" in md


def test_the_flag_threshold_comes_from_the_evaluate_config(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    # 1 of 4 listwise samples invalid (25%), pairs all valid: below the default 50%
    rows = _responses(eval_dataset_dir, ["heldout"], "\\boxed{A}")
    for r in rows:
        if r.get("sample") == 3 and "pair" not in r:
            r["response"] = "no box"
    report, md = _run(tmp_path / "default", eval_dataset_dir, rows)
    assert report["splits"]["heldout"]["aletheia"]["invalid_rate"] == 0.25
    assert report["flags"] == [] and "Warning" not in md

    cfg = tmp_path / "eval.yaml"
    cfg.write_text(yaml.safe_dump({"invalid_flag_above": 0.2}))
    report, md = _run(tmp_path / "strict", eval_dataset_dir, rows, "--stage-config", str(cfg))
    assert report["config"]["invalid_flag_above"] == 0.2
    expected = (
        "heldout: mostly invalid: 25% of 36 listwise responses have no valid answer "
        "(flagged above 20%); they count as wrong answers"
    )
    assert report["flags"] == [expected]
