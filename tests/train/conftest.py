"""Fixtures for the training tests: schema-valid dataset folders (see rowgen.py) and a tiny
code policy that writes real programs for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train.rowgen import PROBLEMS, write_dataset


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("aletheia-dataset"))


@pytest.fixture(scope="session")
def code_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny policy fitted in seconds on the fixture problems' correct and wrong programs,
    prompted exactly as RLVR prompts it (Train-Questions rows -> the sampling prompt)."""
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import fit_on_problems
    from schemas.problem import Problem, Solution

    problems = [
        Problem(
            problem_id=pid,
            source="fixture",
            source_id=pid,
            title=pid,
            statement=statement,
            test_mode="stdio",
            tests=[{"input": i, "output": o} for i, o in tests],
            solutions=[Solution(language="python", code=good, correct=True)]
            + [Solution(language="python", code=w, correct=False) for w, _ in wrongs],
        )
        for pid, statement, good, wrongs, tests in PROBLEMS
    ]
    spec = PolicyFit(
        name="fixture-policy",
        dir=tmp_path_factory.mktemp("code-policy") / "model",
        languages=["python"],
        include_wrong=True,  # so its samples get both AC and non-AC verdicts
        hidden_size=32,
        steps=60,
        learning_rate=1e-2,
        batch_size=9,
    )
    return fit_on_problems(problems, spec)


@pytest.fixture(scope="session")
def r1_like_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a tokenizer that behaves as DeepSeek-R1-Distill-Qwen's (r1_like.py):
    its chat template drops an assistant turn's reasoning, its pad token is EOS."""
    from tests.train.r1_like import make_r1_like

    return make_r1_like(tiny_model_dir, tmp_path_factory.mktemp("r1-like"))
