"""Code-policy RLVR: sandbox rewards on hand-written completions, failure handling, real GRPO/GSPO steps."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pipeline.train import TrainConfig, train
from pipeline.train.code_rewards import (
    NO_CODE,
    SandboxRewardScorer,
    Scored,
    combined_reward,
    step_diagnostics,
)
from pipeline.train.config import RlvrSettings
from pipeline.train.lint import LintReport, lint_python, rule_prefix
from pipeline.train.metrics_log import read_metrics

SUM_ROW = {
    "problem_id": "sum2",
    "test_mode": "stdio",
    "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}],
    "time_limit_s": 2.0,
    "memory_limit_mb": 256,
}
GOOD = "Here:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
GOOD_WITH_UNUSED_IMPORT = (
    "```python\nimport os\na, b = map(int, input().split())\nprint(a + b)\n```"
)
HALF = "```python\nprint(3)\n```"  # right on the first test only
NO_PROGRAM = "I am not sure how to solve this."


def test_lint_counts_by_rule_family() -> None:
    reports = lint_python(
        ["import os\nx = 1\n", "print(1)\n", "def f(:\n", "x = 1\nprint(x == None)\n"],
        ["E", "F", "W"],
    )
    assert reports[0] == LintReport(1, {"F": 1})  # F401 unused import
    assert reports[1] == LintReport(0, {})
    assert reports[2].by_prefix.keys() == {"syntax"}
    assert reports[3] == LintReport(1, {"E": 1})  # E711 comparison to None
    assert rule_prefix("B006") == "B" and rule_prefix(None) == "syntax"


def test_combined_adds_lint_only_once_all_tests_pass() -> None:
    dirty = LintReport(3, {"F": 3})
    # all pass: 1.0 + 0.2 * (-0.3) = 0.94
    assert combined_reward(Scored("AC", 4, 4, dirty), 0.1, 0.2) == pytest.approx(0.94)
    # 2 of 4 pass: lint ignored, 0.5
    assert combined_reward(Scored("WA", 2, 4, dirty), 0.1, 0.2) == 0.5
    # sandbox failure: no signal
    assert combined_reward(Scored("SE", 0, 4, dirty), 0.1, 0.2) is None


def test_step_diagnostics_hand_computed() -> None:
    scored = [
        Scored("AC", 2, 2, LintReport(0, {})),
        Scored("WA", 1, 2, LintReport(3, {"E": 1, "F": 2})),
        Scored("SE", 0, 2, LintReport(0, {})),
        Scored(NO_CODE, 0, 2, None),
    ]
    d = step_diagnostics(scored, ["ab", "abcd", "", "ab"])
    assert d["rlvr/pass_at_1"] == pytest.approx(1 / 3)  # SE is not judged: AC out of 3
    assert d["rlvr/completion_chars"] == 2.0
    assert d["rlvr/sandbox_se"] == 1.0
    assert {k: v for k, v in d.items() if k.startswith("rlvr/verdict/")} == {
        "rlvr/verdict/AC": 0.25, "rlvr/verdict/WA": 0.25, "rlvr/verdict/SE": 0.25, f"rlvr/verdict/{NO_CODE}": 0.25,
    }  # fmt: skip
    assert d["rlvr/ruff/violations"] == 1.0 and d["rlvr/ruff/F"] == pytest.approx(2 / 3)


@pytest.mark.docker
def test_sandbox_rewards_on_hand_written_completions(sandbox_client: object) -> None:
    scorer = SandboxRewardScorer(sandbox_client, RlvrSettings(lint_select=["E", "F", "W"]))
    funcs = scorer.reward_funcs(["pass_fraction", "all_pass", "lint", "combined"])
    completions = [GOOD, GOOD_WITH_UNUSED_IMPORT, HALF, NO_PROGRAM]
    columns = {k: [SUM_ROW[k]] * 4 for k in SUM_ROW}
    logged: dict[str, float] = {}
    got = {f.__name__: f(completions, log_metric=logged.__setitem__, **columns) for f in funcs}
    assert got["pass_fraction"] == [1.0, 1.0, 0.5, 0.0]
    assert got["all_pass"] == [1.0, 1.0, 0.0, 0.0]
    assert got["lint"] == [0.0, -0.1, 0.0, -1.0]  # no program: the full lint penalty
    assert got["combined"] == pytest.approx([1.0, 1.0 + 0.2 * -0.1, 0.5, 0.0])
    assert logged["rlvr/pass_at_1"] == 0.5
    assert logged["rlvr/verdict/WA"] == 0.25 and logged[f"rlvr/verdict/{NO_CODE}"] == 0.25


@pytest.mark.docker
def test_a_timed_out_batch_gives_no_signal_then_stops_training(sandbox_client: object) -> None:
    settings = RlvrSettings.model_validate(
        {"sandbox": {"batch_timeout_s": 1e-4, "max_failed_batches": 2}}
    )
    scorer = SandboxRewardScorer(sandbox_client, settings)
    [combined] = scorer.reward_funcs(["combined"])
    columns = {k: [SUM_ROW[k]] for k in SUM_ROW}
    fresh = [f"```python\n# {uuid.uuid4()}\nprint(3)\n```" for _ in range(2)]  # never cached
    assert combined([fresh[0]], **columns) == [None]  # no reward signal, not a zero
    with pytest.raises(RuntimeError, match="failed 2 times in a row"):
        combined([fresh[1]], **columns)


@pytest.mark.docker
@pytest.mark.parametrize("algorithm", ["grpo", "gspo"])
def test_rlvr_trains_with_lora_and_sandbox_rewards(
    algorithm: str, tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path, sandbox_client: object
) -> None:
    cfg = TrainConfig.model_validate(
        {
            "method": "rlvr",
            "model": str(tiny_model_dir),
            "output_dir": tmp_path / "rlvr",
            "data": {"dir": dataset_dir, "config": "train_questions"},
            "lora": {"r": 4, "alpha": 8},
            "optim": {"max_steps": 2, "per_device_train_batch_size": 4, "bf16": False, "use_cpu": True},
            "rlvr": {"algorithm": algorithm, "num_generations": 4, "max_completion_length": 24,
                     "rewards": {"combined": 1.0, "pass_fraction": 0.0}},
        }
    )  # fmt: skip
    summary = train(cfg, sandbox_client=sandbox_client)
    steps = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert len(steps) == 2
    for key in (
        "rewards/combined/mean",
        "rlvr/completion_chars",
        "rlvr/sandbox_se",
        "completions/mean_length",
    ):
        assert key in steps[-1]
    assert sum(v for k, v in steps[-1].items() if k.startswith("rlvr/verdict/")) == pytest.approx(
        1.0
    )
    assert (Path(summary["model_path"]) / "model.safetensors").exists()
