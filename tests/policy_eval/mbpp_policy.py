"""The demo study's tiny policy, fitted once on the MBPP-shaped demo set's train split and kept
in .cache/test-policies (a fit is reused while its content key holds)."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEMO_MBPP = REPO / "data" / "mbpp_demo" / "mbpp_demo.jsonl"


def demo_problems() -> Path:
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest

    problems = REPO / ".cache" / "test-policies" / "mbpp-demo-problems.parquet"
    ingest([f"mbpp:{DEMO_MBPP}"], problems, IngestConfig(), show_progress=False)
    return problems


def fit_demo_policy() -> Path:
    from pipeline.judge.stage import load_problems
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import examples_from_problems, fit_policy

    train = [p for p in load_problems(demo_problems()).values() if p.source_split == "train"]
    demo = yaml.safe_load((REPO / "configs" / "rlvr" / "demo.yaml").read_text())
    spec = PolicyFit(
        name="mbpp-demo",
        dir=REPO / ".cache" / "test-policies" / "mbpp-demo",
        languages=["python"],
        **demo["fit_policy"],
    )
    return fit_policy(spec, examples_from_problems(train, spec))
