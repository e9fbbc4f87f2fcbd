"""Code-policy RLVR: sandbox rewards on hand-written completions, failure handling, and real
GRPO/GSPO steps of a tiny fitted policy whose own programs are judged in the sandbox."""

from __future__ import annotations

import json
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
    zero_variance_share,
)
from pipeline.train.config import RlvrSettings
from pipeline.train.lint import LintReport, lint_python, rule_prefix
from pipeline.train.metrics_log import read_metrics
from pipeline.train.rlvr_report import rlvr_run_summary

SUM_ROW = {
    "problem_id": "sum2",
    "test_mode": "stdio",
    "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}],
    "time_limit_s": 2.0,
    "memory_limit_mb": 256,
    "compare_mode": "tokens",
    "float_abs_tol": None,
    "float_rel_tol": None,
    "checker": None,
}
GOOD = "Here:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
GOOD_WITH_UNUSED_IMPORT = (
    "```python\nimport os\na, b = map(int, input().split())\nprint(a + b)\n```"
)
HALF = "```python\nprint(3)\n```"  # right on the first test only
NO_PROGRAM = "I am not sure how to solve this."
WRONG = {"WA", "TLE", "MLE", "RE", "CE", "OLE"}  # judged and failed


def rlvr_config(policy: Path, data: Path, out: Path, optim: dict, rlvr: dict) -> TrainConfig:
    """An RLVR run of the fixture policy on the fixture problems (LoRA r 4, on the CPU)."""
    return TrainConfig.model_validate(
        {
            "method": "rlvr",
            "model": str(policy),
            "output_dir": out,
            "data": {"dir": data, "config": "train_questions"},
            "lora": {"r": 4, "alpha": 8},
            "optim": {"bf16": False, "use_cpu": True, **optim},
            "rlvr": rlvr,
        }
    )


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


def test_zero_variance_share_hand_computed() -> None:
    # groups of 3: [1,1,1] flat, [0,1,0] mixed, [0.5,None,0.5] flat (None left out),
    # [None,None,1] flat (one reward left: nothing to compare) -> 3 of 4 flat
    rewards = [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.5, None, 0.5, None, None, 1.0]
    assert zero_variance_share(rewards, 3) == 0.75
    assert zero_variance_share([0.0, 0.0, 0.0, 1.0], 2) == 0.5
    assert zero_variance_share([1.0, 0.0, 1.0], 2) is None  # not whole groups: nothing to say
    assert zero_variance_share([], 4) is None


def test_total_reward_weights_the_configured_rewards() -> None:
    settings = RlvrSettings(rewards={"pass_fraction": 1.0, "lint": 0.5})
    scorer = SandboxRewardScorer(None, settings)  # type: ignore[arg-type] - scoring needs no judge
    # 3 of 4 tests pass (0.75) + 0.5 * (2 violations * -0.1) = 0.75 - 0.1 = 0.65
    assert scorer.total_reward(Scored("WA", 3, 4, LintReport(2, {"E": 2}))) == pytest.approx(0.65)
    # SE: no pass fraction; the lint term alone counts, as TRL's nansum counts it
    assert scorer.total_reward(Scored("SE", 0, 4, LintReport(0, {}))) == 0.0
    only_tests = SandboxRewardScorer(None, RlvrSettings(rewards={"all_pass": 1.0}))  # type: ignore[arg-type]
    assert only_tests.total_reward(Scored("SE", 0, 4, LintReport(0, {}))) is None


def test_run_summary_warns_when_most_groups_have_zero_variance() -> None:
    def step(n: int, share: float | None, pass_at_1: float) -> dict:
        rec = {"step": n, "loss": 0.0, "rlvr/pass_at_1": pass_at_1, "rlvr/reward_time_s": 2.0,
               "rlvr/generation_time_s": 1.0, "reward": pass_at_1}  # fmt: skip
        return rec | ({} if share is None else {"rlvr/zero_variance_groups": share})

    eval_event = {"step": 3, "train_runtime": 9.0}  # no loss: not a training step
    mostly_flat = [step(1, 0.75, 0.9), step(2, 0.5, 0.95), step(3, 0.75, 1.0), eval_event]
    s = rlvr_run_summary(mostly_flat, threshold=0.5)
    assert [r["step"] for r in s["steps"]] == [1, 2, 3]
    assert [r["pass_at_1"] for r in s["steps"]] == [0.9, 0.95, 1.0]
    assert s["mean"]["zero_variance_groups"] == pytest.approx(2 / 3)  # (0.75+0.5+0.75)/3
    assert s["mean"]["reward_time_s"] == 2.0 and s["mean"]["judge_time_s"] is None
    # mean 67% > 50%; steps 1 and 3 were over the line, step 2 (exactly 50%) was not
    assert s["warning"].startswith("67% of GRPO groups had zero reward variance")
    assert "in 2 of 3 steps" in s["warning"] and "temperature" in s["warning"]
    assert rlvr_run_summary(mostly_flat, threshold=0.7)["warning"] is None
    assert rlvr_run_summary([step(1, None, 0.5)], threshold=0.0)["warning"] is None


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
def test_rlvr_trains_a_policy_that_writes_programs_judged_in_the_sandbox(
    algorithm: str,
    tmp_path: Path,
    code_policy_dir: Path,
    dataset_dir: Path,
    sandbox_client: object,
) -> None:
    """The policy is a tiny model fitted on the fixture problems' programs (conftest), so its
    samples are real programs: the sandbox judges them and the rewards follow its verdicts."""
    cfg = rlvr_config(
        code_policy_dir,
        dataset_dir,
        tmp_path / "rlvr",
        optim={"max_steps": 3, "per_device_train_batch_size": 8},
        rlvr={
            "algorithm": algorithm,
            "num_generations": 8,
            "max_completion_length": 24,
            "rewards": {"combined": 1.0, "all_pass": 0.0},
        },
    )
    summary = train(cfg, sandbox_client=sandbox_client)
    steps = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert len(steps) == 3
    for key in ("rewards/combined/mean", "rlvr/completion_chars", "completions/mean_length"):
        assert key in steps[-1]
    for s in steps:  # what each step cost, and whether it could learn
        assert s["rlvr/generation_time_s"] > 0 and s["rlvr/reward_time_s"] > 0
        assert 0 < s["rlvr/judge_time_s"] <= s["rlvr/reward_time_s"]
        assert s["rlvr/step_time_s"] > s["rlvr/generation_time_s"]
        # every program went to the judge before TRL asked for rewards, some of them while
        # other rollouts were still being generated
        assert s["rlvr/judged_early"] == 1.0 and s["rlvr/reward_wait_s"] >= 0
        assert 0 < s["rlvr/streamed_rollouts"] <= 1
        assert 0.0 <= s["rlvr/judge_cached"] <= 1.0
        assert 0.0 <= s["rlvr/pass_at_1"] <= 1.0
        # one process: our share of flat groups is TRL's own, computed from its advantages' std
        assert s["rlvr/zero_variance_groups"] == pytest.approx(s["frac_reward_zero_std"])
    run = summary["rlvr"]
    assert [r["pass_at_1"] for r in run["steps"]] == [s["rlvr/pass_at_1"] for s in steps]
    assert run["mean"]["generation_time_s"] > 0
    flat = sum(s["rlvr/zero_variance_groups"] for s in steps) / 3
    assert (run["warning"] is not None) == (flat > 0.5), run
    ac = [s.get("rlvr/verdict/AC", 0.0) for s in steps]
    judged_wrong = [
        sum(v for k, v in s.items() if k.startswith("rlvr/verdict/") and k[13:] in WRONG)
        for s in steps
    ]
    # The policy writes programs the sandbox passes and programs it fails.
    assert sum(ac) > 0 and sum(judged_wrong) > 0, steps
    for s, a in zip(steps, ac):
        assert s.get("rlvr/sandbox_se", 0.0) == 0.0
        # all_pass is 1 exactly for an AC verdict, so its mean is the AC share of the step
        assert s["rewards/all_pass/mean"] == pytest.approx(a)
        # an AC program earns 1 + 0.2 * lint (lint >= -1), a failed one its pass fraction
        assert s["rewards/combined/mean"] >= 0.8 * a - 1e-6
    assert (Path(summary["model_path"]) / "model.safetensors").exists()


@pytest.mark.docker
def test_rlvr_warns_when_every_group_earns_one_reward(
    tmp_path: Path, code_policy_dir: Path, dataset_dir: Path, sandbox_client: object
) -> None:
    """Greedy rollouts (temperature 0.01 and top_p 0.001: only the likeliest token; the
    fixture policy's correct and wrong programs tie closely enough that temperature alone
    can split a group) of one problem are the same program, so every group's rewards are
    equal: the study must say that nothing can be learned, and why."""
    cfg = rlvr_config(
        code_policy_dir,
        dataset_dir,
        tmp_path / "rlvr",
        optim={"max_steps": 1, "per_device_train_batch_size": 8},
        rlvr={
            "num_generations": 4,
            "max_completion_length": 24,
            "temperature": 0.01,
            "top_p": 0.001,
            "rewards": {"pass_fraction": 1.0},
        },
    )
    summary = train(cfg, sandbox_client=sandbox_client)
    [step] = summary["rlvr"]["steps"]
    assert step["zero_variance_groups"] == 1.0
    assert "zero reward variance" in summary["rlvr"]["warning"]
    assert "rlvr.temperature" in summary["rlvr"]["warning"]
    on_disk = json.loads((tmp_path / "rlvr" / "summary.json").read_text())
    assert on_disk["rlvr"]["warning"] == summary["rlvr"]["warning"]


class RecordingJudge:
    """The real engine, passed through; it only records the requests each judge call got
    (to count what was judged). Not a double: every verdict is the sandbox's."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.calls: list[list] = []

    def judge(self, requests, progress: bool = False, use_cache: bool = True):
        requests = list(requests)
        self.calls.append(requests)
        return self.inner.judge(requests, progress=progress, use_cache=use_cache)  # type: ignore[attr-defined]

    @property
    def stamp(self) -> str:
        return self.inner.stamp  # type: ignore[attr-defined]


@pytest.mark.docker
def test_a_program_written_twice_in_a_batch_is_judged_once(sandbox_client: object) -> None:
    """GRPO's group often repeats its best program: one judge run per distinct program, the
    same rewards as judging each completion on its own."""
    judge = RecordingJudge(sandbox_client)
    fresh = f"```python\n# {uuid.uuid4()}\nprint(3)\n```"  # never cached: really judged
    completions = [GOOD, fresh, GOOD, fresh, NO_PROGRAM, GOOD]
    columns = {k: [SUM_ROW[k]] * len(completions) for k in SUM_ROW}
    logged: dict[str, float] = {}
    [pass_fraction] = SandboxRewardScorer(judge, RlvrSettings()).reward_funcs(["pass_fraction"])
    got = pass_fraction(completions, log_metric=logged.__setitem__, **columns)
    assert [len(c) for c in judge.calls] == [2]  # GOOD and `fresh`, once each
    alone = [
        SandboxRewardScorer(sandbox_client, RlvrSettings()).reward_funcs(["pass_fraction"])[0](
            [c], **{k: [SUM_ROW[k]] for k in SUM_ROW}
        )[0]
        for c in completions
    ]
    assert got == alone == [1.0, 0.5, 1.0, 0.5, 0.0, 1.0]
    assert logged["rlvr/judge_unique"] == 2 / 5  # 2 distinct of the 5 completions with a program


@pytest.mark.docker
def test_programs_sent_early_get_the_rewards_of_judging_when_asked(sandbox_client: object) -> None:
    """`submit` (the trainer, as each rollout finishes) then the reward functions: the same
    rewards and metrics as the reward functions alone, each program judged once."""
    completions = [GOOD, HALF, GOOD_WITH_UNUSED_IMPORT, NO_PROGRAM]
    columns = {k: [SUM_ROW[k]] * 4 for k in SUM_ROW}
    rows = [{k: SUM_ROW[k] for k in SUM_ROW}] * 4
    results = []
    for early in (2, 0):  # the first two finished early, or none
        judge = RecordingJudge(sandbox_client)
        scorer = SandboxRewardScorer(judge, RlvrSettings())
        funcs = scorer.reward_funcs(["pass_fraction", "combined"])
        scorer.submit(completions[:early], rows[:early])
        scorer.submit(completions[:1], rows[:1])  # sent twice: judged once
        logged: dict[str, float] = {}
        got = [f(completions, log_metric=logged.__setitem__, **columns) for f in funcs]
        assert sorted(len(c) for c in judge.calls) == [1, 2]
        assert sum(len(c) for c in judge.calls) == 3  # the three programs, once each
        assert logged["rlvr/judged_early"] == (2 / 3 if early else 1 / 3)
        assert logged["rlvr/reward_wait_s"] >= 0
        # times, and the cache's share (the second run finds the first one's verdicts), aside
        keep = ("_s", "_early", "_cached")
        results.append((got, {k: v for k, v in logged.items() if not k.endswith(keep)}))
    early_run, asked_run = results
    assert early_run[0] == asked_run[0] == [[1.0, 0.5, 1.0, 0.0], [1.0, 0.5, 0.98, 0.0]]
    assert early_run[1] == asked_run[1]


LOOP_ROW = SUM_ROW | {
    "time_limit_s": 0.5,
    "tests": [{"input": f"{i} {i}\n", "output": f"{2 * i}\n"} for i in range(4)],
}


@pytest.mark.docker
@pytest.mark.parametrize("stop", [True, False])
def test_a_looping_program_costs_one_time_limit(sandbox_client: object, stop: bool) -> None:
    """A rollout that loops on every test: with `stop_at_timeout` (RLVR's default) the judge
    runs its first test only (TLE, the rest not passed): one time limit, not four."""
    looping = f"```python\n# {uuid.uuid4()}\nwhile True:\n    pass\n```"
    settings = RlvrSettings.model_validate({"sandbox": {"stop_at_timeout": stop}})
    judge = RecordingJudge(sandbox_client)
    scorer = SandboxRewardScorer(judge, settings)
    [pass_fraction, all_pass] = scorer.reward_funcs(["pass_fraction", "all_pass"])
    columns = {k: [LOOP_ROW[k]] for k in LOOP_ROW}
    logged: dict[str, float] = {}
    assert pass_fraction([looping], log_metric=logged.__setitem__, **columns) == [0.0]
    assert all_pass([looping], **columns) == [0.0]
    assert logged["rlvr/verdict/TLE"] == 1.0
    [[request]] = judge.calls
    assert request.stop_at_timeout is stop
    [result] = sandbox_client.judge([request])  # type: ignore[attr-defined]  # cached verdict
    assert (result.verdict, result.passed, result.total) == ("TLE", 0, 4)
    assert len(result.tests) == (1 if stop else 4)


@pytest.mark.docker
def test_overlapped_judging_trains_exactly_as_judging_when_asked(
    tmp_path: Path, code_policy_dir: Path, dataset_dir: Path, sandbox_client: object
) -> None:
    """Two runs from the same seed, judging started early (the default) and judging when TRL
    asks: the same rewards at every step, and so the same training."""
    logs = {}
    for overlap in (True, False):
        cfg = rlvr_config(
            code_policy_dir,
            dataset_dir,
            tmp_path / f"rlvr-{overlap}",
            optim={"max_steps": 2, "per_device_train_batch_size": 8, "seed": 3},
            rlvr={
                "num_generations": 4,
                "max_completion_length": 24,
                "temperature": 1.5,
                "rewards": {"pass_fraction": 1.0},
                "overlap_judging": overlap,
            },
        )
        summary = train(cfg, sandbox_client=sandbox_client)
        logs[overlap] = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    keys = ("reward", "rewards/pass_fraction/mean", "rlvr/pass_at_1", "loss")
    assert [[s[k] for k in keys] for s in logs[True]] == [[s[k] for k in keys] for s in logs[False]]
    assert [s["rlvr/judged_early"] for s in logs[True]] == [1.0, 1.0]
    assert [s["rlvr/judged_early"] for s in logs[False]] == [0.0, 0.0]
    assert all(s["rlvr/streamed_rollouts"] > 0 for s in logs[True])


@pytest.mark.docker
def test_generate_ahead_trains_each_step_on_the_rollouts_written_a_step_earlier(
    tmp_path: Path,
    code_policy_dir: Path,
    dataset_dir: Path,
    sandbox_client: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`rlvr.generate_ahead`: each step writes the next step's rollouts before it trains on the
    ones the previous step wrote (the first step writes its own first; the last writes none
    ahead). The rewards a step logs are those of the rollouts it trained on, and the ratio's
    base is the log-probabilities of the policy that wrote them, taken before the update."""
    import torch

    from pipeline.train.rlvr import timed_grpo_trainer

    trainer_cls = timed_grpo_trainer()
    events: list[tuple[str, int, int]] = []  # (what, the batch's id, the step)
    written: dict[int, list[str]] = {}  # batch id -> the completions written for it
    params_at_write: dict[int, torch.Tensor] = {}
    write, score = trainer_cls._write_rollouts, trainer_cls._score_rollouts

    def checksum(model: object) -> torch.Tensor:  # the trained weights, as they are now
        return torch.cat(
            [p.detach().flatten().clone() for p in model.parameters() if p.requires_grad]
        )

    def spy_write(self, inputs):  # type: ignore[no-untyped-def]
        ahead = write(self, inputs)
        events.append(("write", id(inputs), self.state.global_step))
        written[id(inputs)] = [_text(c) for c in ahead.generated[3]]
        params_at_write[id(inputs)] = checksum(self.model)
        # the base of the ratio: this policy's own log-probabilities of what it just wrote
        assert torch.isfinite(ahead.behaviour_logps).all()
        return ahead

    def spy_score(self, ahead):  # type: ignore[no-untyped-def]
        events.append(("score", id(ahead.inputs), self.state.global_step))
        out = score(self, ahead)
        assert out["old_per_token_logps"] is ahead.behaviour_logps
        [written_at] = [
            step for what, i, step in events if what == "write" and i == id(ahead.inputs)
        ]
        if written_at < self.state.global_step:  # written before the last update, trained after
            assert not torch.equal(checksum(self.model), params_at_write[id(ahead.inputs)])
        return out

    monkeypatch.setattr(trainer_cls, "_write_rollouts", spy_write)
    monkeypatch.setattr(trainer_cls, "_score_rollouts", spy_score)
    rewarded: list[list[str]] = []
    scored = SandboxRewardScorer.score

    def spy_rewards(self, completions, rows, log_metric=None):  # type: ignore[no-untyped-def]
        rewarded.append([_text(c) for c in completions])
        return scored(self, completions, rows, log_metric)

    monkeypatch.setattr(SandboxRewardScorer, "score", spy_rewards)
    # one problem a step: the fixture's 3 problems make 3 steps an epoch, and a 4th
    # starts the next epoch with nothing written ahead
    cfg = rlvr_config(
        code_policy_dir,
        dataset_dir,
        tmp_path / "rlvr-ahead",
        optim={"max_steps": 4, "per_device_train_batch_size": 4, "seed": 3, "learning_rate": 1e-2},
        rlvr={
            "num_generations": 4,
            "max_completion_length": 24,
            "temperature": 1.5,
            "rewards": {"pass_fraction": 1.0},
            "generate_ahead": True,
        },
    )
    assert cfg.rlvr.model_dump()["generate_ahead"] is True  # on, it is in the run's cache key
    summary = train(cfg, sandbox_client=sandbox_client)
    steps = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert len(steps) == 4
    b = list(dict.fromkeys(i for _, i, _ in events))  # the batches, in the order first seen
    assert len(b) == 4
    assert events == [
        ("write", b[0], 0), ("write", b[1], 0), ("score", b[0], 0),
        ("write", b[2], 1), ("score", b[1], 1),
        ("score", b[2], 2),  # the epoch's last step: nothing left to write ahead
        ("write", b[3], 3), ("score", b[3], 3),  # a new epoch (and the run's last step)
    ]  # fmt: skip
    # the rewards of step k are those of the rollouts written for its batch, a step earlier
    assert rewarded == [written[i] for i in b]
    for s in steps:
        assert s["rlvr/judged_early"] == 1.0 and s["rlvr/reward_wait_s"] >= 0
        assert torch.isfinite(torch.tensor(s["loss"]))
    assert (Path(summary["model_path"]) / "model.safetensors").exists()


def _text(completion: object) -> str:
    """A completion's text: TRL's conversational completions are a list of messages."""
    return completion if isinstance(completion, str) else completion[-1]["content"]  # type: ignore[index]


def test_generate_ahead_refuses_what_it_cannot_hold_back() -> None:
    from types import SimpleNamespace

    from pipeline.train.rlvr import check_generate_ahead

    ok = {"gradient_accumulation_steps": 1, "steps_per_generation": 1, "num_iterations": 1,
          "use_vllm": False}  # fmt: skip
    check_generate_ahead(SimpleNamespace(**ok), 1)
    with pytest.raises(ValueError, match=r"rlvr.steps_per_generation is 2 \(needs 1\)"):
        check_generate_ahead(SimpleNamespace(**ok | {"steps_per_generation": 2}), 1)
    with pytest.raises(ValueError, match=r"processes is 2 \(needs 1\)"):
        check_generate_ahead(SimpleNamespace(**ok), 2)
    assert "generate_ahead" not in RlvrSettings().model_dump()  # off: old cache keys
