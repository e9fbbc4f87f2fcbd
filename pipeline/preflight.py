"""Preflight: everything a build needs, checked in seconds before hours of sampling and judging.

`aletheia build-train --dry-run` prints the report; every build flow runs the same checks
first and refuses to start on a fatal finding. Checked, without touching the network:

- sources: each spec parses, its local files exist and a sample of rows converts;
- models: every model a stage loads resolves as a local folder or a Hub id already in the
  local Hugging Face cache (never fetched here); the vLLM environments exist; an
  OpenAI-compatible server named by `base_url` accepts connections and its key variable is set;
- Hub: `repo_id` and `HF_TOKEN` when `hub.push` is on;
- templates: every verifier prompt template's placeholders (none unknown, none missing);
- Docker (sandbox.engine docker): the engine answers and the sandbox image exists (or will
  be built); the http engine: a server address is configured;
- Ray: prefect-ray is installed when `runner.kind: ray`.

Then the plan: stages, shards, problems, expected candidates and tests.
"""

from __future__ import annotations

import importlib.util
import math
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pipeline.config import RunConfig
from pipeline.errors import UserError

SAMPLE_ROWS = 200  # rows per source converted to check parsing and estimate tests


@dataclass(frozen=True)
class Finding:
    check: str  # sources | models | hub | templates | docker | ray | config
    message: str  # what is wrong and what to do
    fatal: bool = True


@dataclass
class SourcePlan:
    spec: str
    rows: int | None = None  # None: a Hub dataset, read at ingest time
    converted: int = 0  # rows converted here as a sample
    problems: int = 0  # of the converted rows, how many became problems
    tests: int = 0
    solutions: dict[str, int] = field(default_factory=dict)  # language -> all solutions
    correct: dict[str, int] = field(default_factory=dict)  # language -> correct solutions

    def scaled(self, n: int) -> float:
        """`n` observed in the sample, scaled to the rows this source will ingest."""
        if not self.converted or self.rows is None:
            return float("nan")
        return n * self.rows / self.converted


class PreflightError(UserError):
    """A build that would fail later: the fatal findings, one per line."""


@dataclass
class Report:
    config: RunConfig
    findings: list[Finding] = field(default_factory=list)
    sources: list[SourcePlan] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.fatal for f in self.findings)

    def add(self, check: str, message: str, fatal: bool = True) -> None:
        self.findings.append(Finding(check, message, fatal))

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
        cfg, r = self.config, self.config.runner
        push = f" + push to {cfg.hub.repo_id}" if cfg.hub.push else ""
        return [
            "ingest",
            "splits",
            f"sample: {r.sample_shards} shard(s) on {r.kind}",
            f"judge: {r.judge_shards} shard(s) on {r.kind}, at most {r.max_parallel_shards} at once",
            "assemble (train, heldout, strong, hard)",
            (
                f"mixed (share {cfg.mixed.share}) and adv (share {cfg.adv.share}): bias edits, "
                f"re-judged as {r.judge_shards} judge shard(s) each"
            ),
            (
                f"dpo and mixed_dpo: {len(cfg.dpo.judges)} verifier model(s) x "
                f"{cfg.dpo.samples_per_judge} samples, {r.dpo_shards} shard(s) each on {r.kind}"
            ),
            f"publish to {cfg.hub_dir}{push}",
        ]

    def lines(self) -> list[str]:
        def n(x: float) -> str:
            return "?" if math.isnan(x) else f"{x:,.0f}"  # NaN: not known before ingest

        out = [f"plan for {self.config.name} (build {self.config.build_id}):"]
        out += [f"  stage  {s}" for s in self.stages()]
        for s in self.sources:
            rows = "Hub dataset, read at ingest" if s.rows is None else f"{s.rows:,} rows"
            out.append(f"  source {s.spec}: {rows}; {s.problems}/{s.converted} sampled rows parse")
        out.append(f"  problems ~{n(self.problems())}, tests ~{n(self.tests())}")
        for label, k in self.expected_candidates().items():
            out.append(f"  candidates from {label}: up to ~{n(k)}")
        for f in self.findings:
            out.append(f"{'problem' if f.fatal else 'note'}: [{f.check}] {f.message}")
        out.append("preflight: OK" if self.ok else "preflight: FAILED (fix the problems above)")
        return out

    def raise_if_fatal(self) -> None:
        fatal = [f"[{f.check}] {f.message}" for f in self.findings if f.fatal]
        if fatal:
            more = (
                f" (+{len(fatal) - 1} more: aletheia build-train --dry-run)"
                if len(fatal) > 1
                else ""
            )
            raise PreflightError(f"preflight: {fatal[0]}{more}")


# --- checks ---------------------------------------------------------------------------


def _check_sources(cfg: RunConfig, report: Report) -> None:
    from pipeline.problems.adapters.base import AdapterContext
    from pipeline.problems.sources import ADAPTERS, load_source, parse_spec
    from pipeline.problems.validate import build_problem

    for text in cfg.sources:
        try:
            spec = parse_spec(text)
        except ValueError as e:
            report.add("sources", str(e))
            continue
        plan = SourcePlan(spec.text)
        report.sources.append(plan)
        local = spec.kind in {"bundled", "humaneval"} or (
            spec.location is not None
            and (
                spec.location.startswith(("/", ".", "~"))
                or any(c in spec.location for c in "*?[")
                or Path(spec.location).exists()
            )
        )
        if not local:
            report.add("sources", f"{spec.text}: a Hub dataset; not checked offline", fatal=False)
            continue
        if spec.kind != "humaneval" and not spec.local_paths():
            report.add(
                "sources", f"{spec.text}: no file or folder at {spec.location}; fix the path"
            )
            continue
        adapter = ADAPTERS[spec.kind]()
        split = spec.split or adapter.default_split or cfg.ingest.split
        try:
            loaded = load_source(spec, adapter, split, cfg.ingest.datasets_cache_dir)
        except Exception as e:  # noqa: BLE001 - any load failure is this source's problem
            report.add("sources", f"{spec.text}: cannot be read: {' '.join(str(e).split())[:300]}")
            continue
        missing = [
            c
            for c in adapter.required_columns
            if c not in (loaded.columns or adapter.required_columns)
        ]
        if missing:
            report.add("sources", f"{spec.text}: missing column(s) {missing}; has {loaded.columns}")
            continue
        plan.rows = len(loaded)
        if cfg.ingest.limit_per_source is not None:
            plan.rows = min(plan.rows, cfg.ingest.limit_per_source)
        ctx = AdapterContext(source=adapter.name, config=cfg.ingest, split=split)
        first_error = None
        for index, row in enumerate(loaded):
            if index >= min(SAMPLE_ROWS, plan.rows):
                break
            plan.converted += 1
            try:
                row_id = adapter.row_id(row, index, ctx)
                problem = build_problem(
                    adapter.name, row_id, adapter.convert(row, row_id, ctx), cfg.ingest
                )
            except Exception as e:  # noqa: BLE001 - such rows are quarantined at ingest
                first_error = first_error or f"row {index}: {' '.join(str(e).split())[:200]}"
                continue
            plan.problems += 1
            plan.tests += len(problem.tests)
            for s in problem.solutions:
                plan.solutions[s.language] = plan.solutions.get(s.language, 0) + 1
                if s.correct:
                    plan.correct[s.language] = plan.correct.get(s.language, 0) + 1
        if plan.converted and not plan.problems:
            report.add(
                "sources",
                f"{spec.text}: none of the first {plan.converted} rows parse ({first_error})",
            )
        elif first_error:
            report.add(
                "sources",
                f"{spec.text}: some rows will be quarantined, e.g. {first_error}",
                fatal=False,
            )


def resolve_model(ref: str) -> str | None:
    """Where a model reference resolves ('local folder', 'HF cache'), or None. No network."""
    path = Path(ref).expanduser()
    if path.exists():
        return "local folder"
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1:
        return None  # a path, not a Hub id
    from huggingface_hub import try_to_load_from_cache

    try:
        hit = try_to_load_from_cache(ref, "config.json")
    except Exception:  # noqa: BLE001 - an invalid repo id resolves nowhere
        return None
    return "HF cache" if isinstance(hit, str) else None


def _models(cfg: RunConfig) -> list[tuple[str, str]]:
    """(who needs it, model reference) for every model a stage loads itself."""
    out = []
    for src in cfg.sample.sources:
        if src.kind != "model":
            continue
        if src.backend.type in {"transformers", "vllm"}:
            out.append((f"sample.{src.name}", src.model))
        if src.filters is not None:
            out.append((f"sample.{src.name}.filters.tokenizer", src.filters.tokenizer))
    for who, judge in _judges(cfg):
        if judge.backend.type in {"transformers", "vllm"}:
            out.append((who, judge.model_ref))
    if cfg.evaluate is not None and cfg.evaluate.backend.type in {"transformers", "vllm"}:
        out.append(("evaluate.model", cfg.evaluate.model))
    return out


def _judges(cfg: RunConfig) -> list[tuple[str, Any]]:
    """(config path, spec) of every DPO verifier model the build samples."""
    out = [(f"dpo.judges.{j.name}", j) for j in cfg.dpo.judges]
    fb = cfg.dpo.fallback_judge
    if (
        fb is not None
        and cfg.dpo.construction == "on_policy"
        and cfg.dpo.fallback == "strong_judge"
    ):
        out.append((f"dpo.fallback_judge.{fb.name}", fb))
    return out


def _check_models(cfg: RunConfig, report: Report) -> None:
    # Folders the build makes itself before anything reads them: the tiny model and the
    # fitted policies (`policies:`).
    built = {Path(p.dir).expanduser().resolve() for p in cfg.policies}
    if cfg.tiny_model is not None:
        built.add(cfg.tiny_model.dir.resolve())
    for who, ref in _models(cfg):
        if Path(ref).expanduser().resolve() in built:
            continue
        if resolve_model(ref) is None:
            report.add(
                "models",
                f"{who}: {ref!r} is neither a local folder nor a Hub id in the local HF cache; "
                f"fix the path or download it first (hf download {ref})",
            )
    backends = [(f"sample.{s.name}", s.backend) for s in cfg.sample.sources if s.kind == "model"]
    backends += [(who, j.backend) for who, j in _judges(cfg)]
    for who, b in backends:
        _check_backend(who, b, report)


def _check_backend(who: str, b: Any, report: Report) -> None:
    """A backend's own needs: vLLM's interpreter, a reachable server, its key variable.
    Policy sources and DPO judges share these options, so they share this check."""
    pythons = []
    if b.type == "vllm":
        if b.python is None and b.engine == "vllm" and importlib.util.find_spec("vllm") is None:
            report.add(
                "models",
                f"{who}: backend vllm without `python:` needs vllm "
                "in this environment; set backend.python to vLLM's own interpreter",
            )
        pythons.append(b.python)
    if b.type == "openai":
        if b.serve is not None:
            pythons.append(b.serve.python)
        elif b.base_url:
            _check_server(who, b.base_url, report)
        if b.api_key_env and not os.environ.get(b.api_key_env):
            report.add("models", f"{who}: the key variable {b.api_key_env} is not set")
    for py in pythons:
        if py and not Path(py).exists():
            report.add(
                "models",
                f"{who}: the vLLM environment's interpreter {py} "
                "does not exist; build it (docs/scale.md) or fix backend.python",
            )
        elif py:  # vLLM itself is not installed on our machines: the path is all we check
            report.add("models", f"{who}: vLLM runs in {py} (not imported here)", fatal=False)


def _check_server(who: str, url: str, report: Report) -> None:
    parsed = urlparse(url)
    host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=2):
            return
    except OSError as e:
        report.add(
            "models",
            f"{who}: nothing answers at {url} ({e.strerror or e}); "
            "start the server (vllm serve ...) before the build",
        )


def _check_hub(cfg: RunConfig, report: Report) -> None:
    if not cfg.hub.push:
        return
    repo = cfg.hub.repo_id
    if not repo or repo.count("/") != 1:
        report.add("hub", f"hub.push is on but hub.repo_id is {repo!r}; set namespace/name")
    if not os.environ.get("HF_TOKEN"):
        report.add("hub", "hub.push is on but HF_TOKEN is not set in the environment")


def _check_docker(cfg: RunConfig, report: Report) -> None:
    try:
        from sandbox.image import docker_client, find_image, image_tag

        docker_client().ping()
    except Exception as e:  # noqa: BLE001 - any failure means no sandbox
        report.add(
            "docker",
            f"the Docker engine does not answer ({' '.join(str(e).split())[:200]}); "
            "start it (scripts/ensure-docker.sh) on every judging node",
        )
        return
    tag = cfg.sandbox.image or image_tag()
    if find_image(tag) is None:
        if cfg.sandbox.image:
            report.add("docker", f"sandbox.image {tag} is not on this machine; build or pull it")
        else:
            report.add(
                "docker",
                f"sandbox image {tag} not built yet: the first judging shard "
                "builds it (python -m sandbox image ensure does it now)",
                fatal=False,
            )


def template_problem(where: str, path: str, kind: str = "user") -> str | None:
    """What is wrong with a verifier prompt template file (`kind` user or system), or None.

    Every unknown placeholder (with the nearest allowed name for a misspelt one) and every
    missing one, so a bad template fails here and not at `assemble`, minutes into a build."""
    import string

    from pipeline.common.verifier_prompt import SYSTEM_PLACEHOLDERS, USER_PLACEHOLDERS
    from pipeline.errors import closest

    allowed = SYSTEM_PLACEHOLDERS if kind == "system" else USER_PLACEHOLDERS
    try:
        text = Path(path).read_text(encoding="utf-8")
        names = {n for _, n, _, _ in string.Formatter().parse(text) if n is not None}
    except OSError as e:
        return f"{where}: {path} cannot be read ({e.strerror or e})"
    except ValueError as e:  # a lone brace
        return f"{where}: {path}: malformed template ({e}); write literal braces as {{{{ and }}}}"
    parts, meant = [], set()
    for name in sorted(names - allowed):
        near = closest(name, allowed - names - meant)
        parts.append(f"unknown {{{name}}}" + (f" (did you mean {{{near}}}?)" if near else ""))
        meant.add(near)
    parts += [f"missing {{{name}}}" for name in sorted(allowed - names - meant)]
    if not parts:
        return None
    known = ", ".join(f"{{{n}}}" for n in sorted(allowed))
    return f"{where}: {path}: {'; '.join(parts)} (a {kind} template has exactly {known})"


def _templates(cfg: RunConfig) -> list[tuple[str, str, str]]:
    """(config key, file, kind) of every verifier prompt template the build reads, each once
    (a run-level template propagated into assemble and dpo is named by its run-level key)."""
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    sections = [("", cfg), ("assemble.", cfg.assemble), ("dpo.", cfg.dpo)]
    if cfg.train and Path(cfg.train).is_file():
        try:
            from pipeline.train.config import TrainConfig

            sections.append((f"{cfg.train}: prompt.", TrainConfig.from_yaml(cfg.train).prompt))
        except ValueError:
            pass  # the train-verifier flow reports its own config
    for prefix, section in sections:
        for key, kind in (("prompt_template", "user"), ("system_template", "system")):
            value = getattr(section, key, None)
            if value and (value, kind) not in seen:
                seen.add((value, kind))
                out.append((f"{prefix}{key}", value, kind))
    return out


def _check_templates(cfg: RunConfig, report: Report) -> None:
    for where, path, kind in _templates(cfg):
        problem = template_problem(where, path, kind)
        if problem:
            report.add("templates", problem)


def _check_runner(cfg: RunConfig, report: Report) -> None:
    if cfg.runner.kind == "ray" and importlib.util.find_spec("prefect_ray") is None:
        report.add("ray", "runner.kind: ray needs prefect-ray and ray: pip install -e '.[ray]'")
    if cfg.train and not Path(cfg.train).is_file():
        report.add("config", f"train: {cfg.train} not found")


def _check_judge(cfg: RunConfig, report: Report) -> None:
    """What can be known of the judge engine without starting it (the http server's address)."""
    try:
        cfg.sandbox.engine_options()
    except ValueError as e:
        report.add("config", str(e))


def preflight(cfg: RunConfig, *, docker: bool = True) -> Report:
    report = Report(cfg)
    _check_sources(cfg, report)
    _check_models(cfg, report)
    _check_hub(cfg, report)
    _check_templates(cfg, report)
    if docker and cfg.sandbox.engine == "docker":  # other engines need no Docker
        _check_docker(cfg, report)
    _check_judge(cfg, report)
    _check_runner(cfg, report)
    return report


def require(cfg: RunConfig) -> Report:
    """Run the checks; raise PreflightError naming the first fatal finding."""
    report = preflight(cfg)
    report.raise_if_fatal()
    return report


def require_hub(cfg: RunConfig) -> None:
    """Only the Hub checks: what a publish of an existing build needs before it starts."""
    report = Report(cfg)
    _check_hub(cfg, report)
    report.raise_if_fatal()


def plan_dict(report: Report) -> dict[str, Any]:
    return {"ok": report.ok, "lines": report.lines()}
