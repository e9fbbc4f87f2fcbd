"""The evaluation after publish as a stage value: EVALUATE, run by the one runner
(pipeline/common/runner.py) like every build stage.

Its call is the run config's `evaluate:` knobs and model (`EvaluateCall`), plus where the
published folder is (`hub_dir`, not keyed: the folder's split files are its inputs, by
content). Its inputs: the published split files it scores and the model folder's files (a
Hub id has none; its name is in the call). Its output: the report folder (`cfg.eval_dir`,
outside the hub folder, which is what is pushed), with the marker `_stage.json` inside. So
a rerun with the same model, split files and knobs executes nothing, and a run cut short
(no marker) resumes from the prompts it finished (pipeline/evaluate/checkpoint.py keeps
them in the same folder).

pipeline/stages.py places it after publish (only when the run config has `evaluate:`);
the build flow and `aletheia stage evaluate -c cfg` run it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pydantic import Field

from pipeline.common.config import RunnerSection
from pipeline.common.hub_folder import split_files
from pipeline.common.progress import progress_file
from pipeline.common.stage import CheckContext, Finding, ShardContext, Shown, Stage, Stats
from pipeline.evaluate.config import EvalConfig
from pipeline.model_refs import model_files

STAGE = "evaluate"
VERSION = "2"  # 2: the report gained calibration (its report.json and plots)


class EvaluateCall(EvalConfig):
    """What EVALUATE runs: the EvalConfig knobs, the model (a folder or Hub id) and where
    the published folder is. Built from the run config's `evaluate:` section at wiring
    time, never part of RunConfig."""

    model: str = Field(description="The verifier to evaluate: a model folder or hub id.")
    hub_dir: Path = Field(description="The published folder whose evaluation configs are scored.")

    def knobs(self) -> EvalConfig:
        """What `pipeline.evaluate.evaluate` takes (this call less the model and folder)."""
        return EvalConfig.model_validate(self.model_dump(exclude={"model", "hub_dir"}))


def published_splits(call: EvaluateCall) -> list[Path]:
    """The split files the evaluation scores (`splits`, each its `split`), in order."""
    return [f for name in call.splits for f in split_files(call.hub_dir, name, call.split)]


def evaluate_inputs(call: EvaluateCall) -> dict[str, Path | list[Path]]:
    """The stage's named inputs: the published split files and the model folder's files."""
    return {"splits": published_splits(call), "model": model_files(call.model)}


def _outputs(call: EvaluateCall, out: Path) -> dict[str, Path]:
    return {"report": out / "report.json", "markdown": out / "report.md"}


def _evaluate(ctx: ShardContext[EvaluateCall]) -> Stats:
    """Score the model on the published folder into `ctx.out`. A run cut short left its
    finished generations there (no marker): this run generates only the rest."""
    from pipeline.evaluate.run import evaluate  # torch and transformers: only when it runs

    call = ctx.config
    report = evaluate(call.model, call.hub_dir, ctx.out, call.knobs())
    return {"flags": report["flags"], "splits": list(report["splits"])}


def _check(call: EvaluateCall, ctx: CheckContext) -> list[Finding]:
    """The prompt's templates or checkout of Aletheia (one line each for what is missing),
    and the model a local backend loads (built by the build, a folder, in the HF cache or on
    the Hub), or the server that serves it under that name, and the backend's own needs."""
    from pipeline.common.verifier_prompt import template_problem
    from pipeline.sampling.checks import LOCAL_BACKENDS, check_backend, check_model

    out = []
    for key, kind in (("prompt_template", "user"), ("system_template", "system"),
                      ("aletheia_src", "aletheia")):  # fmt: skip
        path = getattr(call, key)
        problem = path and template_problem(f"evaluate.{key}", path, kind, (call.style,))
        if problem:
            out.append(Finding("templates", problem))
    if call.backend.type in LOCAL_BACKENDS:
        out += check_model("evaluate.model", call.model, ctx)
    return out + check_backend("evaluate", call.backend, call.model)


def _plan(call: EvaluateCall, runner: RunnerSection) -> str:
    return (
        f"{call.model} on {', '.join(call.splits)} ({call.split} split, K={call.k}, "
        f"backend {call.backend.type}), after publish"
    )


def _quiet(
    call: EvaluateCall, inputs: Mapping[str, Any], opened: ExitStack, quiet: bool
) -> tuple[Stage[EvaluateCall], EvaluateCall]:
    # In a flow, progress goes to the watched file as lines, never a bar (`progress` is
    # not keyed: the same rows either way).
    return EVALUATE, call.model_copy(update={"progress": False}) if quiet else call


EVALUATE: Stage[EvaluateCall] = Stage(
    name=STAGE,
    version=VERSION,
    config=EvaluateCall,
    inputs=("splits", "model"),
    outputs=_outputs,
    run=_evaluate,
    check=_check,
    plan=_plan,
    key_exclude=frozenset({"progress", "hub_dir"}),  # the folder's files are inputs
    resources=_quiet,
    models="pinned",  # local models: the same floats on any x86 machine
    reports=lambda call, out: progress_file(out),
    shows=lambda done: Shown(
        lines=(f"evaluation report: {Path(done.outputs['markdown']).resolve()}",)
    ),
)
