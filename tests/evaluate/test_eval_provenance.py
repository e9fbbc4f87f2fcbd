"""`aletheia evaluate --responses` records what the responses were generated with (issue 30).

Before: re-scoring the demo's K = 2, constrained responses wrote EvalConfig's defaults into
report.json (k 8, 16384 tokens, unconstrained), and the command printed the whole report.
Now a model run writes `responses.generation.json` beside `responses.jsonl`; scoring a file
reads the one beside it ("unknown" for what it does not give, or without one), and prints
a few lines and the report's path. Real tiny model, real transformers backend, the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.evaluate import evaluate
from pipeline.evaluate.provenance import GENERATION_FIELDS, UNKNOWN, provenance_path

# The demo's evaluation knobs, smaller: K = 2, a short budget, constrained answers.
DEMO_LIKE = {
    "k": 2,
    "max_new_tokens": 6,
    "limit": 2,
    "splits": ["heldout", "strong"],
    "constrain_answer": True,
    "progress": False,
    "backend": {"type": "transformers", "device": "cpu", "batch_size": 4, "threads": 1},
}


def _score(responses: Path, data: Path, out: Path, *extra: str) -> tuple[dict, str]:
    result = CliRunner().invoke(
        app, ["evaluate", "--responses", str(responses), "--data", str(data), "--out", str(out),
              *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), result.output


def test_rescoring_records_the_settings_the_responses_were_generated_with(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    first = evaluate(tiny_model_dir, eval_dataset_dir, tmp_path / "run", DEMO_LIKE)
    written = tmp_path / "run" / "responses.jsonl"
    beside = json.loads(provenance_path(written).read_text())
    assert provenance_path(written).name == "responses.generation.json"
    assert beside["model"] == str(tiny_model_dir)
    assert (beside["k"], beside["max_new_tokens"], beside["constrain_answer"]) == (2, 6, True)
    assert beside["backend"]["batch_size"] == 4 and beside["style"] == "think"
    assert first["generated_with"] == beside

    report, stdout = _score(written, eval_dataset_dir, tmp_path / "again")
    # not EvalConfig's defaults (k 8, 16384 tokens, unconstrained): the file's own settings
    assert report["generated_with"] == beside
    assert "k" not in report["config"] and "max_new_tokens" not in report["config"]
    assert report["config"] == {
        "split": "test",
        "invalid_flag_above": 0.5,
        "answer_rule": "after_think",
    }
    assert report["answer_rule"]["rule"] == "after_think"
    assert report["splits"] == json.loads((tmp_path / "run" / "report.json").read_text())["splits"]
    md = (tmp_path / "again" / "report.md").read_text()
    assert "K = 2, 6 new tokens, constrained answers" in md and "Constrained answers" in md
    # the copy of the responses carries the settings on, so scoring it again knows them too
    again = tmp_path / "again" / "responses.jsonl"
    assert json.loads(provenance_path(again).read_text()) == beside
    assert _score(again, eval_dataset_dir, tmp_path / "third")[0]["generated_with"] == beside

    # stdout: what was scored, a line per split, the report's path; not the whole report
    assert "K = 2, 6 new tokens, constrained answers" in stdout
    assert "## Aletheia protocol" not in stdout and "| heldout |" not in stdout
    assert [ln.split()[0] for ln in stdout.splitlines() if ln.startswith(("heldout", "strong"))] \
        == ["heldout", "strong"]  # fmt: skip
    assert f"report: {tmp_path / 'again' / 'report.md'}" in stdout
    assert len(stdout.splitlines()) < 12


def test_a_file_without_settings_says_unknown_not_the_defaults(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    evaluate(tiny_model_dir, eval_dataset_dir, tmp_path / "run", DEMO_LIKE | {"k": 1})
    bare = tmp_path / "served" / "responses.jsonl"  # generated elsewhere: no companion file
    bare.parent.mkdir()
    bare.write_text((tmp_path / "run" / "responses.jsonl").read_text())

    # its first 2 rows of each split, and no companion saying `limit: 2`: partial on purpose
    report, stdout = _score(bare, eval_dataset_dir, tmp_path / "a", "--allow-partial")
    assert report["generated_with"] == {f: UNKNOWN for f in GENERATION_FIELDS}
    assert "generation settings unknown" in stdout
    assert "generation settings unknown" in (tmp_path / "a" / "report.md").read_text()
    assert "Constrained answers" not in (tmp_path / "a" / "report.md").read_text()

    # a companion giving some settings: those are recorded, the rest stay unknown; keys
    # beyond ours (the generator's own record) are kept
    provenance_path(bare).write_text(json.dumps({"model": "served-7b", "k": 1, "server": "vllm"}))
    got = _score(bare, eval_dataset_dir, tmp_path / "b", "--allow-partial")[0]["generated_with"]
    assert (got["model"], got["k"], got["server"]) == ("served-7b", 1, "vllm")
    assert got["max_new_tokens"] == UNKNOWN and got["constrain_answer"] == UNKNOWN

    # a companion that is not a JSON object is an error naming it, not a silent "unknown"
    provenance_path(bare).write_text("[1, 2]")
    result = CliRunner().invoke(
        app, ["evaluate", "--responses", str(bare), "--data", str(eval_dataset_dir),
              "--out", str(tmp_path / "c"), "--allow-partial"],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "responses.generation.json" in str(result.exception) + result.output
