"""Every stage of a build, by name (`STAGES`, for task lookup) and in build order (`BUILD`,
what preflight checks and plans).

A `Planned` entry pairs a stage with the sections of the run config its check reads: one
section per run of the stage (the re-judged sets: `mixed` and `adv`), none for a stage the
config leaves out (no `tiny_model:`). Sections are the stage's config or call model where
the config gives it whole (`IngestCall`, `JudgeCall`, `SplitCall`), else what the check
needs: the policy specs (their examples come at fit time) and, for PUBLISH, the run's `hub`
section (whether and where to push)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.common.stage import Stage
from pipeline.config import RunConfig
from pipeline.instances.adversarial.stage import ADVERSARIAL, ADVERSARIAL_EDITS
from pipeline.instances.dpo.stage import DPO_PAIRS, DPO_RESPONSES
from pipeline.instances.stage import ASSEMBLE
from pipeline.judge.stage import JUDGE, JudgeCall
from pipeline.models.stage import FIT_POLICY, TINY_MODEL, TinyModelCall
from pipeline.problems.stage import INGEST, IngestCall
from pipeline.publish.stage import PUBLISH
from pipeline.sampling.stage import SAMPLE
from pipeline.splits.stage import SPLITS, SplitCall


@dataclass(frozen=True)
class Planned:
    stage: Stage[Any]
    sections: Callable[[RunConfig], Sequence[Any]]  # what its check reads, once each


STAGES: dict[str, Stage[Any]] = {
    s.name: s
    for s in (
        INGEST,
        SPLITS,
        FIT_POLICY,
        TINY_MODEL,
        SAMPLE,
        JUDGE,
        ASSEMBLE,
        ADVERSARIAL_EDITS,
        ADVERSARIAL,
        DPO_RESPONSES,
        DPO_PAIRS,
        PUBLISH,
    )
}


def _tiny(c: RunConfig) -> list[TinyModelCall]:
    return [] if c.tiny_model is None else [TinyModelCall(seed=c.tiny_model.seed)]


BUILD: tuple[Planned, ...] = (
    Planned(INGEST, lambda c: [IngestCall(sources=c.sources, ingest=c.ingest)]),
    Planned(SPLITS, lambda c: [SplitCall(splits=c.splits)]),
    Planned(FIT_POLICY, lambda c: c.policies),
    Planned(TINY_MODEL, _tiny),
    Planned(SAMPLE, lambda c: [c.sample]),
    Planned(JUDGE, lambda c: [JudgeCall(judge=c.judge, sandbox=c.sandbox)]),
    Planned(ASSEMBLE, lambda c: [c.assemble]),
    Planned(ADVERSARIAL_EDITS, lambda c: [c.adv, c.mixed]),
    Planned(ADVERSARIAL, lambda c: [c.adv, c.mixed]),
    Planned(DPO_RESPONSES, lambda c: [c.dpo]),  # dpo and mixed_dpo: one section, renamed
    Planned(DPO_PAIRS, lambda c: [c.dpo]),
    Planned(PUBLISH, lambda c: [c.hub]),
)


def built_dirs(cfg: RunConfig) -> frozenset[Path]:
    """Folders the build makes before anything reads them: the fitted policies and the tiny
    model. A model reference naming one is not looked for on disk."""
    built = {Path(p.dir).expanduser().resolve() for p in cfg.policies}
    if cfg.tiny_model is not None:
        built.add(cfg.tiny_model.dir.resolve())
    return frozenset(built)
