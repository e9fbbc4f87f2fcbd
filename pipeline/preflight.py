"""Preflight: everything a build needs, checked in seconds before hours of sampling and judging.

`aletheia build-train --dry-run` prints the report; every build flow runs the same checks
first and refuses to start on a fatal finding. One loop (`preflight`): each node of the
build graph (pipeline/stages.py `GRAPH`, in build order) checks each of its runs' sections
with its stage's own check, then the run-level checks. Without downloading anything:

- sources (INGEST, problems/checks.py): each spec parses, its local files exist and a
  sample of rows converts;
- models (SAMPLE, DPO_RESPONSES; sampling/checks.py): every model a stage loads resolves as
  a local folder or a Hub id already in the local Hugging Face cache (never fetched here);
  the vLLM environments exist; an OpenAI-compatible server named by `base_url` accepts
  connections and its key variable is set;
- the judge engine (JUDGE, judge/checks.py), reached but not started: docker's daemon and
  image, process's bwrap, cgroups and isolation, each http server's /v1/version with the
  token; the languages the build samples that the engine refuses;
- templates (ASSEMBLE, DPO_RESPONSES; instances/prompt_checks.py): every verifier prompt
  template's placeholders (none unknown, none missing);
- Hub (PUBLISH, publish/hub_checks.py): `repo_id` and `HF_TOKEN` when `hub.push` is on;
- the verifier the evaluation after publish loads (EVALUATE, evaluate/stage.py), when the
  config has `evaluate:`;
- run level: the `train:` file (and its templates), and prefect-ray when `runner.kind: ray`.

Then the plan: a line per planned node run (its stage's own `Stage.plan`), the sources, problems,
expected candidates and tests.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import stages
from pipeline.common.stage import CheckContext, Finding
from pipeline.config import RunConfig
from pipeline.errors import ExitCode, UserError
from pipeline.instances.prompt_checks import TEMPLATE_KEYS, section_templates
from pipeline.problems.checks import SAMPLE_ROWS, SourcePlan
from pipeline.sampling.checks import resolve_model
from pipeline.stages import built_dirs

__all__ = [
    "SAMPLE_ROWS",
    "Finding",
    "PreflightError",
    "Report",
    "SourcePlan",
    "plan_dict",
    "preflight",
    "require",
    "require_hub",
    "resolve_model",
]


class PreflightError(UserError):
    """A build that would fail later: the fatal findings, one per line. Exits 3 when every
    fatal finding is an engine or server that cannot be had (`Finding.unavailable`), else 2
    (a config mistake is fixed first)."""

    def __init__(self, message: str, exit_code: int = ExitCode.BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Report:
    config: RunConfig
    findings: list[Finding] = field(default_factory=list)
    sources: list[SourcePlan] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.fatal for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 when OK; 3 when every fatal finding is something unavailable here; else 2."""
        fatal = [f for f in self.findings if f.fatal]
        if not fatal:
            return ExitCode.OK
        if all(f.unavailable for f in fatal):
            return ExitCode.UNAVAILABLE
        return ExitCode.BAD_INPUT

    def add(self, check: str, message: str, fatal: bool = True) -> None:
        self.extend([Finding(check, message, fatal)])

    def extend(self, findings: Iterable[Finding]) -> Report:
        """Add findings; one two sections gave alike (a propagated template) is kept once."""
        for f in findings:
            if f not in self.findings:
                self.findings.append(f)
        return self

    # --- the plan ---------------------------------------------------------------------
    def problems(self) -> float:
        return sum(s.scaled(s.problems) for s in self.sources)

    def tests(self) -> float:
        return sum(s.scaled(s.tests) for s in self.sources)

    def expected_candidates(self) -> dict[str, float]:
        """Upper bounds per candidate source (filters and duplicates only lower them)."""
        cfg, out = self.config, {}
        problems = self.problems()
        for i, src in enumerate(cfg.sample.sources):
            label = f"{i}:{src.kind}:{getattr(src, 'name', src.tier)}"
            langs = set(src.languages)
            if src.kind == "model":
                out[label] = problems * len(langs) * src.samples_per_problem
            elif src.kind == "reference":
                out[label] = sum(
                    s.scaled(n)
                    for s in self.sources
                    for lang, n in s.solutions.items()
                    if lang in langs
                )
            else:  # mutants of the correct references
                out[label] = src.per_candidate * sum(
                    s.scaled(n)
                    for s in self.sources
                    for lang, n in s.correct.items()
                    if lang in langs
                )
        return out

    def stages(self) -> list[str]:
        """A line per planned run of each graph node, in build order (pipeline/stages.py
        GRAPH): the node's name and its stage's own plan line for that section."""
        cfg, out = self.config, []
        for node in stages.GRAPH:
            for section in node.sections(cfg):
                plan = node.stage.plan
                out.append(node.name + (f": {plan(section, cfg.runner)}" if plan else ""))
        return out

    def lines(self) -> list[str]:
        def n(x: float) -> str:
            return "?" if math.isnan(x) else f"{x:,.0f}"  # NaN: not known before ingest

        cfg = self.config
        out = [f"plan for {cfg.name} (build {cfg.build_id}):"]
        out.append(f"  into   {cfg.work_dir} (the stages' tables), {cfg.hub_dir} (the release)")
        out += [f"  stage  {s}" for s in self.stages()]
        for s in self.sources:
            rows = s.unread if s.rows is None else f"{s.rows:,} rows"
            out.append(f"  source {s.spec}: {rows}; {s.problems}/{s.converted} sampled rows parse")
        out.append(f"  problems ~{n(self.problems())}, tests ~{n(self.tests())}")
        for label, k in self.expected_candidates().items():
            out.append(f"  candidates from {label}: up to ~{n(k)}")
        for f in self.findings:
            out.append(f"{'problem' if f.fatal else 'note'}: [{f.check}] {f.message}")
        out.append("preflight: OK" if self.ok else "preflight: FAILED (fix the problems above)")
        return out

    def raise_if_fatal(self) -> None:
        # a config mistake first: the exit code (2) is its class
        first = sorted((f for f in self.findings if f.fatal), key=lambda f: f.unavailable)
        fatal = [f"[{f.check}] {f.message}" for f in first]
        if fatal:
            more = (
                f" (+{len(fatal) - 1} more: aletheia build-train --dry-run)"
                if len(fatal) > 1
                else ""
            )
            raise PreflightError(f"preflight: {fatal[0]}{more}", self.exit_code)


# --- the checks: each stage's, then the run's ---------------------------------------------


def _run_templates(cfg: RunConfig) -> dict[tuple[str, str], str]:
    """(file, kind) -> run-level key of the templates `_propagate` copies into sections."""
    out: dict[tuple[str, str], str] = {}
    for key, kind in TEMPLATE_KEYS:
        value = getattr(cfg, key)
        if value:
            out.setdefault((value, kind), key)
    return out


def _unowned_templates(cfg: RunConfig) -> list[Finding]:
    """Templates no build section carries: a run-level one every section overrides (it is
    still hashed into the build id) and the `train:` file's prompt templates."""
    from pipeline.common.verifier_prompt import template_problem
    from pipeline.instances.prompt_checks import prompt_styles

    seen = {
        (path, kind)
        for section in (cfg.assemble, cfg.dpo)
        for _, path, kind in section_templates("", section)
    }
    given = [(*t, ("think",)) for t in section_templates("", cfg)]
    if cfg.train and Path(cfg.train).is_file():
        from pipeline.train.config import TrainConfig

        try:
            prompt = TrainConfig.from_yaml(cfg.train).prompt
            given += [
                (*t, prompt_styles(prompt))
                for t in section_templates(f"{cfg.train}: prompt.", prompt)
            ]
        except ValueError:
            pass  # the train-verifier flow reports its own config
    out = []
    for where, path, kind, styles in given:
        if (path, kind) in seen:
            continue
        seen.add((path, kind))
        if problem := template_problem(where, path, kind, styles):
            out.append(Finding("templates", problem))
    return out


def run_checks(cfg: RunConfig, ctx: CheckContext) -> list[Finding]:
    """What no stage owns: the `train:` file, the runner."""
    out: list[Finding] = []
    out += _unowned_templates(cfg)
    if cfg.runner.kind == "ray" and importlib.util.find_spec("prefect_ray") is None:
        out.append(
            Finding("ray", "runner.kind: ray needs prefect-ray and ray: pip install -e '.[ray]'")
        )
    if cfg.train and not Path(cfg.train).is_file():
        out.append(Finding("config", f"train: {cfg.train} not found"))
    return out


def preflight(cfg: RunConfig, *, docker: bool = True, only: tuple[str, ...] = ()) -> Report:
    """Each graph node's check, once per run's section, in build order; then the run-level
    checks. `only`: just these nodes' checks (a publish of an existing build: the Hub)."""
    unknown = sorted(set(only) - {n.name for n in stages.GRAPH})
    if unknown:
        raise ValueError(
            f"preflight only={unknown}: no such node; nodes: {[n.name for n in stages.GRAPH]}"
        )
    report = Report(cfg)
    ctx = CheckContext(
        built=built_dirs(cfg),
        docker=docker,
        facts={
            "sources": report.sources,
            "run_templates": _run_templates(cfg),
            "languages": sorted({lang for src in cfg.sample.sources for lang in src.languages}),
            "judge_probes": {},
        },
    )
    for node in stages.GRAPH:
        if not only or node.name in only:
            for section in node.sections(cfg):
                report.extend(node.stage.check(section, ctx))
    if not only:
        report.extend(run_checks(cfg, ctx))
    return report


def require(cfg: RunConfig) -> Report:
    """Run the checks; raise PreflightError naming the first fatal finding."""
    report = preflight(cfg)
    report.raise_if_fatal()
    return report


def require_hub(cfg: RunConfig) -> None:
    """Only the Hub checks: what a publish of an existing build needs before it starts."""
    preflight(cfg, docker=False, only=("publish",)).raise_if_fatal()


def plan_dict(report: Report) -> dict[str, Any]:
    return {"ok": report.ok, "lines": report.lines()}
