"""`best-of-n`: Best-of-N as a flow (pipeline/bestofn), thin wiring of the BEST_OF_N stage.

Optionally the policy's samples first (`policy_config`: an `evaluate-policy` run, the stage
POLICY_EVAL, into `out_dir/policy`), then the verifier's picks judged in the sandbox. Its
progress: `[progress] best-of-n ...` lines in the run's log and a progress artifact, fed by
the stage's own ticks (programs judged, verifier responses); its result: a markdown artifact
with the table of selectors beside random, oracle and the baselines. The stage's marker is
its cache: the same samples, verifier and settings again run nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.artifacts import Progress, artifact_key
from flows.progress import StageWatch, reporting
from flows.quiet import quiet_libraries
from flows.task import jsonable, retry_transient
from pipeline.common.progress import progress_file
from pipeline.common.runner import run_stage


@task(
    name="best-of-n",
    tags=["gpu"],
    retries=1,
    retry_delay_seconds=30,
    retry_condition_fn=retry_transient,
    cache_policy=NO_CACHE,  # the stage's marker decides what runs
    persist_result=False,
)
def best_of_n_task(config: dict[str, Any], problems: str, samples: str, out_dir: str) -> Any:
    """BEST_OF_N through the stage runner; its progress written beside its output."""
    from prefect.states import Completed

    from pipeline.bestofn.config import BestOfNConfig
    from pipeline.bestofn.stage import BEST_OF_N, best_of_n_inputs
    from pipeline.executor import prepared

    cfg = BestOfNConfig.model_validate(config).model_copy(update={"progress": False})
    inputs = best_of_n_inputs(cfg, Path(problems), Path(samples))
    with (
        reporting(progress_file(Path(out_dir))),
        prepared(BEST_OF_N, cfg, inputs, quiet=True) as (stage, call),
    ):
        done = run_stage(stage, call, inputs, Path(out_dir))
    report = jsonable(done.stats)
    if done.cached:
        return Completed(
            data=report, name="Cached", message="the stage's marker matched: nothing ran"
        )
    return report


def summary_markdown(report: dict[str, Any]) -> str:
    """The report's head: the selectors' pass@1 with intervals and the verifier's counts."""
    from pipeline.bestofn.report import to_markdown

    text = to_markdown(report)
    return text.split("\n## ", 2)[0] + "\n## " + text.split("\n## ", 2)[1]


@flow(name="best-of-n")
def best_of_n_flow(
    config: dict[str, Any] | str,
    problems: str,
    out_dir: str,
    samples: str | None = None,
    policy_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A verifier picks one of each problem's N policy samples; the sandbox judges the pick.

    `config`: BestOfNConfig fields (or a YAML file of them); `samples`: an evaluate-policy
    folder or a JSONL / Parquet of programs; or `policy_config` (PolicyEvalConfig fields) to
    sample the policy first, into `out_dir/policy`."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    from pipeline.bestofn.config import BestOfNConfig

    cfg = (
        BestOfNConfig.from_yaml(config)
        if isinstance(config, str)
        else BestOfNConfig.model_validate(config)
    )
    if (samples is None) == (policy_config is None):
        raise ValueError("best-of-n: give exactly one of samples or policy_config")
    if policy_config is not None:
        from flows.rlvr import evaluate_policy_run

        samples = str(Path(out_dir) / "policy")
        evaluate_policy_run(policy_config, problems, samples)
    assert samples is not None
    out = Path(out_dir) / "best-of-n"
    artifact = Progress(
        artifact_key("best-of-n", cfg.mode, "progress"), 1, f"best-of-n ({cfg.mode})"
    )
    with StageWatch("best-of-n", [progress_file(out)], logger=get_run_logger(), artifact=artifact):
        state = best_of_n_task(
            cfg.model_dump(mode="json"), problems, samples, str(out), return_state=True
        )
        report = state.result()  # a Cached state too: its data is the report
    from prefect.artifacts import create_markdown_artifact

    create_markdown_artifact(
        markdown=summary_markdown(report),
        key=artifact_key("best-of-n", cfg.mode),
        description=f"Best-of-{report['n']} with {report['verifier']}",
    )
    return {
        "out_dir": str(out),
        "problems": report["problems"],
        "n": report["n"],
        "all": report["summary"]["all"],
    }
