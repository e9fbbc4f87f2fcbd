"""Preflight: everything a build needs, checked in seconds before hours of sampling and judging.

`aletheia build-train --dry-run` prints the report; every build flow runs the same checks
first and refuses to start on a fatal finding. One loop (`preflight`): each node of the
build graph (pipeline/stages.py `GRAPH`, in build order) checks each of its runs' sections
with its stage's own check, then the run-level checks. Without downloading anything:

- sources (INGEST, problems/checks.py): each spec parses, its local files exist and a
  sample of rows converts;
- benchmarks (SPLITS, splits/checks.py): each file `splits.benchmarks` names is there and
  reads as one;
- models (SAMPLE, DPO_RESPONSES; sampling/checks.py): every model a stage loads resolves as
  a local folder, a Hub id in the local Hugging Face cache, or (online) one the Hub answers
  for (pipeline/model_refs.py); the vLLM environments exist; an OpenAI-compatible server
  named by `base_url` lists the model at `GET /v1/models` and its key variable is set;
- the judge engine (JUDGE, judge/checks.py), reached but not started: docker's daemon and
  image, process's bwrap, cgroups and isolation, each http server's /v1/version with the
  token; the languages the build samples that the engine refuses;
- templates and the tokenizer (ASSEMBLE, DPO_RESPONSES; instances/prompt_checks.py,
  instances/tokens.py): every verifier prompt template's placeholders (none unknown, none
  missing); the tokenizer the token caps are measured with;
- Hub (PUSH, publish/hub_checks.py): `repo_id` and `HF_TOKEN` when `hub.push` is on;
- the verifier the evaluation after publish loads or the server that serves it (EVALUATE,
  evaluate/stage.py), when the config has `evaluate:`;
- run level: the `train:` file (and its templates), and prefect-ray when `runner.kind: ray`.

Then the plan: a line per planned node run (its stage's own `Stage.plan`), the sources, problems,
expected candidates and tests. A dry run checks what its command runs: `only=` limits the
checks and the plan to some nodes (build-eval's, a publish's), and `node_report` is one
node's (`aletheia stage NODE --dry-run`: its inputs' state, its outputs, its checks).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import stages
from pipeline.common.graph import Node, is_finished, unfinished_upstream
from pipeline.common.runner import shard_folder
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
    "NodeReport",
    "PreflightError",
    "Report",
    "SourcePlan",
    "evaluation_nodes",
    "node_report",
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
    # The nodes checked and planned (build order); empty: every node of the graph.
    nodes: tuple[str, ...] = ()
    # The dry run that lists every finding (named when a run refuses on the first).
    command: str = "aletheia build-train --dry-run"

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
        for node in _nodes(self.nodes):
            for section in node.calls(cfg):
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
            more = f" (+{len(fatal) - 1} more: {self.command})" if len(fatal) > 1 else ""
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


def _ray_check(cfg: RunConfig) -> list[Finding]:
    if cfg.runner.kind == "ray" and importlib.util.find_spec("prefect_ray") is None:
        return [
            Finding("ray", "runner.kind: ray needs prefect-ray and ray: pip install -e '.[ray]'")
        ]
    return []


def run_checks(cfg: RunConfig, ctx: CheckContext) -> list[Finding]:
    """What no stage owns: the `train:` file, the runner."""
    out: list[Finding] = []
    out += _unowned_templates(cfg)
    out += _ray_check(cfg)
    if cfg.train and not Path(cfg.train).is_file():
        out.append(Finding("config", f"train: {cfg.train} not found"))
    return out


def _nodes(only: tuple[str, ...]) -> list[Node]:
    """The graph's nodes named in `only` (all when empty), in build order."""
    return [n for n in stages.GRAPH if not only or n.name in only]


def evaluation_nodes() -> tuple[str, ...]:
    """What build-aletheia-eval runs: the graph's evaluation nodes."""
    return tuple(n.name for n in stages.GRAPH.evaluation())


def preflight(
    cfg: RunConfig,
    *,
    docker: bool = True,
    only: tuple[str, ...] = (),
    command: str = "aletheia build-train --dry-run",
) -> Report:
    """Each graph node's check, once per run's section, in build order; then the run-level
    checks. `only`: just these nodes' checks and plan (the eval build's nodes; a publish of
    an existing build: the Hub), with the runner's check where one of them fans out."""
    unknown = sorted(set(only) - {n.name for n in stages.GRAPH})
    if unknown:
        raise ValueError(
            f"preflight only={unknown}: no such node; nodes: {[n.name for n in stages.GRAPH]}"
        )
    report = Report(cfg, nodes=only, command=command)
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
    for node in _nodes(only):
        for section in node.calls(cfg):
            report.extend(node.stage.check(section, ctx))
    if not only:
        report.extend(run_checks(cfg, ctx))
    elif any(n.stage.sharding is not None for n in _nodes(only)):
        report.extend(_ray_check(cfg))
    return report


# --- one node: `aletheia stage NODE --dry-run` ---------------------------------------------


@dataclass
class NodeReport(Report):
    """What `aletheia stage NODE` would do: the state of each node it reads, what it writes,
    whether it finished before, its plan line and its own checks; not the whole build's."""

    node: str = ""
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    state: str = ""

    def lines(self) -> list[str]:
        cfg = self.config
        out = [f"node {self.node} of {cfg.name} (build {cfg.build_id}):"]
        out += [f"  reads  {x}" for x in self.reads]
        out += [f"  writes {x}" for x in self.writes]
        out.append(f"  state  {self.state}")
        out += [f"  plan   {x.split(': ', 1)[1]}" for x in self.stages() if ": " in x]
        for s in self.sources:
            rows = s.unread if s.rows is None else f"{s.rows:,} rows"
            out.append(f"  source {s.spec}: {rows}; {s.problems}/{s.converted} sampled rows parse")
        for f in self.findings:
            out.append(f"{'problem' if f.fatal else 'note'}: [{f.check}] {f.message}")
        out.append("preflight: OK" if self.ok else "preflight: FAILED (fix the problems above)")
        return out


def _upstream_lines(node: Node, cfg: RunConfig) -> list[str]:
    """A line per node `node` waits for: which of its inputs it gives, and its state."""
    out = []
    for u in node.upstream:
        given = [name for name, b in node.inputs.items() if u in b.upstream]
        what = ", ".join(given) if given else "runs first"
        if not stages.GRAPH[u].calls(cfg):
            state = "left out by this config (nothing to wait for)"
        else:
            state = "finished" if is_finished(stages.GRAPH[u], cfg) else "NOT finished"
        out.append(f"{u} ({what}): {state}")
    files = [name for name, b in node.inputs.items() if not b.upstream]
    return out + [f"{name}: files the config names" for name in files]


def _written(node: Node, cfg: RunConfig, call: object) -> list[str]:
    """What a run of `node` writes for `call`: its outputs (one written only with rows is
    said so), or, for a sharded stage whose parts are not merged, its part folders."""
    stage, where = node.stage, node.out(cfg, call)
    if not isinstance(call, stage.config):  # a section its call is made from (a fit)
        return [str(where)]
    sharding = stage.sharding
    if sharding is not None and sharding.merge is None:
        n = sharding.count(cfg.runner)
        return [f"{shard_folder(stage, where)}: {n} part(s), {sharding.part(0, n)} ..."]
    return [
        f"{path}" + (" (only when it has rows)" if name in stage.optional_outputs else "")
        for name, path in stage.outputs(call, where).items()
    ]


def node_report(cfg: RunConfig, name: str, *, docker: bool = True) -> NodeReport:
    """`aletheia stage NODE --dry-run`: the node's own checks and plan, the state of every
    node it reads (a fatal finding naming the one to run first when one has not finished),
    where it writes and whether an earlier run finished it."""
    node = stages.GRAPH[name]  # an unknown name: a UserError listing the nodes
    command = f"aletheia stage {name} --dry-run"
    base = preflight(cfg, docker=docker, only=(name,), command=command)
    report = NodeReport(cfg, base.findings, base.sources, nodes=(name,), command=command, node=name)
    calls = list(node.calls(cfg))
    report.reads = _upstream_lines(node, cfg)
    need = unfinished_upstream(stages.GRAPH, name, cfg) if calls else []
    waiting = [u for u in node.upstream if u in need]
    if waiting:
        report.add(
            "inputs",
            f"{' and '.join(waiting)} {'has' if len(waiting) == 1 else 'have'} not finished: "
            f"run `aletheia stage {need[0]}` first (the first unfinished node upstream), or "
            "the build",
        )
    report.writes = [line for call in calls for line in _written(node, cfg, call)]
    if not calls:
        report.state = "the run config leaves this node out: nothing to run"
    elif is_finished(node, cfg):
        report.state = (
            "finished before: a run reuses it where its inputs and settings match "
            "(--force runs it again)"
        )
    else:
        report.state = "not finished: a run makes it"
    return report


def require(cfg: RunConfig) -> Report:
    """Run the checks; raise PreflightError naming the first fatal finding."""
    report = preflight(cfg)
    report.raise_if_fatal()
    return report


def require_hub(cfg: RunConfig) -> None:
    """Only the Hub checks: what a publish of an existing build needs before it starts."""
    preflight(cfg, docker=False, only=stages.RELEASE).raise_if_fatal()


def plan_dict(report: Report) -> dict[str, Any]:
    return {"ok": report.ok, "lines": report.lines()}
