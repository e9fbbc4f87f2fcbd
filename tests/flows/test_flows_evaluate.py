"""The evaluation after publish (`evaluate:` in the run config: the build graph's `evaluate`
node, run by the build flows' Prefect executor, publish standing done) on a real
ephemeral Prefect server with a real tiny model: its report lands outside the hub folder, the
hub folder is left as it was, and a second run executes nothing (its marker matched)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import flow

from pipeline.common.hashing import sha256_files
from pipeline.config import load_run_config
from tests.flows.flows_helpers import given_result, run_graph_nodes
from tests.train.rowgen import write_dataset


@flow(name="evaluate-published-test")
def _evaluate(config: dict[str, Any]) -> dict[str, Any]:
    cfg = load_run_config(config)
    published = {"publish": given_result(hub=str(cfg.hub_dir))}  # as if publish wrote it
    return run_graph_nodes(cfg, ["evaluate"], published)["evaluate"]


def test_evaluation_after_publish_is_cached_and_leaves_the_hub_folder_alone(
    prefect_api: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    hub = write_dataset(out_dir / "hub")
    config = {
        "out_dir": str(out_dir),
        "evaluate": {
            "model": str(tiny_model_dir),
            "splits": ["heldout", "adv"],
            "k": 1,
            "max_new_tokens": 6,
            "constrain_answer": True,
            "backend": {"type": "transformers", "device": "cpu", "batch_size": 4, "threads": 1},
        },
    }
    hub_files = sorted(p for p in hub.rglob("*") if p.is_file())
    before = sha256_files(hub_files)

    first = _evaluate(config)
    assert not first["cached"]
    report_path = out_dir / "eval" / "report.json"
    assert Path(first["outputs"]["report"]).resolve() == report_path.resolve()
    report = json.loads(report_path.read_text())
    assert list(report["splits"]) == ["heldout", "adv"]
    assert report["config"]["constrain_answer"] and report["config"]["k"] == 1
    for split, m in report["splits"].items():
        assert m["aletheia"]["kendall_tau_b"] is not None, split
        assert m["aletheia"]["transitivity"] is not None, split
    # Calibration per split: constrained answers all parse, so every instance has a confidence
    # (K = 1: each is 1), and a reliability diagram sits beside the report.
    markdown = (out_dir / "eval" / "report.md").read_text()
    assert "## Calibration" in markdown and "![reliability diagram, heldout]" in markdown
    for split, m in report["splits"].items():
        cal = m["calibration"]
        assert cal["scored"] == m["aletheia"]["instances"] and cal["mean_confidence"] == 1.0, split
        assert (out_dir / "eval" / f"reliability_{split}.png").is_file()
    # the hub folder is what would be pushed: not one file added or changed
    assert sorted(p for p in hub.rglob("*") if p.is_file()) == hub_files
    assert sha256_files(hub_files) == before

    written = report_path.stat().st_mtime_ns
    second = _evaluate(config)
    assert second["cached"] and second["digest"] == first["digest"]
    assert report_path.stat().st_mtime_ns == written  # the marker matched: nothing re-run
    marker = json.loads((out_dir / "eval" / "_stage.json").read_text())
    assert marker["stage"] == "evaluate" and marker["stats"]["splits"] == ["heldout", "adv"]
    assert marker["stats"]["build"] == load_run_config(config).build_id  # the build's own
    assert sorted(p for p in hub.rglob("*") if p.is_file()) == hub_files  # still untouched
