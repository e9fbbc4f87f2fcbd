"""The card says what a reader needs: data fields (chosen_position 0-based beside the
letter), the sources with their licenses, what this build really contains, limitations,
a citation, and the run config collapsed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from pipeline.publish import card_facts as F
from pipeline.publish import card_sections as S
from pipeline.publish.stage import build_hub_folder


def _t(sources: list[str], origins: list[list[str]]) -> dict[str, pa.Table]:
    return {
        "train": pa.table({"source": sources, "candidate_origins": origins}),
    }


def test_license_follows_the_sources() -> None:
    assert S.derived_license(_t(["bundled"], [["reference"]])) == "apache-2.0"
    assert S.derived_license(_t(["code_contests", "codeforces"], [[], []])) == "cc-by-4.0"
    assert S.derived_license(_t(["code_contests", "taco"], [[], []])) == "other"
    assert S.derived_license(_t(["my-set"], [[]])) == "other"  # unknown: not claimed
    md = S.sources_md(_t(["code_contests", "taco", "taco"], [[], [], []]))
    assert "| CodeContests (`code_contests`) | cc-by-4.0 |" in md
    assert "| TACO (`taco`) | apache-2.0 |" in md and md.rstrip().endswith("| 2 |")


def _facts(origins: list[list[str]]) -> list[F.SplitFacts]:
    n = len(origins)
    table = pa.table(
        {
            "problem_id": [f"p{i}" for i in range(n)],
            "num_candidates": [len(o) for o in origins],
            "language": ["python"] * n,
            "weak_strong": ["weak"] * n,
            "easy_hard": ["easy"] * n,
            "generator": ["g"] * n,
            "chosen_answer": ["A"] * n,
            "candidate_origins": origins,
            "candidate_generators": [["g"] * len(o) for o in origins],
            "verdicts": [["AC"] + ["WA"] * (len(o) - 1) for o in origins],
            "pass_rates": [[1.0] + [0.0] * (len(o) - 1) for o in origins],
            "modification": [None] * n,
        }
    )
    return [F.measure("train", "train", table)]


def test_contents_say_when_no_model_wrote_the_candidates_or_responses(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny"
    run = {"tiny_model": {"dir": str(tiny)}, "dpo": {"judges": [{"model_path": str(tiny)}]}}
    md = S.contents_md(_facts([["reference", "mutant", "mutant"]]), run)
    assert "No candidate in this build was sampled from a model" in md
    assert "Model-written candidates" not in md  # no per-config line of zeros
    assert "randomly initialised model" in md and "constrained" not in md
    run["dpo"]["constrain_answer"] = True
    constrained = S.contents_md(_facts([["reference", "mutant"]]), run)
    assert "answer format was constrained" in constrained and "\\boxed{X}" in constrained
    real = S.contents_md(
        _facts([["policy", "policy"], ["policy", "mutant"]]), {"dpo": {"judges": []}}
    )
    assert "No candidate" not in real and "randomly" not in real
    assert "`train` 3 of 4 (75%)" in real  # policy samples of all candidates


def test_card_has_the_reader_sections(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = (hub / "README.md").read_text()
    for heading in ("## Data fields", "## What this build contains", "## Sources",
                    "## Limitations", "## Citation"):  # fmt: skip
        assert heading in card, heading
    assert "0-based index of the one correct candidate" in card and "A = chosen_position 0" in card
    assert "license: apache-2.0" in card  # the synthetic build's problems are bundled
    assert "<details>" in card and "</details>" in card
    start = card.index("<summary>Run config")
    end = card.index("</details>", start)
    assert "```yaml" in card[start:end]  # the run config is inside the collapsed block
    assert (hub / "assets" / "correct_positions.png").stat().st_size > 0
