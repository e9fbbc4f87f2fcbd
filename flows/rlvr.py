"""`evaluate-policy` and `rlvr-study`: code-policy evaluation and the rewards x algorithms study as flows.

Thin wiring of pipeline.policy_eval: each step is a task (progress and retries in the UI);
the steps themselves are plain functions the CLI can call without a server. A policy's
evaluation is the stage POLICY_EVAL, run by the stage runner (its marker is its cache).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task

from flows.quiet import quiet_libraries
from flows.task import RunSettings, file_ref, jsonable, retry_transient, run_task


def evaluate_policy_run(config: dict[str, Any], problems: str, out_dir: str) -> dict[str, Any]:
    """POLICY_EVAL as one stage task (flows/task.py, the build's own: its marker decides; a
    policy evaluated before finishes in a state named `Cached`; a run cut short resumes from
    the samples kept in out_dir/shards); its report."""
    from pipeline.policy_eval.config import PolicyEvalConfig
    from pipeline.policy_eval.stage import POLICY_EVAL, policy_eval_inputs

    cfg = PolicyEvalConfig.model_validate(config)
    inputs = {name: file_ref(p) for name, p in policy_eval_inputs(cfg, Path(problems)).items()}
    s = RunSettings.alone("evaluate-policy", Path(out_dir), retries=1)
    return run_task(POLICY_EVAL, cfg, inputs, Path(out_dir), s)["stats"]  # type: ignore[no-any-return]


@task(name="prepare-problems")
def prepare_task(study: dict[str, Any]) -> dict[str, Any]:
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import (
        base_model,
        prepare_problems,
        split_problems,
        verifier_model,
    )
    from pipeline.train.questions import write_train_questions

    cfg = StudyConfig.model_validate(study)
    problems = prepare_problems(cfg)
    train = split_problems(problems, cfg.train_split, cfg.train_limit)
    split_problems(problems, cfg.eval_split)  # fails early when the eval split is empty
    data_dir = write_train_questions(train, cfg.work / "data")
    return {
        "problems": str(problems),
        "data_dir": str(data_dir),
        "base_model": base_model(cfg, train),
        "verifier_model": verifier_model(cfg),
        "train_problems": len(train),
    }


@task(
    name="train-policy",
    tags=["gpu"],
    retries=1,
    retry_delay_seconds=60,
    retry_condition_fn=retry_transient,
)
def train_policy_task(
    study: dict[str, Any],
    reward: str,
    algorithm: str,
    model: str,
    data_dir: str,
    verifier: str | None = None,
) -> dict:
    """Resumable by itself: a restarted run continues from the newest TRL checkpoint.
    `verifier`: the verifier model of a run whose rewards name it."""
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import train_config
    from pipeline.train.run import train

    cfg = StudyConfig.model_validate(study)
    run = train_config(cfg, reward, algorithm, model, Path(data_dir), verifier)
    return jsonable(train(run))


@task(name="compare-policies")
def compare_task(
    study: dict[str, Any], eval_dirs: list[str], metrics: dict[str, str]
) -> dict[str, Any]:
    from pipeline.policy_eval.compare import write_comparison
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import training_curves, write_study_summary

    cfg = StudyConfig.model_validate(study)
    cmp = write_comparison([Path(d) for d in eval_dirs], cfg.out_dir)
    paths = {k: Path(v) for k, v in metrics.items()}
    if paths:
        training_curves(paths, cfg.out_dir)
    write_study_summary(cfg, cmp, cfg.out_dir, paths)
    return jsonable(cmp)


@flow(name="evaluate-policy")
def evaluate_policy_flow(
    policy_config: dict[str, Any], problems: str, out_dir: str
) -> dict[str, Any]:
    """Sample k completions per problem of a split, judge them, report pass@k and diagnostics."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    return evaluate_policy_run(policy_config, problems, out_dir)


@flow(name="rlvr-study")
def rlvr_study(
    study_config: str = "configs/rlvr/demo.yaml",
    engine: str | None = None,
    url: list[str] | None = None,
    token_file: str | None = None,
) -> dict[str, Any]:
    """Base policy + one RLVR policy per (reward, algorithm), all evaluated alike, one comparison
    table. `engine`, `url`, `token_file`: the judge engine (over the study's sandbox section)."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import eval_config

    cfg = StudyConfig.from_yaml(study_config)
    cfg = cfg.model_copy(update={"sandbox": cfg.sandbox.overridden(engine, url, token_file)})
    study = cfg.model_dump(mode="json")
    prep = prepare_task(study)
    evals = cfg.out_dir / "eval"
    base_cfg = eval_config(cfg, prep["base_model"], "base").model_dump(mode="json")
    eval_dirs = [str(evals / "base")]
    evaluate_policy_run(base_cfg, prep["problems"], eval_dirs[0])
    metrics: dict[str, str] = {}
    for reward, algorithm in cfg.runs():
        run = f"{reward}-{algorithm}"
        summary = train_policy_task(
            study, reward, algorithm, prep["base_model"], prep["data_dir"], prep["verifier_model"]
        )
        metrics[run] = summary["metrics_log"]
        pol_cfg = eval_config(cfg, summary["model_path"], run).model_dump(mode="json")
        eval_dirs.append(str(evals / run))
        evaluate_policy_run(pol_cfg, prep["problems"], eval_dirs[-1])
    cmp = compare_task(study, eval_dirs, metrics)
    return {
        "out_dir": str(cfg.out_dir),
        "base_model": prep["base_model"],
        "rows": cmp["rows"],
        "differences": cmp["differences"],
    }
