"""The model stages as values: FIT_POLICY (a tiny local policy) and TINY_MODEL (a random tiny
Qwen2), both run by the one runner (pipeline/common/runner.py).

    fit_examples(spec, examples_from_problems(problems, spec))   # -> spec.dir
    tiny_model(TinyModelCall(seed=1), Path("tiny"))              # -> Path("tiny")

FIT_POLICY keeps its marker `fit.json` in the model folder and is atomic: the fit is built in
a hidden sibling and swapped in with its marker, so a fit killed mid-way leaves the previous
folder (or none) and no marker. The fit record (`key`, sizes, loss, weights hash, kernels)
becomes the marker's stats, which `policy.read_fit` returns. The fitting itself is
`policy.fit_policy`, unchanged: its code is pinned by FIT_CODE_VERSION and guarded by
tests/models/test_fit_version.py, so the caching lives here, around it.

TINY_MODEL keys on every setting (the seed included: another seed is another model) and is
atomic too. The old entry points (`policy.fit_on_problems`, `tiny.build_tiny_model`) are thin
wrappers over these, with their signature and return value.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from pipeline.common.config import RunnerSection
from pipeline.common.runner import run_stage
from pipeline.common.stage import Finished, Keying, ShardContext, Shown, Stage, Stats
from pipeline.models.config import PolicyFit
from pipeline.models.policy import FIT_FILE, Example, fit_key, fit_policy, read_fit
from pipeline.models.tiny import write_tiny_model

# ---------------------------------------------------------------------- FIT_POLICY


class FitCall(BaseModel):
    """What FIT_POLICY runs on, built at call time and never part of RunConfig: the fit
    settings and the examples. The key holds the settings (not `dir`: the output is where
    they land) and the examples through `fit_key`, the fit's content key."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    spec: PolicyFit
    examples: SkipValidation[tuple[Example, ...]]


def _fit_outputs(call: FitCall, out: Path) -> dict[str, Path]:
    return {
        "fit": out / FIT_FILE,
        "config": out / "config.json",
        "tokenizer": out / "tokenizer.json",
        "weights": out / "model.safetensors",
    }


def _fit_key_extra(call: FitCall, inputs: Mapping[str, Any], out: Path) -> str:
    return fit_key(call.spec, call.examples)


def _run_fit(ctx: ShardContext[FitCall]) -> Stats:
    """Fit into `ctx.out` (the hidden sibling); the fit record is the marker's stats."""
    # fit_policy writes through a temp folder of its own (`.<name>-XXXX` beside its target):
    # one left by a killed fit is thrown away here, as the runner throws away its sibling.
    for stale in ctx.out.parent.glob(f".{ctx.out.name}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    spec = ctx.config.spec.model_copy(update={"dir": ctx.out})
    return read_fit(fit_policy(spec, ctx.config.examples))


def _fit_plan(spec: PolicyFit, runner: RunnerSection) -> str:
    """Planned on the run config's `policies:` entry (the examples come at fit time)."""
    return (
        f"{spec.name}: {spec.num_layers} layers x {spec.hidden_size}, {spec.steps} steps on "
        f"{spec.device}, into {spec.dir} (at most {runner.model_parallel} fit(s) at once)"
    )


def weights_shown(label: str, stats: Stats) -> Shown:
    """A model's fingerprint: the hash of its weights file (none recorded: nothing)."""
    digest = stats.get("weights_sha256")
    if not digest:
        return Shown()
    return Shown(prints=({"stage": label, "output": "weights", "rows": None, "hash": digest},))


def _fit_shown(done: Finished) -> Shown:
    spec = done.call.spec if isinstance(done.call, FitCall) else done.call
    return weights_shown(f"fit {spec.name}", done.stats)


def policy_progress_file(model_dir: str | Path) -> Path:
    """Beside the model folder, not in it: a fit replaces the folder when it is done."""
    d = Path(model_dir)
    return d.with_name(d.name + ".progress.json")


def _fit_call(spec: Any, inputs: Mapping[str, Any]) -> FitCall:
    """A policy's fit call at run time: its examples from the problems the node binds."""
    from pipeline.models.policy import examples_from_problems
    from pipeline.sampling.stage import load_problems

    fit = PolicyFit.model_validate(spec)
    problems = load_problems(Path(inputs["problems"]))
    return FitCall(spec=fit, examples=tuple(examples_from_problems(problems, fit)))


FIT_POLICY: Stage[FitCall] = Stage(
    name="fit-policy",
    version="1",
    config=FitCall,
    inputs=(),  # the examples are data in the call; key.extra hashes them
    outputs=_fit_outputs,
    run=_run_fit,
    plan=_fit_plan,
    key=Keying({"examples": True, "spec": {"dir"}}, _fit_key_extra),
    marker=FIT_FILE,
    atomic=True,
    call_of=_fit_call,
    models="local",
    reports=lambda call, out: policy_progress_file(out),
    shows=_fit_shown,
)


def fit_examples(spec: PolicyFit, examples: Sequence[Example]) -> Path:
    """Fit (or reuse) the policy in `spec.dir` through the runner; returns the directory."""
    call = FitCall(spec=spec, examples=tuple(examples))
    run_stage(FIT_POLICY, call, {}, Path(spec.dir))
    return Path(spec.dir)


# ---------------------------------------------------------------------- TINY_MODEL


class TinyModelCall(BaseModel):
    """TINY_MODEL's settings (`build_tiny_model`'s keywords): every one changes the model."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, description="Seed of the random weights.")
    vocab_size: int = Field(1024, ge=8, description="Byte-level BPE vocabulary size.")
    hidden_size: int = Field(64, ge=8, description="Model width.")
    num_layers: int = Field(2, ge=1, description="Transformer layers.")
    extra_corpus: tuple[str, ...] = Field(
        (), description="Text the tokenizer is trained on besides the built-in corpus."
    )


def _tiny_outputs(call: TinyModelCall, out: Path) -> dict[str, Path]:
    return {
        "config": out / "config.json",
        "tokenizer": out / "tokenizer.json",
        "weights": out / "model.safetensors",
        "record": out / "aletheia_tiny.json",
    }


def _run_tiny(ctx: ShardContext[TinyModelCall]) -> Stats:
    c = ctx.config
    out = write_tiny_model(
        ctx.out,
        seed=c.seed,
        vocab_size=c.vocab_size,
        hidden_size=c.hidden_size,
        num_layers=c.num_layers,
        extra_corpus=c.extra_corpus,
    )
    weights = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()[:16]
    return {"seed": c.seed, "weights_sha256": weights}


def _tiny_plan(call: TinyModelCall, runner: RunnerSection) -> str:
    return f"a random verifier, {call.num_layers} layers x {call.hidden_size}, seed {call.seed}"


TINY_MODEL: Stage[TinyModelCall] = Stage(
    name="tiny-model",
    version="1",
    config=TinyModelCall,
    inputs=(),
    outputs=_tiny_outputs,
    run=_run_tiny,
    plan=_tiny_plan,
    atomic=True,
    models="pinned",
    shows=lambda done: weights_shown("tiny-model", done.stats),
)


def tiny_model(call: TinyModelCall, out: Path) -> Path:
    """Build (or reuse) the tiny model in `out` through the runner; returns `out`."""
    run_stage(TINY_MODEL, call, {}, Path(out))
    return Path(out)
