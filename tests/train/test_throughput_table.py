"""docs/training.md's H200 table is the rendering of the committed measurements."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.train.throughput import markdown_table

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "docs" / "throughput-h200.json"


def test_docs_table_is_rendered_from_the_committed_json() -> None:
    table = markdown_table([MEASURED])
    assert table in (ROOT / "docs" / "training.md").read_text(encoding="utf-8")


def test_measurements_name_their_device_and_versions() -> None:
    runs = json.loads(MEASURED.read_text())["runs"]
    assert runs, "no runs recorded"
    for run in runs:
        env = run["env"]
        assert env["device"] == "NVIDIA H200"
        assert env["torch"].startswith("2.11") and env["trl"] and env["transformers"]
        assert {r["name"] for r in run["results"]} <= {"grpo", "grpo_lora", "dpo", "sft"}
        for r in run["results"]:
            assert r["peak_gpu_memory_gib"] > 0 and r["steady_steps_per_s"] > 0


def test_table_rows_follow_the_numbers(tmp_path: Path) -> None:
    run = json.loads(MEASURED.read_text())["runs"][0]
    run["results"] = [dict(run["results"][0], steady_steps_per_s=0.5, peak_gpu_memory_gib=3.25)]
    f = tmp_path / "t.json"
    f.write_text(json.dumps(run))
    row = markdown_table([f]).splitlines()[2]
    assert "| 2.00 |" in row and "| 3.2 GiB |" in row
