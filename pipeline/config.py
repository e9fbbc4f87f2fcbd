"""`RunConfig`: one build of the dataset family, composing every stage's own config.

A run config is a YAML file (see configs/demo.yaml) or the same mapping inline. The
flows, the CLI and the deployments all take one; each stage receives only its own
section, so a stage's cache key changes only when its own knobs (or inputs) change.

    cfg = load_run_config("configs/demo.yaml")
    cfg.work_dir / "problems" / "problems.parquet"
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from pipeline.common.config import RetrySection, RunnerSection, Section, left_out_at_defaults
from pipeline.common.hashing import canonical_json, sha256_file, sha256_text
from pipeline.common.verifier_prompt import check_one_wording
from pipeline.errors import UserError, describe
from pipeline.evaluate.config import EvalConfig
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.config import AssembleConfig
from pipeline.instances.dpo.config import DPOConfig
from pipeline.judge.config import JudgeConfig, SandboxSection
from pipeline.models.config import PolicyFit, TinyModelSection
from pipeline.models.policy import spec_digest
from pipeline.problems.config import IngestConfig
from pipeline.publish.config import HubSection, PublishConfig
from pipeline.sampling.config import ModelSource, MutantSource, ReferenceSource, SampleConfig
from pipeline.splits.config import SplitConfig


class ProgressSection(Section):
    """Progress of a flow run's long stages, fed by the stages themselves: a line in the
    terminal (and the flow log) every `log_every_s`, and the Prefect UI's progress artifact
    every `artifact_every_s`. `sample.progress` / `judge.progress` switch a stage's lines
    off (in a flow the stages never draw their own progress bars)."""

    enabled: bool = Field(True, description="Report the long stages' progress at all.")
    log_every_s: float = Field(
        10.0, gt=0, description="Seconds between progress lines in the terminal and flow log."
    )
    artifact_every_s: float = Field(
        2.0, gt=0, description="Seconds between updates of the Prefect UI's progress artifact."
    )


class EvaluateSection(EvalConfig):
    """After publish, the build flow evaluates `model` on the published folder's evaluation
    configs (`splits`, their `split`: `test` by default) with these EvalConfig knobs, and
    writes the report under `out_dir` (never inside the hub folder, which is what is pushed).
    Cached like a stage: a re-run with the same model, published rows and knobs reuses it."""

    model: str = Field(
        description="The verifier to evaluate: a model folder or hub id (the demo: its tiny "
        "verifier, `tiny_model.dir`)."
    )
    out_dir: Path | None = Field(
        None, description="Where the report goes; None = <run out_dir>/eval."
    )

    def eval_config(self) -> EvalConfig:
        """The knobs `pipeline.evaluate.evaluate` takes (this section less model / out_dir)."""
        return EvalConfig.model_validate(self.model_dump(exclude={"model", "out_dir"}))


# The sections that decide the rows (the build id hashes these); the rest (where, how fast,
# how often to retry, where to push) may change without changing the dataset.
DATA_SECTIONS = {
    "seed",
    "sources",
    "prompt_template",
    "system_template",
    "aletheia_src",
    "ingest",
    "splits",
    "sample",
    "judge",
    "assemble",
    "mixed",
    "adv",
    "dpo",
    "tiny_model",
    "policies",
}


_DISPLAY_ONLY: dict[str, Any] = {"sample": {"progress"}, "judge": {"progress"}}


def _is_template_file(key: str, value: str) -> bool:
    """Whether a `*_template` value names a file. Prompt and system templates are always
    files; a sample source's `chat_template` is a file only when it has no `{` and exists
    (otherwise it is inline Jinja text, as `ModelSource.chat_template_text` reads it)."""
    if key != "chat_template":
        return True
    return "{" not in value and Path(value).is_file()


def hash_template_files(data: Any, where: str = "") -> Any:
    """`data` (a config dump) with every template file it names replaced by the file's
    content hash, so the build id follows what a template says, not where it lives: editing
    a template changes the build id; the same bytes at another path keep it (the rows would
    be the same). A named template file that does not exist is an error naming the field."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            at = f"{where}.{key}" if where else str(key)
            if isinstance(value, str) and str(key).endswith("_template"):
                out[key] = _template_digest(at, str(key), value)
            elif isinstance(value, str) and key == "aletheia_src":
                out[key] = _wording_digest(at, value)
            else:
                out[key] = hash_template_files(value, at)
        return out
    if isinstance(data, list):
        return [hash_template_files(v, f"{where}[{i}]") for i, v in enumerate(data)]
    return data


def _template_digest(at: str, key: str, value: str) -> str:
    if not _is_template_file(key, value):
        return value  # inline template text: already part of the config
    path = Path(value)
    if not path.is_file():
        raise ValueError(
            f"{at}: template file {value!r} not found (relative to {Path.cwd()}); the build "
            "id hashes its content"
        )
    return "sha256:" + sha256_file(path)


def _wording_digest(at: str, src: str) -> str:
    """Aletheia's wording read from a checkout, by its content (the build id follows what
    the prompts say, not where the checkout lives); a checkout that cannot give it is an
    error naming the field."""
    from pipeline.common.aletheia_prompts import AletheiaPromptError, read_aletheia_prompts

    try:
        return "sha256:" + read_aletheia_prompts(src).sha256
    except AletheiaPromptError as e:
        raise ValueError(f"{at}: {e}") from None


def default_sample() -> SampleConfig:
    """No model: the sources' reference solutions and mutants of the correct ones."""
    return SampleConfig(
        sources=[ReferenceSource(tier="weak"), MutantSource(tier="weak")], progress=False
    )


class RunConfig(Section):
    name: str = Field(
        "aletheia", description="The build's name (in its Prefect artifacts' keys and summary)."
    )
    seed: int = Field(
        0, description="The run-wide seed, given to every stage section that sets none."
    )
    build_id: str | None = Field(
        None,
        description="The build's id (every row's `build_id`); None = derived from this "
        "config's data sections (template files by their content, not their path).",
    )
    sources: list[str] = Field(
        default_factory=lambda: ["bundled"],
        description="Problem sources to ingest (pipeline.problems.sources specs).",
    )
    out_dir: Path = Field(
        Path("out/aletheia"),
        description="Holds work/ (the intermediate tables) and hub/ (the release).",
    )
    prompt_template: str | None = Field(
        None,
        description="The dataset side's verifier prompt (DPO rows' `prompt`, and the prompt "
        "measured for assembly's token cap): a template file with {question} {candidates} "
        "{valid_options}; None = our wording. Given to `assemble` and `dpo` unless they set "
        "their own.",
    )
    system_template: str | None = Field(
        None,
        description="The instruct system turn's template file ({valid_options}); None = our "
        "wording. Given to `assemble` and `dpo` unless they set their own.",
    )
    aletheia_src: str | None = Field(
        None,
        description="A checkout of Aletheia's code (or one of its prompt files, e.g. "
        "src/cerebrm_prompts.py): every verifier prompt of the build is then Aletheia's own "
        "wording, its constants read from src/prompts.py with `ast`, never run "
        "(pipeline/common/aletheia_prompts.py); the build id hashes the wording, the card "
        "names it. Given to `assemble`, `dpo` and `evaluate` unless they set their own "
        "wording; excludes prompt_template / system_template. None = the project's wording.",
    )

    ingest: IngestConfig = Field(
        default_factory=IngestConfig, description="Ingesting problems with tests."
    )
    splits: SplitConfig = Field(
        default_factory=SplitConfig, description="Contamination-free problem splits."
    )
    sample: SampleConfig = Field(
        default_factory=lambda: default_sample(),
        description="Candidate generation: the policy pool (or a pool file, or a list of "
        "them); default: references and their mutants, no model.",
    )
    judge: JudgeConfig = Field(
        default_factory=JudgeConfig, description="Judging candidates in the sandbox."
    )
    assemble: AssembleConfig = Field(
        default_factory=AssembleConfig,
        description="Instances with exactly one correct candidate (train, heldout, strong, hard).",
    )
    mixed: AdversarialConfig = Field(
        default_factory=AdversarialConfig.mixed,
        description="The Mixed set: bias edits on a share of Train (split must be mixed).",
    )
    adv: AdversarialConfig = Field(
        default_factory=AdversarialConfig,
        description="The Adv eval set: bias edits, every edited program judged again (split "
        "must be adv).",
    )
    dpo: DPOConfig = Field(
        default_factory=DPOConfig, description="DPO pairs from verifier-model responses."
    )
    publish: PublishConfig = Field(
        default_factory=PublishConfig, description="The Hub folder's layout and checks."
    )

    hub: HubSection = Field(
        default_factory=HubSection, description="Where (and whether) the release is pushed."
    )
    sandbox: SandboxSection = Field(
        default_factory=SandboxSection, description="The sandbox engine that runs programs."
    )
    runner: RunnerSection = Field(
        default_factory=RunnerSection, description="How stage shards are executed."
    )
    retry: RetrySection = Field(
        default_factory=RetrySection, description="Retries and timeouts of stage tasks."
    )
    progress: ProgressSection = Field(
        default_factory=ProgressSection, description="Progress reports of the long stages."
    )
    tiny_model: TinyModelSection | None = Field(
        None, description="A tiny random local model (the demo's DPO verifier); None = none."
    )
    policies: list[PolicyFit] = Field(
        default_factory=list,
        description="Tiny local policies fitted on the ingested problems' reference solutions "
        "before sampling (pipeline/models/policy.py): the demo's weak and strong pools.",
    )
    train: str | None = Field(
        None, description="A TrainConfig YAML for the train-verifier flow; None = none."
    )
    evaluate: EvaluateSection | None = Field(
        None,
        description="Evaluate a verifier on the published folder after publish; None = no "
        "evaluation. Not a data section: it changes no row, so not the build id either.",
    )

    @field_validator("evaluate", mode="before")
    @classmethod
    def _empty_evaluate_is_none(cls, value: Any) -> Any:
        # `evaluate: {}` is how a run config without the section dumps (below): it names
        # no model, so there is nothing to evaluate.
        return None if value == {} else value

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # Unset, left out: the build id and the card's run config stay as they were.
        return left_out_at_defaults(handler(self), {"aletheia_src": None})

    @field_serializer("evaluate")
    def _dump_evaluate(self, value: EvaluateSection | None, info: Any) -> Any:
        # Absent dumps as `{}`, as the placeholder this field once was: the manifest and the
        # card of a config without the section stay byte for byte what they were.
        if value is None:
            return {}
        return value.model_dump(mode=info.mode)

    @model_validator(mode="before")
    @classmethod
    def _pool_files(cls, data: Any) -> Any:
        """`sample: configs/pools/x.yaml` or a list of such files: their sources, concatenated."""
        if isinstance(data, dict) and isinstance(data.get("sample"), (str, list)):
            paths = [data["sample"]] if isinstance(data["sample"], str) else data["sample"]
            sources: list[Any] = []
            for p in paths:
                pool = yaml.safe_load(Path(p).read_text()) or {}
                if not isinstance(pool, dict) or "sources" not in pool:
                    raise ValueError(f"sample: {p} is not a pool config (a mapping with `sources`)")
                sources += pool["sources"]
            data = {**data, "sample": {"sources": sources}}
        return data

    @model_validator(mode="after")
    def _propagate(self) -> RunConfig:
        """Fill the run-wide seed and build id into sections that did not set their own."""
        self._stamp_policy_revisions()
        if "answer_format" not in self.dpo.model_fields_set:
            # the DPO rows' prompt and gold splice follow the published answer form; set
            # before the build id, which then follows it too (the rows differ)
            self.dpo.answer_format = self.publish.answer_format
        if self.build_id is None:
            self.build_id = "b_" + sha256_text(canonical_json(data_projection(self)))[:12]
        for section in (self.splits, self.sample, self.assemble, self.mixed, self.adv, self.dpo):
            if "seed" in type(section).model_fields and "seed" not in section.model_fields_set:
                section.seed = self.seed
        if "build_id" not in self.assemble.model_fields_set:
            self.assemble.build_id = self.build_id
        if self.splits.heldout_rule == "not_in_train":  # Aletheia's rule, applied at assembly
            self.assemble.eval_problems = "not_in_train"
        check_one_wording(self.aletheia_src, self.prompt_template, self.system_template)
        for section in (self.assemble, self.dpo):
            for name in ("prompt_template", "system_template", "aletheia_src"):
                value = getattr(self, name)
                fields = type(section).model_fields
                if value is not None and name in fields and name not in section.model_fields_set:
                    setattr(section, name, value)
        self._propagate_to_evaluate()
        if self.mixed.split != "mixed":
            raise ValueError("mixed.split must be 'mixed'")
        if self.adv.split != "adv":
            raise ValueError("adv.split must be 'adv'")
        if self.dpo.name != "dpo":
            raise ValueError(
                "dpo.name must be 'dpo' (the flow names the Mixed-DPO output mixed_dpo)"
            )
        return self

    def _propagate_to_evaluate(self) -> None:
        """The evaluation after publish asks for the published answer form, in the build's
        wording (Aletheia's, when the build has it and the section names no wording)."""
        ev = self.evaluate
        if ev is None:
            return
        if "answer_format" not in ev.model_fields_set:
            ev.answer_format = self.publish.answer_format
        own = ev.aletheia_src or ev.prompt_template or ev.system_template
        if self.aletheia_src and not own:
            ev.aletheia_src = self.aletheia_src

    def _stamp_policy_revisions(self) -> None:
        """A model source sampling a fitted policy gets the fit's digest as its revision, so
        the sample stage's cache key changes whenever the fit settings or code change (its
        examples come from the problems, which the sample stage already hashes)."""
        names = [p.name for p in self.policies]
        if len(set(names)) != len(names):
            raise ValueError(f"policies: names must be unique, got {names}")
        by_dir = {p.dir.resolve(): p for p in self.policies}
        for i, source in enumerate(self.sample.sources):
            if not isinstance(source, ModelSource):
                continue
            fit = by_dir.get(Path(source.model).resolve())
            if fit is None:
                continue
            stamp = f"fit-{spec_digest(fit)}"
            if source.revision not in (None, stamp):
                raise ValueError(
                    f"sample.sources[{i}] ({source.name}): samples the fitted policy "
                    f"{fit.name!r}, so its revision is set by the fit; remove revision "
                    f"{source.revision!r}"
                )
            source.revision = stamp

    @property
    def work_dir(self) -> Path:
        return self.out_dir / "work"

    @property
    def hub_dir(self) -> Path:
        return self.out_dir / "hub"

    @property
    def eval_dir(self) -> Path | None:
        """Where the evaluation after publish writes its report (None: no evaluation)."""
        if self.evaluate is None:
            return None
        return self.evaluate.out_dir or self.out_dir / "eval"


def data_projection(cfg: RunConfig) -> dict[str, Any]:
    """What the build id hashes: the data sections (DATA_SECTIONS) of a config as validated,
    before the run-wide seed and templates are propagated into them (`_propagate` computes
    the id first), with template files by their content and the display-only fields left
    out (whether progress is shown changes no row)."""
    return hash_template_files(
        cfg.model_dump(mode="json", include=DATA_SECTIONS, exclude=_DISPLAY_ONLY)
    )


def _read_raw(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UserError(
            f"run config {path} not found (relative to {Path.cwd()}); see configs/ for examples"
        )
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark else ""
        raise UserError(f"{path}: {at}not valid YAML ({getattr(e, 'problem', e)})") from e
    if not isinstance(raw, dict):
        raise UserError(f"{path}: a run config is a mapping at the top level")
    return raw


def _override(raw: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """`raw` with `value` at `a.b.c` (the mappings on the way copied, never mutated)."""
    head, _, rest = dotted.partition(".")
    if not rest:
        return {**raw, head: value}
    inner = raw.get(head) or {}
    if not isinstance(inner, dict):
        raise UserError(f"override {dotted}: {head} is not a mapping in the run config")
    return {**raw, head: _override(inner, rest, value)}


def resolve_run_config(
    source: str | Path | dict[str, Any] | RunConfig,
    *,
    overrides: Mapping[str, Any] | None = None,
    engine: str | None = None,
) -> RunConfig:
    """A YAML path, an inline mapping or a RunConfig -> the run's RunConfig, validated
    exactly once (a RunConfig without overrides is returned as it is).

    `overrides` (dotted keys: `{"ingest.limit_per_source": 2}` for --limit) go into the raw
    mapping BEFORE validation, so they enter the build id like any field set in the file.
    `engine` (--engine) replaces `sandbox.engine` AFTER it: which engine judges is not part of
    the build id."""
    where = f"{source}: " if isinstance(source, (str, Path)) else ""
    if isinstance(source, RunConfig) and not overrides:
        cfg = source
    else:
        if isinstance(source, RunConfig):  # overrides on a resolved config: its dump, again
            raw = source.model_dump(mode="json", exclude={"build_id"})
        elif isinstance(source, dict):
            raw = source
        else:
            raw = _read_raw(Path(source))
        for dotted, value in (overrides or {}).items():
            raw = _override(raw, dotted, value)
        try:
            cfg = RunConfig.model_validate(raw)
        except ValidationError as e:
            if not where:
                raise
            raise UserError(f"{where}{describe(e, RunConfig)}") from e
        except (ValueError, OSError) as e:  # a pool file named by `sample:` is missing or wrong
            if not where:
                raise
            raise UserError(f"{where}{' '.join(str(e).split())}") from e
    if engine is not None:
        cfg = cfg.model_copy(update={"sandbox": cfg.sandbox.with_engine(engine)})
    return cfg


def load_run_config(config: str | Path | dict[str, Any] | RunConfig) -> RunConfig:
    """A YAML path, an inline mapping, or a RunConfig -> a validated RunConfig (see
    `resolve_run_config`, which also takes overrides and an engine)."""
    return resolve_run_config(config)
