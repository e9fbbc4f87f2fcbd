"""The `best-of-n` flow on a real ephemeral Prefect server: bundled stdio problems with samples
from a JSONL (reference and wrong programs, Python and C++), the tiny verifier in knockout
mode (lists of 2, so a second round), judged in the real sandbox; its progress and result
land as artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.flows.flows_helpers import REPO

PICKED = {  # problem slug -> its samples (solution files), in sample order
    "longest-climb": ("correct.py", "wrong_non_strict.py", "correct.cpp"),
    "prime-census": ("wrong_off_by_one.py", "correct.py", "correct.cpp"),
}


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_best_of_n_flow_knockout(prefect_api: str, tiny_model_dir: Path, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client

    from flows.bestofn import best_of_n_flow
    from pipeline.problems.stage import ingest

    problems = tmp_path / "problems.parquet"
    ingest(["bundled"], problems, show_progress=False)
    lines = []
    for slug, files in PICKED.items():
        for name in files:
            code = (REPO / "data" / "bundled" / slug / "solutions" / name).read_text()
            language = {"py": "python", "cpp": "cpp"}[name.rsplit(".", 1)[1]]
            lines.append(json.dumps({"source_id": slug, "language": language, "code": code}))
    samples = tmp_path / "samples.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    config = {
        "verifier": str(tiny_model_dir),
        "mode": "knockout",
        "knockout_size": 2,
        "constrain_answer": True,
        "max_new_tokens": 4,
        "backend": {"type": "transformers", "device": "cpu", "batch_size": 8, "threads": 1},
        "bootstrap": {"resamples": 100},
    }
    out = tmp_path / "out"
    result = best_of_n_flow(config, str(problems), str(out), samples=str(samples))
    assert result["problems"] == 2 and result["n"] == 3
    counts = result["all"]["verifier_counts"]
    assert counts["picked_correct"] + counts["picked_wrong"] + counts["unparseable"] == 2
    assert result["all"]["methods"]["oracle"]["value"] == 1.0  # each has a correct sample
    assert result["all"]["methods"]["random"]["value"] == pytest.approx(2 / 3)
    logged = [json.loads(x) for x in (out / "best-of-n" / "verifier_responses.jsonl").open()]
    # N = 3 in lists of 2: a list of two, then its pick against the third
    assert {r["prompt"] for r in logged} >= {
        "knockout:n=3:round=1:group=0",
        "knockout:n=3:round=2:group=0",
    }
    assert all(len(r["shown"]) == 2 for r in logged)

    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(limit=200)
    latest = {a.key: a for a in sorted(arts, key=lambda a: a.created) if a.key}
    assert "| oracle (pass@N) | 1.000 |" in latest["best-of-n-knockout"].data
    assert float(latest["best-of-n-knockout-progress"].data) == 100.0
