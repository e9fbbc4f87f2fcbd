"""The card says what a reader needs: data fields (chosen_position 0-based beside the
letter), the sources with their licenses, what this build really contains, limitations,
a citation; its long parts (the run config, whole example rows, the candidate tables) are
files of the release it links, so a demo-size card stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.publish import card_facts as F
from pipeline.publish import card_sections as S
from pipeline.publish.stage import build_hub_folder

REPO = Path(__file__).resolve().parents[2]


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
    assert "[details/run_config.yaml](details/run_config.yaml)" in card
    assert "```yaml" not in card  # the run config is a file of the release, not in the card
    assert (hub / "assets" / "correct_positions.png").stat().st_size > 0


def _demo_like(build: Path) -> None:
    """The synthetic build with what makes a demo card long: the demo's whole run config,
    programs, statements and responses of many lines, policy and mutant generators."""
    from pipeline.config import resolve_run_config
    from pipeline.publish.layout import BuildManifest
    from tests.publish.synthetic import dpo_row, rewrite, with_origins

    manifest = BuildManifest.read(build)
    run = resolve_run_config(REPO / "configs" / "demo.yaml").model_dump(mode="json")
    manifest.model_copy(update={"run_config": run}).write(build)
    program = "\n".join(f"x{i} = input()  # line {i}" for i in range(60))

    def lengthen(rows: list[dict]) -> list[dict]:
        out = []
        for r in rows:
            n = r["num_candidates"]
            origins, gens = ["policy", "mutant"] * 3, ["demo-policy-weak", "mutant:swap"] * 3
            r = with_origins(r, origins[:n], gens[:n])
            out.append(r | {"query": r["query"] * 20, "candidates": [program] * n})
        return out

    for name in ("train", "mixed", "heldout", "strong", "hard", "adv"):
        rewrite(build, name, lengthen)
    for name, src in (("dpo", "train"), ("mixed_dpo", "mixed")):
        rows = pq.read_table(build / "final" / f"{src}.parquet").to_pylist()
        rewrite(build, name, lambda _, rows=rows: [dpo_row(r) for r in rows])


def test_a_demo_size_card_is_short_and_links_its_long_parts(
    build_dir: Path, tmp_path: Path
) -> None:
    """Under 400 lines (the header `load_dataset` reads included): the whole run config, the
    whole first row of each config and the candidate tables are files beside the card."""
    import yaml

    from pipeline.publish.card import redact
    from pipeline.publish.layout import BuildManifest
    from schemas.dataset_configs import CONFIG_BY_NAME, CONFIG_NAMES

    _demo_like(build_dir)
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = (hub / "README.md").read_text()
    assert len(card.splitlines()) < 400, len(card.splitlines())
    links = set(re.findall(r"\]\((details/[^)]+)\)", card))
    assert links == {"details/run_config.yaml", "details/candidates.md"} | {
        f"details/examples/{c}.yaml" for c in CONFIG_NAMES
    }
    assert all((hub / link).is_file() for link in links)
    run = BuildManifest.read(build_dir).run_config
    assert yaml.safe_load((hub / "details/run_config.yaml").read_text()) == redact(run)
    for name in CONFIG_NAMES:  # the whole first row of the split to use, exactly
        split = CONFIG_BY_NAME[name].split
        shard = min((hub / name).glob(f"{split}-*.parquet"))
        [first] = pq.read_table(shard).slice(0, 1).to_pylist()
        assert yaml.safe_load((hub / f"details/examples/{name}.yaml").read_text()) == first
    candidates = (hub / "details/candidates.md").read_text()
    assert "## By origin" in candidates and "## By model and verdict" in candidates
    assert "demo-policy-weak" in candidates and "tiny and local" in candidates  # policy note
