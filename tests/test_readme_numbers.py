"""The README's demo numbers are a demo build's: the block between its markers is
docs/demo-build.json (the record `scripts/readme_numbers.py record out/demo` writes from a
build) rendered, the record is of today's configs/demo.yaml and is a whole build's, and the
check fails, naming the value, when a number differs. The check against a real build's
published folder and stats runs on the flow tests' small build
(tests/flows/test_flows_build.py::test_readme_numbers_are_measured_from_the_build)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schemas.dataset_configs import CONFIGS
from scripts import readme_numbers as rn

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "readme_numbers.py"
RECORD = json.loads(rn.RECORD.read_text())
FIX = "python scripts/readme_numbers.py record"


def test_readme_block_is_the_record_rendered() -> None:
    problems = rn.check_readme(rn.README.read_text(), RECORD)
    assert not problems, "\n".join([*problems, f"run `{FIX} out/demo` after a demo build"])


def test_record_is_of_todays_demo_config() -> None:
    """A change to configs/demo.yaml (or to a default of a data section) makes another
    build: its numbers are not the record's until a demo build is recorded."""
    from pipeline.config import load_run_config

    build_id = load_run_config(REPO / "configs" / "demo.yaml").build_id
    assert RECORD["build_id"] == build_id, (
        f"docs/demo-build.json is of build {RECORD['build_id']}, configs/demo.yaml now makes "
        f"{build_id}: run `make demo`, then `{FIX} out/demo`"
    )


def test_record_is_a_whole_build() -> None:
    """Every config and split, rows that add up, Adv = Heldout's test once per bias type,
    DPO routes that add up to DPO's rows."""
    by = {(s["config"], s["split"]): s for s in RECORD["splits"]}
    for cfg in CONFIGS:
        splits = {split for (name, split) in by if name == cfg.name}
        assert splits in ({*cfg.splits}, {"test = full"}), (cfg.name, splits)
    for s in RECORD["splits"]:
        assert s["rows"] > 0 and 0 < s["problems"] <= RECORD["problems"], s
        if "sizes" in s:
            assert sum(s["sizes"].values()) == s["rows"], s
    edits = RECORD["adv_edits"]
    assert (
        by[("adv", "test = full")]["rows"] == edits["bias_types"] * by[("heldout", "test")]["rows"]
    )
    assert edits["carried_unchanged"] + edits["programs_rejudged"] <= edits["planned"]
    for name, routes in RECORD["dpo_chosen_source"].items():
        assert sum(routes.values()) == by[(name, "train")]["rows"], name
    assert set(RECORD["policy_verdicts"]) == {"demo-policy-weak", "demo-policy-strong"}


def _changed(record: dict, config: str, split: str, delta: int) -> dict:
    out = json.loads(json.dumps(record))
    for s in out["splits"]:
        if (s["config"], s["split"]) == (config, split):
            s["rows"] += delta
    return out


def test_a_differing_number_is_named() -> None:
    other = _changed(RECORD, "strong", "full", 1)
    lines = rn.check_readme(rn.README.read_text(), other)
    rows = next(
        s["rows"] for s in RECORD["splits"] if (s["config"], s["split"]) == ("strong", "full")
    )
    assert len(lines) == 1, lines
    assert (
        f"| strong | full | {rows} |" in lines[0] and f"| strong | full | {rows + 1} |" in lines[0]
    )
    assert rn.differences(RECORD, other) == [f"splits.strong/full.rows: {rows} != {rows + 1}"]
    assert rn.differences(RECORD, {**RECORD, "measured_on": "1999-01-01"}) == []
    assert rn.check_readme("no markers here", RECORD)[0].startswith("README has no block")


def test_record_writes_the_block_and_check_fails_on_an_edit(tmp_path: Path) -> None:
    """The command line: `check` passes on the README as committed, fails (exit 1, the
    differing line, the command that fixes it) once a number in the block is edited."""
    readme = tmp_path / "README.md"
    readme.write_text(rn.README.read_text())
    ok = _run("check", "--readme", str(readme), "--record", str(rn.RECORD))
    assert ok.returncode == 0, ok.stderr
    block = rn.readme_block(readme.read_text())
    first_row = next(line for line in block.splitlines() if line.startswith("| train | train |"))
    cells = first_row.split(" | ")
    cells[2] = str(int(cells[2]) + 5)
    readme.write_text(readme.read_text().replace(first_row, " | ".join(cells)))
    bad = _run("check", "--readme", str(readme), "--record", str(rn.RECORD))
    assert bad.returncode == 1
    assert "| train | train |" in bad.stderr and FIX in bad.stderr


def test_with_block_replaces_only_the_block() -> None:
    text = f"before\n{rn.BEGIN}\nold\n{rn.END}\nafter\n"
    assert rn.with_block(text, "new") == f"before\n{rn.BEGIN}\nnew\n{rn.END}\nafter\n"
    with pytest.raises(ValueError, match="no block"):
        rn.with_block("before\nafter\n", "new")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], check=False, capture_output=True, text=True, cwd=REPO
    )
