"""What an RLVR run cost and whether it could learn, per step, from its metrics log.

Read by `train()` (the run summary), the GPU-node entry point (`pipeline.train.rlvr_node`) and
the RLVR study's closing note. Per training step: its wall time, generation time (the policy
writing the rollouts), reward time (judging them) and the part of it the step waited for (the
rest ran beside the step's other work), the rollout pass@1 and the share of GRPO groups whose
rollouts all earned the same reward (zero advantage: nothing learned from that prompt); with a
verifier reward, how often the verifier rewarded a program the tests fail and penalised one they
pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Summary field -> the metrics-log key it is read from (logged by pipeline.train.rlvr and
# pipeline.train.code_rewards; `reward` is TRL's weighted total).
STEP_FIELDS: dict[str, str] = {
    "step_time_s": "rlvr/step_time_s",
    "generation_time_s": "rlvr/generation_time_s",
    "reward_time_s": "rlvr/reward_time_s",
    "reward_wait_s": "rlvr/reward_wait_s",
    "judge_time_s": "rlvr/judge_time_s",
    "streamed_rollouts": "rlvr/streamed_rollouts",
    "judge_unique": "rlvr/judge_unique",
    "judge_cached": "rlvr/judge_cached",
    "pass_at_1": "rlvr/pass_at_1",
    "zero_variance_groups": "rlvr/zero_variance_groups",
    "reward": "reward",
    # the verifier reward's (pipeline.train.verifier_reward): its verdicts against the tests'
    "verifier_reward_given_fail": "rlvr/verifier/reward_given_fail",
    "verifier_penalty_given_pass": "rlvr/verifier/penalty_given_pass",
    "verifier_pair_accuracy": "rlvr/verifier/pair_accuracy",
    "verifier_invalid": "rlvr/verifier/invalid",
    "verifier_groups_dropped": "rlvr/verifier/groups_dropped",
    "verifier_time_s": "rlvr/verifier/time_s",
}

WHAT_TO_DO = (
    "every rollout of such a prompt earned the same reward, so its advantage is zero and "
    "GRPO learns nothing from it; make the rollouts differ: raise rlvr.temperature, start "
    "from a policy that solves some but not all of these problems, or train on problems at "
    "the policy's level (drop those it always or never solves)"
)


def rlvr_steps(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per optimizer step (the log events with a loss): its step number, the
    STEP_FIELDS values (None where a value was not logged) and `reward_share`: the share of
    the step's wall time it waited for its rewards (None without both times)."""
    rows = []
    for r in records:
        if "loss" not in r:
            continue
        row = {"step": r.get("step"), **{field: r.get(key) for field, key in STEP_FIELDS.items()}}
        wait, wall = row["reward_wait_s"], row["step_time_s"]
        row["reward_share"] = wait / wall if wait is not None and wall else None
        rows.append(row)
    return rows


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def step_warning(share: float, threshold: float) -> str | None:
    """One step's warning when more than `threshold` of its groups had zero reward variance."""
    if share <= threshold:
        return None
    return f"{share:.0%} of this step's GRPO groups had zero reward variance: {WHAT_TO_DO}"


def zero_variance_warning(steps: list[dict[str, Any]], threshold: float) -> str | None:
    """The run's warning when, over all steps, more than `threshold` of the groups had zero
    reward variance (mean of the steps' shares); None otherwise or when nothing was logged."""
    shares = [s["zero_variance_groups"] for s in steps if s["zero_variance_groups"] is not None]
    mean = _mean(shares)
    if mean is None or mean <= threshold:
        return None
    over = sum(share > threshold for share in shares)
    return (
        f"{mean:.0%} of GRPO groups had zero reward variance over the run (more than "
        f"{threshold:.0%} in {over} of {len(shares)} steps): {WHAT_TO_DO}"
    )


def rlvr_run_summary(records: Iterable[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    """Per-step rows, their means, and the zero-variance warning (None when there is none)."""
    steps = rlvr_steps(records)
    means = {
        field: _mean([s[field] for s in steps if s[field] is not None])
        for field in (*STEP_FIELDS, "reward_share")
    }
    return {
        "steps": steps,
        "mean": means,
        "zero_variance_warn_share": threshold,
        "warning": zero_variance_warning(steps, threshold),
    }


def markdown_table(steps: list[dict[str, Any]]) -> str:
    """The per-step table of a closing note: times beside the pass@1 curve."""

    def cell(v: Any, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    lines = [
        (
            "| step | step s | generation s | reward s | waited for reward s | reward share of "
            "step | judge s | distinct | cached | rollout pass@1 | zero-variance groups | reward |"
        ),
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in steps:
        lines.append(
            f"| {s['step']} | {cell(s['step_time_s'], '.2f')} | "
            f"{cell(s['generation_time_s'], '.2f')} | "
            f"{cell(s['reward_time_s'], '.2f')} | {cell(s['reward_wait_s'], '.2f')} | "
            f"{cell(s['reward_share'], '.0%')} | {cell(s['judge_time_s'], '.2f')} | "
            f"{cell(s['judge_unique'], '.0%')} | {cell(s['judge_cached'], '.0%')} | "
            f"{cell(s['pass_at_1'], '.3f')} | {cell(s['zero_variance_groups'], '.0%')} | "
            f"{cell(s['reward'], '.3f')} |"
        )
    return "\n".join(lines)
