"""Two builds of the same config give the same fingerprint at every stage; a change in
content changes the fingerprint from the stage where it happened on, and only from there.

The real stages on two bundled problems (references and mutants, Python), judged twice in
the real sandbox without the verdict cache, so the second run's verdicts are measured
again rather than read back."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.fingerprint import table_fingerprint
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.stage import adversarial, adversarial_edits, assemble
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_candidates
from pipeline.problems.config import IngestConfig
from pipeline.problems.stage import ingest
from pipeline.sampling.config import SampleConfig
from pipeline.sampling.stage import sample
from pipeline.splits.config import SplitConfig
from pipeline.splits.stage import split_problems
from tests.flows.flows_helpers import REPO

pytestmark = pytest.mark.docker

PROBLEMS = ("best-streak", "backpack")  # one train problem, one heldout (seed 0, fraction 0.5)


def _build(root: Path, bundled: Path, mutant_seed: int) -> dict[str, dict[str, Any]]:
    """ingest -> splits -> sample -> judge -> assemble -> adv: each output's fingerprint."""
    from sandbox import SandboxClient

    ingest([f"bundled:{bundled}"], root / "problems.parquet", IngestConfig(), show_progress=False)
    split_problems(
        root / "problems.parquet",
        root / "splits",
        SplitConfig(heldout_fraction=0.5, seed=0),
        show_progress=False,
    )
    sources = [
        {"kind": "reference", "tier": "weak", "languages": ["python"]},
        {"kind": "mutant", "tier": "weak", "per_candidate": 2, "seed": mutant_seed,
         "languages": ["python"]},
    ]  # fmt: skip
    sample(SampleConfig.model_validate({"progress": False, "sources": sources}),
           root / "problems.parquet", root / "sample")  # fmt: skip
    with SandboxClient(pool_size=2, cache=False) as client:
        judge_candidates(
            root / "sample" / "candidates.parquet",
            root / "problems.parquet",
            root / "judged.parquet",
            JudgeConfig(progress=False),
            client=client,
        )
    cfg = AssembleConfig(
        grouping="language",
        spare_incorrect_rates=0,
        splits=[SplitSpec(name="train", problems="train"),
                SplitSpec(name="heldout", problems="heldout", list_sizes=[2])],
    )  # fmt: skip
    assemble(root / "judged.parquet", root / "problems.parquet", root / "splits",
             root / "instances", cfg)  # fmt: skip
    adv = AdversarialConfig(rejudge_unchanged=True)  # every edit judged: nothing carried
    adversarial_edits(root / "instances" / "heldout.parquet", root / "problems.parquet",
                      root / "adv" / "edits", adv)  # fmt: skip
    with SandboxClient(pool_size=2, cache=False) as client:
        adversarial(root / "instances" / "heldout.parquet", root / "problems.parquet",
                    root / "adv", adv, client)  # fmt: skip
    files = {
        "ingest": root / "problems.parquet",
        "splits": root / "splits" / "heldout.parquet",
        "sample": root / "sample" / "candidates.parquet",
        "judge": root / "judged.parquet",
        "assemble": root / "instances" / "train.parquet",
        "adv": root / "adv" / "adv.parquet",
    }
    return {stage: table_fingerprint(path) for stage, path in files.items()}


def test_fingerprints_agree_across_two_runs_and_part_where_content_changes(
    tmp_path: Path,
) -> None:
    bundled = tmp_path / "bundled"
    for name in PROBLEMS:
        shutil.copytree(REPO / "data" / "bundled" / name, bundled / name)
    first = _build(tmp_path / "a", bundled, mutant_seed=0)
    second = _build(tmp_path / "b", bundled, mutant_seed=0)
    assert first == second  # every stage, verdicts measured twice
    assert all(fp["rows"] > 0 for fp in first.values()), first
    other = _build(tmp_path / "c", bundled, mutant_seed=7)  # other mutants: sampling differs
    assert [other[s] == first[s] for s in first] == [True, True, False, False, False, False]
