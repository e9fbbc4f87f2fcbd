"""The rlvr-study flow end to end at demo size, on a real Prefect server, the real sandbox and real
TRL trainers: a tiny policy fitted on the MBPP-shaped train split writes real programs, so the
RLVR rollouts and the evaluations reach the sandbox and get real verdicts (AC and non-AC)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.flows.flows_helpers import REPO

REWARDS = ("unit_test", "ruff", "combined", "verifier", "unit_test_verifier")
RUNS = [f"{r}-{a}" for r in REWARDS for a in ("grpo", "gspo")]
VERIFIED = [run for run in RUNS if "verifier" in run]  # the tiny random verifier's runs


@pytest.fixture(scope="session")
def mbpp_policy() -> Path:
    from tests.policy_eval.mbpp_policy import fit_demo_policy

    return fit_demo_policy()


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_rlvr_study_demo_end_to_end(prefect_api: str, mbpp_policy: Path, tmp_path: Path) -> None:
    from flows.rlvr import rlvr_study

    cfg = yaml.safe_load((REPO / "configs" / "rlvr" / "demo.yaml").read_text())
    cfg.update(
        out_dir=str(tmp_path / "study"),
        base_model=str(mbpp_policy),
        fit_policy=None,
        sources=[f"mbpp:{REPO / 'data' / 'mbpp_demo' / 'mbpp_demo.jsonl'}"],
    )
    cfg["evaluation"].update(samples=2, k=[1, 2], max_tokens=48)
    cfg["train"]["optim"].update(
        max_steps=1, per_device_train_batch_size=16
    )  # 4 prompts x 4 rollouts
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))  # the runs keep the config's order

    out = rlvr_study(str(path))
    study = tmp_path / "study"

    # The reference check ran first: the demo set's wrong reference (task 17, test split) is out.
    check = json.loads((study / "work" / "references" / "reference_check.json").read_text())
    assert [q["source_id"] for q in check["quarantined"]] == ["17"]

    cmp = json.loads((study / "comparison.json").read_text())
    assert [r["policy"] for r in cmp["rows"]] == ["base", *RUNS]
    for row in cmp["rows"]:  # the paper-style columns, for every policy
        for col in (
            "pass@1",
            "pass@2",
            "chars_mean",
            "tokens_mean",
            "ruff_error",
            "ruff_warning",
            "AC",
            "NO_PROGRAM",
        ):
            assert col in row, (row["policy"], col)
    assert [d["policy"] for d in cmp["differences"]] == RUNS
    assert all(
        d["pass@1"]["ci_low"] <= d["pass@1"]["difference"] <= d["pass@1"]["ci_high"]
        for d in cmp["differences"]
    )
    assert (study / "study.md").read_text().count("| unit_test-grpo |") >= 1

    base = json.loads((study / "eval" / "base" / "report.json").read_text())
    assert base["problems"] == 6 and base["length"]["samples"] == 12  # 7 test tasks, 17 quarantined
    assert base["ruff"]["programs"] > 0  # the policy writes programs: they were linted and judged
    judged = {k for k, v in base["errors"]["by_type"].items() if v["count"] and k != "NO_PROGRAM"}
    assert judged, base["errors"]

    # Training reached the sandbox: real verdicts on the rollouts, AC and non-AC among them,
    # and the rewards follow them.
    curves = json.loads((study / "curves.json").read_text())
    assert sorted(curves) == sorted(RUNS)
    verdicts: dict[str, float] = {}
    for run in RUNS:
        steps = [
            json.loads(line)
            for line in (study / "train" / run / "metrics.jsonl").read_text().splitlines()
        ]
        step = [s for s in steps if "loss" in s][-1]
        assert curves[run]["reward"] == [step["reward"]]
        shares = {
            k.removeprefix("rlvr/verdict/"): v
            for k, v in step.items()
            if k.startswith("rlvr/verdict/")
        }
        assert sum(shares.values()) == pytest.approx(1.0)
        for k, v in shares.items():
            verdicts[k] = verdicts.get(k, 0.0) + v
        if run.startswith("unit_test-"):  # pass fraction >= the all-pass share, <= the judged share
            assert (
                shares.get("AC", 0.0) - 1e-6
                <= step["reward"]
                <= 1 - shares.get("NO_CODE", 0.0) + 1e-6
            )
        if run.startswith("ruff"):  # a lint penalty is never positive
            assert step["reward"] <= 0.0
        if run in VERIFIED:  # the verifier's verdicts were read and set against the tests'
            assert step["rlvr/verifier/invalid"] == 0.0  # constrained: A or B every time
            assert 0.0 <= step["rlvr/verifier/win_rate"] <= 1.0
            assert -1.0 <= step["rewards/verifier/mean"] <= 1.0
            assert curves[run]["rlvr/verifier/reward_given_fail"] == [
                step.get("rlvr/verifier/reward_given_fail")
            ]
            # alone it is BRPO (groups that lean one way dropped); beside the tests it is not
            assert ("rlvr/verifier/groups_dropped" in step) == run.startswith("verifier-")
        else:
            assert "rlvr/verifier/time_s" not in step
        # what the step cost (generation, judging) and whether it could learn
        assert curves[run]["rlvr/generation_time_s"][0] > 0
        assert curves[run]["rlvr/reward_time_s"][0] > 0
        assert 0.0 <= curves[run]["rlvr/zero_variance_groups"][0] <= 1.0
        assert curves[run]["rlvr/pass_at_1"] == [step["rlvr/pass_at_1"]]
    # The closing note: per run, reward time beside generation time and the pass@1 curve.
    note = (study / "study.md").read_text()
    assert "| run | steps | generation s / step | reward s / step |" in note
    for run in RUNS:
        row = next(line for line in note.splitlines() if line.startswith(f"| {run} | 1 |"))
        assert f"{curves[run]['rlvr/pass_at_1'][0]:.2f}" in row, row
    assert "| run | failing programs rewarded | passing programs penalised |" in note
    for run in VERIFIED:
        assert any(line.startswith(f"| {run} | ") and line.endswith("|") for line in
                   note.split("failing programs rewarded")[-1].splitlines()), run  # fmt: skip
    flat = {r: curves[r]["rlvr/zero_variance_groups"][0] > 0.5 for r in RUNS}
    assert ("zero reward variance" in note) == any(flat.values()), (flat, note)
    assert verdicts.get("AC", 0.0) > 0, verdicts
    assert sum(v for k, v in verdicts.items() if k not in ("AC", "NO_CODE")) > 0, verdicts
    assert out["base_model"] == str(mbpp_policy)
