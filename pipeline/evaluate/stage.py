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
the build flow and `aletheia stage evaluate -c cfg` run it. It is the one way into an
evaluation: `aletheia evaluate` (a model, or a responses file scored without one), the
`evaluate-verifier` flow and the ablation's cells run it too, each in a folder of its own
(`refuse_a_stage_folder`: the build's evaluation, whose marker names its build, is never
written over by another).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from pipeline.common.config import RunnerSection
from pipeline.common.hub_folder import config_path, split_files
from pipeline.common.progress import progress_file
from pipeline.common.stage import CheckContext, Finding, Keying, ShardContext, Shown, Stage, Stats
from pipeline.evaluate.config import EvalConfig
from pipeline.model_refs import model_files

STAGE = "evaluate"
VERSION = "2"  # 2: the report gained calibration (its report.json and plots)


# Not keyed: where things are (their files are inputs, by content), whose build it is, display.
NOT_KEYED = frozenset({"progress", "hub_dir", "responses", "build"})


class EvaluateCall(EvalConfig):
    """What EVALUATE runs: the EvalConfig knobs, the model (a folder or Hub id) or a
    responses file scored without one, and where the published folder is. Built from the
    run config's `evaluate:` section at wiring time (the build's), or from a command's
    options; never part of RunConfig."""

    model: str | None = Field(
        None, description="The verifier to evaluate: a model folder or hub id (or `responses`)."
    )
    hub_dir: Path = Field(description="The published folder whose evaluation configs are scored.")
    responses: Path | None = Field(
        None, description="A responses file to score instead of a model (its provenance beside)."
    )
    allow_partial: bool = Field(
        False, description="Score a responses file that leaves rows of a split unanswered."
    )
    build: str | None = Field(
        None, description="The build whose evaluation after publish this is (the graph's node)."
    )

    @model_validator(mode="after")
    def _one_source(self) -> EvaluateCall:
        if (self.model is None) == (self.responses is None):
            raise ValueError("give exactly one of model or responses")
        return self

    def knobs(self) -> EvalConfig:
        """What `pipeline.evaluate.evaluate` takes (this call less what it is run on)."""
        return EvalConfig.model_validate(
            self.model_dump(exclude={"model", "hub_dir", "responses", "allow_partial", "build"})
        )


def published_splits(call: EvaluateCall) -> list[Path]:
    """The split files the evaluation scores (`splits`, each its `split`), in order; of a
    folder laid out otherwise (`<config>.parquet`, a config folder without split files),
    each config's files whole."""
    found: list[Path] = []
    for name in call.splits:
        files = split_files(call.hub_dir, name, call.split)
        if not files:
            try:
                where = config_path(call.hub_dir, name)
            except FileNotFoundError:
                continue  # evaluate() names what is missing
            files = [where] if where.is_file() else sorted(where.rglob("*.parquet"))
        found += files
    return found


def evaluate_inputs(call: EvaluateCall) -> dict[str, Path | list[Path]]:
    """The stage's named inputs: the published split files, the model folder's files (a
    Hub id, or none: no files) and the responses file with its provenance (none: none)."""
    from pipeline.evaluate.provenance import provenance_path

    given = [call.responses, provenance_path(call.responses)] if call.responses else []
    return {
        "splits": published_splits(call),
        "model": model_files(call.model) if call.model is not None else [],
        "responses": [p for p in given if p.is_file()],
    }


def _outputs(call: EvaluateCall, out: Path) -> dict[str, Path]:
    return {"report": out / "report.json", "markdown": out / "report.md"}


def _evaluate(ctx: ShardContext[EvaluateCall]) -> Stats:
    """Score the model on the published folder into `ctx.out`. A run cut short left its
    finished generations there (no marker): this run generates only the rest."""
    from pipeline.evaluate.run import evaluate  # torch and transformers: only when it runs

    call = ctx.config
    report = evaluate(
        call.model,
        call.hub_dir,
        ctx.out,
        call.knobs(),
        responses=call.responses,
        allow_partial=call.allow_partial,
    )
    done = {"flags": report["flags"], "splits": list(report["splits"])}
    return done | ({"build": call.build} if call.build else {})


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
    if call.model is None:  # a responses file: no model, no backend
        return out
    if call.backend.type in LOCAL_BACKENDS:
        out += check_model("evaluate.model", call.model, ctx)
    return out + check_backend("evaluate", call.backend, call.model)


def _plan(call: EvaluateCall, runner: RunnerSection) -> str:
    return (
        f"{call.model or call.responses} on {', '.join(call.splits)} ({call.split} split, "
        f"K={call.k}, backend {call.backend.type}), after publish"
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
    inputs=("splits", "model", "responses"),
    outputs=_outputs,
    run=_evaluate,
    check=_check,
    plan=_plan,
    key=Keying(NOT_KEYED),
    resources=_quiet,
    models="pinned",  # local models: the same floats on any x86 machine
    reports=lambda call, out: progress_file(out),
    shows=lambda done: Shown(
        lines=(f"evaluation report: {Path(done.outputs['markdown']).resolve()}",)
    ),
)


def run_evaluation(call: EvaluateCall, out: Path, *, quiet: bool = False) -> dict[str, Any]:
    """An evaluation of its own (a command's, a flow's, an ablation cell's) into `out`,
    through the one way into a stage (`pipeline.common.prepared`): its marker decides, so
    the same model, rows and knobs again run nothing. The report as report.json holds it,
    with where its files are (`files`) and whether it was reused (`cached`)."""
    import json

    from pipeline.common.prepared import run_prepared
    from pipeline.evaluate.run import refuse_a_stage_folder, with_files

    refuse_a_stage_folder(out)
    done = run_prepared(EVALUATE, call, evaluate_inputs(call), Path(out), quiet=quiet)
    report = with_files(json.loads(Path(done.outputs["report"]).read_text()), Path(out))
    return report | {"cached": done.cached}
