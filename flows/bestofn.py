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

from prefect import flow, get_run_logger

from flows.artifacts import Progress, artifact_key
from flows.progress import StageWatch
from flows.quiet import quiet_libraries
from flows.task import RunSettings, file_ref, run_task
from pipeline.common.progress import progress_file


def best_of_n_run(cfg: Any, problems: str, samples: str, out: Path) -> dict[str, Any]:
    """BEST_OF_N as one stage task (flows/task.py, the build's own; its progress written
    beside its output, its marker deciding: the same samples, verifier and settings again
    finish `Cached`); its report."""
    from pipeline.bestofn.stage import BEST_OF_N, best_of_n_inputs

    quiet = cfg.model_copy(update={"progress": False})  # progress as lines, not a bar
    given = best_of_n_inputs(quiet, Path(problems), Path(samples))
    inputs = {name: file_ref(p) for name, p in given.items()}
    s = RunSettings.alone("best-of-n", out, retries=1)
    return run_task(BEST_OF_N, quiet, inputs, out, s)["stats"]  # type: ignore[no-any-return]


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
        report = best_of_n_run(cfg, problems, samples, out)
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
