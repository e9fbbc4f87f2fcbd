"""The RLVR study (rewards x algorithms on MBPP), as plain steps the `rlvr-study` flow wires.

prepare: ingest the problems, run their references (quarantine failures), write the train
split as a Train-Questions table -> base: the given model, or a tiny policy fitted on the
train split's references (demo) -> evaluate the base -> per (reward, algorithm): RLVR with
LoRA from the base, evaluate the merged policy with the same sampling settings -> one
comparison table (pass@1, length, Ruff by severity, error types) + training curves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.judge.stage import load_problems
from pipeline.policy_eval.config import PolicyEvalConfig, StudyConfig
from schemas.problem import Problem


def prepare_problems(cfg: StudyConfig) -> Path:
    """problems.parquet (ingested), then the verified set when references are checked."""
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest

    problems = cfg.work / "problems.parquet"
    ingest(cfg.sources, problems, IngestConfig())
    if not cfg.check_references:
        return problems
    from pipeline.problems.reference_check import check_references

    verified = cfg.work / "references" / "problems.verified.parquet"
    if not verified.exists():
        check_references(problems, verified.parent, sandbox=cfg.sandbox, progress=False)
    return verified


def split_problems(problems: Path, split: str, limit: int | None = None) -> list[Problem]:
    chosen = [p for p in load_problems(problems).values() if p.source_split == split]
    if not chosen:
        raise ValueError(
            f"{problems}: no problem in split {split!r} (is the source split-aware, e.g. mbpp?)"
        )
    chosen.sort(
        key=lambda p: (int(p.source_id) if p.source_id.isdigit() else 1 << 62, p.problem_id)
    )
    return chosen[:limit] if limit else chosen


def base_model(cfg: StudyConfig, train_problems: list[Problem]) -> str:
    """The given base model, or a tiny policy fitted on the train split's references (never on test)."""
    if cfg.base_model:
        return cfg.base_model
    if cfg.fit_policy is None:
        raise ValueError("the study needs `base_model` or `fit_policy`")
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import examples_from_problems, fit_policy

    spec = PolicyFit(
        name=f"{cfg.name}-base",
        dir=cfg.work / "base-policy",
        **{"languages": ["python"], **cfg.fit_policy},
    )
    return str(fit_policy(spec, examples_from_problems(train_problems, spec)))


def verifier_model(cfg: StudyConfig) -> str | None:
    """The verifier of the `verifier` reward: the given model, or a tiny randomly initialised
    one built under work/ (the demo's); None when no run uses it."""
    if cfg.verifier is None:
        return None
    if cfg.verifier.get("model"):
        return str(cfg.verifier["model"])
    from pipeline.models.tiny import build_tiny_model

    return str(build_tiny_model(cfg.work / "tiny-verifier"))


def _with_study_sandbox(cfg: StudyConfig, own: dict[str, Any] | None) -> dict[str, Any]:
    """A step's `sandbox` settings: the study's, under the step's own keys."""
    return {**cfg.sandbox.model_dump(mode="json", exclude_unset=True), **(own or {})}


def eval_config(cfg: StudyConfig, model: str, name: str) -> PolicyEvalConfig:
    return PolicyEvalConfig.model_validate(
        {
            **cfg.evaluation,
            "sandbox": _with_study_sandbox(cfg, cfg.evaluation.get("sandbox")),
            "model": model,
            "name": name,
            "split": cfg.eval_split,
            "enable_thinking": cfg.enable_thinking,
        }
    )


def train_config(
    cfg: StudyConfig,
    reward: str,
    algorithm: str,
    model: str,
    data_dir: Path,
    verifier: str | None = None,
) -> Any:
    """One run's TrainConfig; `verifier`: the verifier model (`verifier_model`) of a run whose
    rewards name it."""
    from pipeline.train.config import TrainConfig

    base = json.loads(json.dumps(cfg.train, default=str))
    rlvr = {
        **base.pop("rlvr", {}),
        **cfg.algorithm_rlvr.get(algorithm, {}),
        "algorithm": algorithm,
        "rewards": cfg.rewards[reward],
        "enable_thinking": cfg.enable_thinking,
    }
    rlvr["sandbox"] = _with_study_sandbox(cfg, rlvr.get("sandbox"))
    if "verifier" in cfg.rewards[reward]:
        verifier = verifier or (cfg.verifier or {}).get("model")
        if verifier is None:
            raise ValueError(
                f"run {reward}-{algorithm}: its rewards name `verifier` and no verifier model "
                "was given (verifier_model builds the tiny one)"
            )
        rlvr["verifier"] = {**(cfg.verifier or {}), "model": verifier}
    return TrainConfig.model_validate(
        {
            **base,
            "name": f"{cfg.name}-{reward}-{algorithm}",
            "method": "rlvr",
            "model": model,
            "output_dir": cfg.out_dir / "train" / f"{reward}-{algorithm}",
            "data": {"dir": data_dir, "config": "train_questions"},
            "rlvr": rlvr,
        }
    )


CURVES = {
    "reward": "reward",
    "length (chars)": "rlvr/completion_chars",
    "Ruff violations / program": "rlvr/ruff/violations",
    "pass@1 (rollouts)": "rlvr/pass_at_1",
    "zero-variance groups": "rlvr/zero_variance_groups",
    "generation s / step": "rlvr/generation_time_s",
    "reward s / step": "rlvr/reward_time_s",
}
# The verifier reward's diagnostic (pipeline.train.verifier_reward): drawn when a run has it.
VERIFIER_CURVES = {
    "verifier rewards a failing program": "rlvr/verifier/reward_given_fail",
    "verifier penalises a passing program": "rlvr/verifier/penalty_given_pass",
    "verifier picks the passing one of a pair": "rlvr/verifier/pair_accuracy",
}


def training_curves(
    metrics: dict[str, Path], out: Path
) -> dict[str, dict[str, list[float | None]]]:
    """Reward, length and lint per step of every run: curves.png and curves.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipeline.train.metrics_log import read_metrics

    data: dict[str, dict[str, list[float | None]]] = {}
    logs = {run: [r for r in read_metrics(path) if "loss" in r] for run, path in metrics.items()}
    verifier = any(
        k in s for steps in logs.values() for s in steps for k in VERIFIER_CURVES.values()
    )
    curves = CURVES | (VERIFIER_CURVES if verifier else {})
    fig, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3))
    for run, steps in logs.items():
        data[run] = {key: [r.get(key) for r in steps] for key in curves.values()}
        for ax, (title, key) in zip(axes, curves.items(), strict=True):
            ys = data[run][key]
            ax.plot(
                range(1, len(ys) + 1),
                [float("nan") if y is None else y for y in ys],
                marker="o",
                label=run,
            )
            ax.set_title(title)
            ax.set_xlabel("step")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    (out / "curves.json").write_text(json.dumps(data, indent=2) + "\n")
    return data


def training_note(cfg: StudyConfig, metrics: dict[str, Path]) -> list[str]:
    """The closing note's training part: per run, reward time per step beside generation time
    per step, the rollout pass@1 curve over the steps, and the zero-variance warning."""
    from pipeline.train.metrics_log import read_metrics
    from pipeline.train.rlvr_report import rlvr_run_summary

    threshold = float(cfg.train.get("rlvr", {}).get("zero_variance_warn_share", 0.5))

    def num(v: Any, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    lines = [
        "## Training",
        "",
        "| run | steps | generation s / step | reward s / step | rollout pass@1 by step | zero-variance groups |",
        "| --- | ---: | ---: | ---: | --- | ---: |",
    ]
    warnings, verified = [], []
    for run, path in metrics.items():
        r = rlvr_run_summary(read_metrics(path), threshold)
        curve = " → ".join(num(s["pass_at_1"], ".2f") for s in r["steps"]) or "-"
        m = r["mean"]
        lines.append(
            f"| {run} | {len(r['steps'])} | {num(m['generation_time_s'], '.2f')} | "
            f"{num(m['reward_time_s'], '.2f')} | {curve} | {num(m['zero_variance_groups'], '.0%')} |"
        )
        if r["warning"]:
            warnings.append(f"- **{run}**: {r['warning']}")
        if m["verifier_time_s"] is not None:
            verified.append(
                f"| {run} | {num(m['verifier_reward_given_fail'], '.0%')} | "
                f"{num(m['verifier_penalty_given_pass'], '.0%')} | "
                f"{num(m['verifier_pair_accuracy'], '.0%')} | {num(m['verifier_invalid'], '.0%')} | "
                f"{num(m['verifier_groups_dropped'], '.0%')} | {num(m['verifier_time_s'], '.2f')} |"
            )
    if verified:
        lines += [
            "",
            (
                "The verifier reward against the tests (means over the steps; reward hacking shows "
                "as failing programs rewarded):"
            ),
            "",
            (
                "| run | failing programs rewarded | passing programs penalised | pairs judged right "
                "| verdicts unreadable | groups dropped (BRPO) | verifier s / step |"
            ),
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            *verified,
        ]
    if warnings:
        lines += ["", "**Warning: most GRPO groups had zero reward variance.**", "", *warnings]
    return [*lines, ""]


def write_study_summary(
    cfg: StudyConfig,
    comparison: dict[str, Any],
    out: Path,
    metrics: dict[str, Path] | None = None,
) -> Path:
    """study.md: the comparison table and, with the runs' metrics logs, the training note."""
    from pipeline.policy_eval.compare import to_markdown

    text = [
        f"# {cfg.name}",
        "",
        (
            f"Problems: {', '.join(cfg.sources)}; train split `{cfg.train_split}`, "
            f"evaluated on `{cfg.eval_split}`. Runs: {len(cfg.runs())} (rewards {list(cfg.rewards)} x "
            f"algorithms {cfg.algorithms}), each from the same base, evaluated with the same sampling."
        ),
        "",
        to_markdown(comparison),
        *(training_note(cfg, metrics) if metrics else []),
        (
            "Training curves: `curves.png` (reward, length, Ruff, rollout pass@1, zero-variance "
            "groups, generation and reward time per step), data in `curves.json`."
        ),
        "",
    ]
    path = out / "study.md"
    path.write_text("\n".join(text))
    return path
