"""Policy evaluation as a stage value: POLICY_EVAL, run by the one runner
(pipeline/common/runner.py), as `aletheia evaluate-policy` and the RLVR study's
`evaluate-policy` tasks do.

Its call is the `PolicyEvalConfig` (keyed without `progress` and the sandbox settings that
change no verdict: pool size, where the token is read); its inputs the problems file and
the policy folder's files (a Hub id has none; its name is in the call); its output the report
folder, with the marker `_stage.json` inside. So a rerun with the same policy, problems and
settings executes nothing, a retrained policy in the same folder is evaluated again, and a
run cut short (no marker) resumes from the samples it kept in `<out>/shards`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.common.prepared import run_prepared
from pipeline.common.runner import StageResult
from pipeline.common.stage import Keying, ShardContext, Stage, Stats
from pipeline.model_refs import model_files
from pipeline.policy_eval.config import PolicyEvalConfig

STAGE = "policy-eval"
VERSION = "1"

# Settings that change no sample and no verdict (the engine and its image do: they stay).
KEY_EXCLUDE: dict[str, Any] = {
    "progress": True,
    "sandbox": {"pool_size", "token_file", "token_env"},
}


def _outputs(config: PolicyEvalConfig, out: Path) -> dict[str, Path]:
    from pipeline.policy_eval.run import PROBLEMS_FILE, SAMPLES_FILE

    return {
        "report": out / "report.json",
        "markdown": out / "report.md",
        "samples": out / SAMPLES_FILE,
        "per_problem": out / PROBLEMS_FILE,
    }


def _evaluate(ctx: ShardContext[PolicyEvalConfig]) -> Stats:
    """Sample (reusing the kept shards), judge, report; the report is the marker's stats."""
    import json

    from pipeline.policy_eval.run import evaluate_policy  # torch: only when it runs

    problems = ctx.inputs["problems"]
    assert isinstance(problems, Path), "the problems input is one file"
    report = evaluate_policy(ctx.config, problems, ctx.out)
    return json.loads(json.dumps(report, default=str))


POLICY_EVAL: Stage[PolicyEvalConfig] = Stage(
    name=STAGE,
    version=VERSION,
    config=PolicyEvalConfig,
    inputs=("problems", "model"),
    outputs=_outputs,
    run=_evaluate,
    key=Keying(KEY_EXCLUDE),
    models="local",
    tags=("gpu",),
)


def policy_eval_inputs(config: PolicyEvalConfig, problems: Path) -> dict[str, Path | list[Path]]:
    """POLICY_EVAL's named inputs: the problems file and the policy folder's files."""
    return {"problems": Path(problems), "model": model_files(config.model)}


def run_policy_eval(
    config: PolicyEvalConfig, problems: Path, out_dir: Path, *, force: bool = False
) -> StageResult:
    """Evaluate one policy into `out_dir` through the one way into a stage
    (`pipeline.common.prepared`), or reuse it: its marker matched."""
    inputs = policy_eval_inputs(config, problems)
    return run_prepared(POLICY_EVAL, config, inputs, Path(out_dir), force=force)
