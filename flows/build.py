"""The build flows: `build-aletheia-train` (all nine configs, then publish) and
`build-aletheia-eval` (Heldout, Strong, Hard, Adv).

Thin wiring only: each stage is a task from flows/tasks.py; this module decides the
work-dir layout, the order, the shard fan-out and the artifacts. `build-aletheia-train`
runs `build-aletheia-eval` as a subflow so one deployment run yields every config;
the stages the two flows share are Prefect-cached, so they execute once.

Work-dir layout (`<out_dir>/work/`):
  problems.parquet (+ .quarantine/.report)   splits/           candidates.parquet
  judged.parquet                             instances/        mixed/ adv/ dpo/ mixed_dpo/
  build.json (the manifest `publish` reads)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

import pipeline
from flows import tasks as T
from flows.artifacts import (
    Progress,
    artifact_key,
    counts_artifact,
    judged_counts,
    rejected_edits,
    timing_sensitivity,
)
from flows.progress import StageWatch, progress_file
from flows.runners import bounded, make_task_runner, placement
from pipeline import preflight
from pipeline.common.hashing import sha256_files
from pipeline.common.hub_folder import split_files
from pipeline.common.sharding import merge_quarantines, merge_shards, write_shards
from pipeline.config import RunConfig, load_run_config
from pipeline.instances.config import test_table_name
from pipeline.publish.layout import BuildManifest
from schemas import CANDIDATE_SCHEMA, INSTANCE_SCHEMA, JUDGED_CANDIDATE_SCHEMA, PROBLEM_SCHEMA

DEFAULT_CONFIG = "configs/demo.yaml"
ConfigParam = str | dict[str, Any]


def _cfg_param(cfg: RunConfig) -> dict[str, Any]:
    return cfg.model_dump(mode="json")


def _source_digest(sources: list[str]) -> str:
    """Content hash of the local files behind the sources (bundled data, local Parquet)."""
    from pipeline.problems.sources import parse_spec

    files = {path for text in sources for path in parse_spec(text).local_paths()}
    return sha256_files(sorted(files))[:16]


def watch(
    cfg: RunConfig,
    stage: str,
    files: list[Path],
    artifact: Progress | None = None,
    enabled: bool = True,
    part: str = "shard",
) -> contextlib.AbstractContextManager:
    """Terminal lines and the UI artifact for a stage whose tasks write `files`."""
    if not (enabled and cfg.progress.enabled):
        return contextlib.nullcontext()
    return StageWatch(
        stage,
        files,
        logger=get_run_logger(),
        artifact=artifact,
        part=part,
        log_every_s=cfg.progress.log_every_s,
        artifact_every_s=cfg.progress.artifact_every_s,
    )


FINGERPRINTS = "fingerprints.json"


def fingerprint_lines(label: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Log a stage's output fingerprints (`[fingerprint] judge judged: 1234 rows 3f2a...`)
    and return them as entries of the build summary (`<work>/fingerprints.json`)."""
    logger = get_run_logger()
    out = []
    for name, fp in (result.get("fingerprints") or {}).items():
        logger.info("[fingerprint] %s %s: %d rows %s", label, name, fp["rows"], fp["hash"])
        out.append({"stage": label, "output": name, **fp, "file": result["outputs"][name]})
    return out


def _timing_note(judged: Path, prints: list[dict[str, Any]]) -> None:
    """Say how many verdicts are timing-sensitive (docs: "The same rows on every machine"):
    the part of a build another machine may judge otherwise."""
    t = timing_sensitivity(judged)
    get_run_logger().info(
        "[fingerprint] judge timing: %d program(s) used >= half their time limit on a test "
        "(a slower CPU may judge them otherwise); %d test(s) stopped by the wall-clock cap "
        "before their CPU limit (this machine was busy: load %.1f on %d cores)",
        t["programs_near_time_limit"],
        t["tests_stopped_by_wall_clock"],
        os.getloadavg()[0],
        os.cpu_count() or 0,
    )
    for e in prints:
        if e["stage"] == "judge" and e["output"] == "judged":
            e.update(t)


def _weights_line(label: str, digest: str | None, what: str) -> list[dict[str, Any]]:
    """A model's fingerprint: the hash of its weights file (None: nothing to show)."""
    if not digest:
        return []
    get_run_logger().info("[fingerprint] %s %s: %s", label, what, digest)
    return [{"stage": label, "output": what, "rows": None, "hash": digest}]


# --- shard fan-out subflows -------------------------------------------------------------


def _collect(
    submits: list[Callable[[], Any]],
    cfg: RunConfig,
    progress: Progress,
    note: Callable[[dict[str, Any]], str],
    parallel: int | None = None,
) -> tuple[list[dict[str, Any]], list[Any]]:
    """Run shard submits (at most `parallel`, default `runner.max_parallel_shards`, at
    once), advancing the progress artifact as each finishes: the shard results and where
    each ran."""
    results, ran_on = [], []
    for fut in bounded(submits, parallel or cfg.runner.max_parallel_shards):
        r = fut.result()
        results.append(r)
        ran_on.append(r.get("ran_on"))
        progress.advance(note=note(r))
    return results, ran_on


@flow(name="sample-shards")
def sample_shards(config: dict[str, Any], splits: dict[str, Any]) -> dict[str, Any]:
    cfg = load_run_config(config)
    work, n = cfg.work_dir, cfg.runner.sample_shards
    out = work / "candidates.parquet"
    sources = [Path(splits["outputs"]["train"]), Path(splits["outputs"]["heldout"])]
    shard_files = write_shards(sources, n, work / "sample" / "shards", "problems", PROBLEM_SCHEMA)
    progress = Progress(artifact_key(cfg.name, "sample-progress"), n, "sampling candidates")
    code = T.code_digest("pipeline.sampling")

    def submit(i: int, shard: Path) -> Any:
        shard_out = work / "sample" / f"shard-{i:04d}"
        t = T.configured(T.sample_task, cfg, [shard_out / "candidates.parquet"])
        with placement(cfg.runner, cfg.runner.sample_placement):
            return t.submit(
                str(shard),
                sha256_files([shard])[:16],
                cfg.sample.model_dump(mode="json"),
                str(shard_out),
                code,
            )

    submits = [partial(submit, i, shard) for i, shard in enumerate(shard_files)]
    files = [progress_file(work / "sample" / f"shard-{i:04d}") for i in range(len(shard_files))]
    with watch(cfg, "sample", files, progress, enabled=cfg.sample.progress):
        results, ran_on = _collect(
            submits,
            cfg,
            progress,
            lambda r: f"{r['stats'].get('candidates', '?')} candidates",
            cfg.runner.model_parallel,
        )
    parts = [Path(r["outputs"]["candidates"]) for r in results]
    merge_shards(sorted(parts), out, CANDIDATE_SCHEMA)
    return T.result("sample", {"candidates": out}, {"shards": n, "shards_ran_on": ran_on})


@flow(name="judge-shards")
def judge_shards(
    config: dict[str, Any],
    candidates: str,
    problems: dict[str, Any],
    out: str,
    name: str = "judge",
    judge: dict[str, Any] | None = None,
    description: str = "judging candidates in the sandbox",
) -> dict[str, Any]:
    """Judge a candidates file (CANDIDATE_SCHEMA) as `runner.judge_shards` shards on the
    sandbox nodes (`runner.judge_placement`, at most `runner.max_parallel_shards` at once)
    and merge the verdicts into `out`, and the shards' quarantines beside it.

    The main judge stage and the adversarial re-judges (Mixed, Adv) all call this. Shard
    files go to `<out's folder>/judge/`; `name` names the progress artifact; `judge` is the
    judge config (None: the run config's `judge` section).
    """
    from pipeline.judge.stage import quarantine_path

    cfg = load_run_config(config)
    n, out_path = cfg.runner.judge_shards, Path(out)
    folder = out_path.parent / "judge"
    judge_cfg = judge if judge is not None else cfg.judge.model_dump(mode="json")
    shard_files = write_shards(
        [Path(candidates)], n, folder / "shards", "candidates", CANDIDATE_SCHEMA
    )
    progress = Progress(artifact_key(cfg.name, name, "progress"), n, description)
    code = T.code_digest("pipeline.judge", "sandbox")

    def submit(i: int, shard: Path) -> Any:
        shard_out = folder / f"judged-{i:04d}-of-{n:04d}.parquet"
        t = T.configured(T.judge_task, cfg, [shard_out])
        if name != "judge":  # a re-judge's shards say so in the UI: `adv-judge-shard-0`
            t = t.with_options(task_run_name=f"{name}-judge-shard-{i}")
        with placement(cfg.runner, cfg.runner.judge_placement):
            return t.submit(
                str(shard),
                sha256_files([shard])[:16],
                T.ref(problems),
                judge_cfg,
                cfg.sandbox.model_dump(mode="json"),
                str(shard_out),
                code,
            )

    submits = [partial(submit, i, shard) for i, shard in enumerate(shard_files)]
    files = [
        progress_file(folder / f"judged-{i:04d}-of-{n:04d}.parquet")
        for i in range(len(shard_files))
    ]
    stage = "judge" if name == "judge" else f"{name} re-judge"
    with watch(cfg, stage, files, progress, enabled=cfg.judge.progress):
        results, ran_on = _collect(
            submits, cfg, progress, lambda r: f"{r['stats'].get('judged_rows', '?')} rows"
        )
    parts = [Path(r["outputs"]["judged"]) for r in results]
    se = sum(int(r["stats"].get("se", 0) or 0) for r in results)
    merge_shards(sorted(parts), out_path, JUDGED_CANDIDATE_SCHEMA)
    quarantine = quarantine_path(out_path)
    quarantined = merge_quarantines([quarantine_path(p) for p in sorted(parts)], quarantine)
    return T.result(
        "judge",
        {"judged": out_path, "quarantine": quarantine},
        {"shards": n, "se": se, "quarantined": quarantined, "shards_ran_on": ran_on},
    )


# --- the shared front half --------------------------------------------------------------


def prepare(cfg: RunConfig) -> dict[str, dict[str, Any]]:
    """problems -> splits -> sample -> judge -> assemble (Train, Heldout, Strong, Hard)."""
    work = cfg.work_dir
    problems_out = work / "problems.parquet"
    problems = T.configured(T.ingest_task, cfg, [problems_out])(
        cfg.sources,
        _source_digest(cfg.sources),
        cfg.ingest.model_dump(mode="json"),
        str(problems_out),
        T.code_digest("pipeline.problems"),
    )
    prints = fingerprint_lines("ingest", problems)
    splits_dir = work / "splits"
    splits = T.configured(T.splits_task, cfg, [splits_dir / "train.parquet"])(
        T.ref(problems),
        cfg.splits.model_dump(mode="json"),
        str(splits_dir),
        T.code_digest("pipeline.splits"),
    )
    prints += fingerprint_lines("splits", splits)

    # Before sampling (the model sources read these folders); one thread each, so as many
    # side by side as `runner.model_parallel_shards` allows.
    def fit_submit(fit: Any) -> Any:
        t = T.configured(T.policy_task, cfg, [fit.dir / "fit.json"])
        return t.submit(
            fit.model_dump(mode="json"), T.ref(problems), T.code_digest("pipeline.models")
        )

    fit_files = [T.policy_progress_file(fit.dir) for fit in cfg.policies]
    with watch(cfg, "fit " + " + ".join(f.name for f in cfg.policies), fit_files, part="fit"):
        done = [
            f.result()
            for f in bounded(
                [partial(fit_submit, f) for f in cfg.policies], cfg.runner.model_parallel
            )
        ]
    fitted = {r["stage"].removeprefix("policy-"): r for r in done}
    for fit in cfg.policies:
        weights = fitted[fit.name]["stats"].get("weights_sha256")
        prints += _weights_line(f"fit {fit.name}", weights, "weights")
    runner = make_task_runner(cfg.runner, cfg.runner.model_parallel)
    candidates = sample_shards.with_options(task_runner=runner)(_cfg_param(cfg), splits)
    prints += fingerprint_lines("sample", candidates)
    judged = judge_shards.with_options(task_runner=make_task_runner(cfg.runner))(
        _cfg_param(cfg),
        candidates["outputs"]["candidates"],
        problems,
        str(work / "judged.parquet"),
    )
    prints += fingerprint_lines("judge", judged)
    _timing_note(Path(judged["outputs"]["judged"]), prints)
    counts_artifact(
        artifact_key(cfg.name, "judged-counts"),
        judged_counts(Path(judged["outputs"]["judged"]), Path(judged["outputs"]["quarantine"])),
        "Judged candidates per model / tier / language / verdict, and the problems the judge "
        "quarantined",
    )
    # The tiny model is built before assembly: the demo measures Aletheia's token caps with
    # its tokenizer (the R1-distill one cannot be downloaded offline).
    tiny = _tiny_model(cfg)
    if tiny is not None:
        prints += _weights_line("tiny-model", tiny["stats"].get("weights_sha256"), "weights")
    inst_dir = work / "instances"
    instances = T.configured(T.assemble_task, cfg, [inst_dir / "train.parquet"])(
        T.ref(judged),
        T.ref(problems),
        T.ref(splits),
        cfg.assemble.model_dump(mode="json"),
        str(inst_dir),
        T.code_digest("pipeline.instances"),
    )
    prints += fingerprint_lines("assemble", instances)
    front = {
        "problems": problems,
        "splits": splits,
        "candidates": candidates,
        "judged": judged,
        "instances": instances,
    }
    if tiny is not None:
        front["tiny_model"] = tiny
    front["fingerprints"] = prints  # type: ignore[assignment]
    return front


def _tiny_model(cfg: RunConfig) -> dict[str, Any] | None:
    if cfg.tiny_model is None:
        return None
    return T.configured(T.tiny_model_task, cfg, [cfg.tiny_model.dir / "config.json"])(
        str(cfg.tiny_model.dir),
        cfg.tiny_model.seed,
        T.code_digest("pipeline.models"),
    )


def adversarial_source(section: str, instances: dict[str, Any]) -> Path:
    """The table a bias-edit split is built from: Mixed from Train; Adv, as Aletheia's
    (`src/rq4_datagen.py` reads the listwise Heldout set's `test` split), from Heldout's
    `test` split (Heldout itself when the build has none)."""
    if section == "mixed":
        return Path(instances["train"])
    return Path(instances.get(test_table_name("heldout")) or instances["heldout"])


def _adversarial(
    cfg: RunConfig, section: str, source: dict[str, Any], problems: dict[str, Any]
) -> dict[str, Any]:
    """Plan the bias edits, judge the edited programs as judge shards on the sandbox nodes,
    then build the split from the plan and the judged table (nothing is judged here)."""
    adv_cfg = getattr(cfg, section)
    out_dir = cfg.work_dir / section
    src = adversarial_source(section, source)
    src_digest = sha256_files([src])[:16]
    code = T.code_digest("pipeline.instances", "pipeline.judge", "sandbox")
    edits_dir = out_dir / "edits"
    with watch(cfg, f"{section} edits", [progress_file(edits_dir)]):
        edits = T.configured(T.adversarial_edits_task, cfg, [edits_dir / "edits.parquet"])(
            str(src),
            src_digest,
            T.ref(problems),
            adv_cfg.model_dump(mode="json"),
            str(edits_dir),
            code,
        )
    prints = fingerprint_lines(f"{section} edits", edits)
    carried = edits["stats"].get("edits_carried_unchanged", 0)
    get_run_logger().info(
        "%s: %d bias edits planned, %d proven unchanged (verdict carried), %d programs to re-judge",
        section,
        edits["stats"].get("edits_planned", 0),
        carried,
        edits["stats"].get("distinct_programs", 0),
    )
    # The edits are judged with the stage's own judge settings (those the originals were
    # judged with), so the in-process and the sharded re-judge agree.
    judged = judge_shards.with_options(task_runner=make_task_runner(cfg.runner))(
        _cfg_param(cfg),
        edits["outputs"]["edits"],
        problems,
        str(out_dir / "judged-edits.parquet"),
        name=section,
        judge=adv_cfg.judge.model_dump(mode="json"),
        description=f"{section}: re-judging the bias-edited programs in the sandbox",
    )
    prints += fingerprint_lines(f"{section} re-judge", judged)
    out = T.configured(T.adversarial_task, cfg, [out_dir / f"{section}.parquet"])(
        str(src),
        src_digest,
        T.ref(problems),
        adv_cfg.model_dump(mode="json"),
        cfg.sandbox.model_dump(mode="json"),
        str(out_dir),
        code,
        judged_edits=T.ref(judged),
    )
    counts_artifact(
        artifact_key(cfg.name, section, "rejected-edits"),
        rejected_edits(out["stats"]),
        f"{section}: bias edits per type, planned / accepted / rejected by the re-judge",
    )
    return {**out, "fingerprints_all": prints + fingerprint_lines(section, out)}


@flow(name="dpo-shards")
def dpo_shards(
    config: dict[str, Any], name: str, instances: str, extra_digest: str = ""
) -> dict[str, Any]:
    """DPO verifier responses in `runner.dpo_shards` shards by problem (placed like sampling:
    they load models), then one pairs task over every shard's responses. `extra_digest`: what
    else the responses depend on (the tiny model the demo's judge loads)."""
    cfg = load_run_config(config)
    n = cfg.runner.dpo_shards or cfg.runner.sample_shards
    base = cfg.work_dir / name
    src = Path(instances)
    dpo_cfg = cfg.dpo.model_copy(update={"name": name})
    shard_files = write_shards([src], n, base / "shards", "instances", INSTANCE_SCHEMA)
    progress = Progress(
        artifact_key(cfg.name, name, "progress"), n, f"{name}: verifier responses by shard"
    )
    code = T.code_digest("pipeline.instances", "pipeline.sampling")

    def submit(i: int, shard: Path) -> Any:
        shard_out = base / "responses" / f"shard-{i:04d}-of-{n:04d}"
        t = T.configured(T.dpo_responses_task, cfg, [shard_out / "judges" / "responses.parquet"])
        with placement(cfg.runner, cfg.runner.sample_placement):
            return t.submit(
                str(shard),
                sha256_files([shard])[:16] + extra_digest,
                dpo_cfg.model_dump(mode="json"),
                str(shard_out),
                code,
            )

    submits = [partial(submit, i, shard) for i, shard in enumerate(shard_files)]
    files = [
        progress_file(base / "responses" / f"shard-{i:04d}-of-{n:04d}")
        for i in range(len(shard_files))
    ]
    with watch(cfg, f"{name} responses", files, progress):
        parts, ran_on = _collect(
            submits,
            cfg,
            progress,
            lambda r: f"{r['stats']['judges'].get('responses', '?')} responses",
            cfg.runner.model_parallel,
        )
    parts.sort(key=lambda r: r["outputs"]["judges"])  # completion order must not matter
    out = T.configured(T.dpo_pairs_task, cfg, [base / f"{name}.parquet"])(
        str(src),
        sha256_files([src])[:16],
        [T.ref(r) for r in parts],
        dpo_cfg.model_dump(mode="json"),
        str(base),
        code,
    )
    return {**out, "stats": {**out["stats"], "shards": n, "shards_ran_on": ran_on}}


def _dpo(cfg: RunConfig, name: str, instances: Path, tiny: dict[str, Any] | None) -> dict[str, Any]:
    """DPO pairs for one instance table; `name` (dpo | mixed_dpo) names the output."""
    runner = make_task_runner(cfg.runner, cfg.runner.model_parallel)
    return dpo_shards.with_options(task_runner=runner)(
        _cfg_param(cfg), name, str(instances), tiny["digest"] if tiny else ""
    )


@flow(name="build-aletheia-eval", log_prints=True)
def build_aletheia_eval(
    config: ConfigParam = DEFAULT_CONFIG, front: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Heldout, Strong and Hard (from assembly: `full` tables, and `test` ones under
    `<name>.test`) and Adv (bias edits on Heldout's `test` split, re-judged).

    `front`: the results of `prepare` when the train flow already ran it (else it runs here).
    """
    cfg = load_run_config(config)
    if front is None:  # run on its own (as a subflow of the train flow, already checked)
        preflight.require(cfg)
    front = front or prepare(cfg)
    adv = _adversarial(cfg, "adv", front["instances"]["outputs"], front["problems"])
    inst = front["instances"]["outputs"]
    out = {name: inst[name] for name in ("heldout", "strong", "hard")}
    out |= {
        test_table_name(name): inst[test_table_name(name)]
        for name in ("heldout", "strong", "hard")
        if test_table_name(name) in inst
    }
    return out | {
        "adv": adv["outputs"]["adv"],
        "front": front,
        "fingerprints": adv["fingerprints_all"],
    }


@flow(name="build-aletheia-train", log_prints=True)
def build_aletheia_train(config: ConfigParam = DEFAULT_CONFIG) -> dict[str, Any]:
    """problems -> splits -> sample -> judge -> assemble -> mixed -> dpo -> (eval) -> publish."""
    from flows.publish import publish_aletheia

    cfg = load_run_config(config)
    logger = get_run_logger()
    # Fail in seconds, not after hours of sampling: sources, models, Hub, Docker, vLLM envs.
    for line in preflight.require(cfg).lines():
        logger.info(line)
    front = prepare(cfg)
    problems, inst = front["problems"], front["instances"]["outputs"]
    mixed = _adversarial(cfg, "mixed", inst, problems)
    tiny = front.get("tiny_model")
    dpo = _dpo(cfg, "dpo", Path(inst["train"]), tiny)
    prints = front["fingerprints"] + mixed["fingerprints_all"] + fingerprint_lines("dpo", dpo)
    mixed_dpo = _dpo(cfg, "mixed_dpo", Path(mixed["outputs"]["mixed"]), tiny)
    prints += fingerprint_lines("mixed_dpo", mixed_dpo)
    evals = build_aletheia_eval(_cfg_param(cfg), front)
    prints += evals["fingerprints"]

    work = cfg.work_dir.resolve()

    def rel(p: str | Path) -> str:
        return Path(p).resolve().relative_to(work).as_posix()

    tables = {
        "train": rel(inst["train"]),
        "train_questions": rel(front["splits"]["outputs"]["train_questions"]),
        "dpo": rel(dpo["outputs"]["dpo"]),
        "mixed": rel(mixed["outputs"]["mixed"]),
        "mixed_dpo": rel(mixed_dpo["outputs"]["dpo"]),
        "heldout": rel(evals["heldout"]),
        "strong": rel(evals["strong"]),
        "hard": rel(evals["hard"]),
        "adv": rel(evals["adv"]),
    }
    # Adv has no test table of its own: it is published as both `test` and `full`.
    test_tables = {
        name: rel(evals[test_table_name(name)])
        for name in ("heldout", "strong", "hard")
        if test_table_name(name) in evals
    }
    seeds = {
        name: getattr(cfg, name).seed for name in ("splits", "assemble", "mixed", "adv", "dpo")
    }
    for i, source in enumerate(cfg.sample.sources):  # each candidate source has its own seed
        if getattr(source, "seed", None) is not None:
            seeds[f"sample.{i}.{source.kind}.{source.tier}"] = source.seed
    BuildManifest(
        build_id=cfg.build_id,
        pipeline_version=pipeline.__version__,
        run_config=_cfg_param(cfg),
        seeds=seeds,
        sandbox_image=_sandbox_image(Path(front["judged"]["outputs"]["judged"])),
        tables=tables,
        test_tables=test_tables,
        assignments=rel(front["splits"]["outputs"]["assignments"]),
        stage_stats={k: v.get("stats", {}) for k, v in front.items() if k != "fingerprints"},
    ).write(work)
    logger.info("build manifest written: %s", work / "build.json")
    # Every stage's fingerprint in one file: the build summary shows it, and two users
    # compare theirs line by line to see where their builds parted.
    for e in prints:  # paths relative to the work dir: two machines' files compare as text
        if e.get("file") and Path(e["file"]).resolve().is_relative_to(work):
            e["file"] = rel(e["file"])
    (work / FINGERPRINTS).write_text(json.dumps(prints, indent=1) + "\n")
    published = publish_aletheia(_cfg_param(cfg))
    if cfg.evaluate is not None:
        published["evaluation"] = evaluate_published(cfg)
    return published


def evaluate_published(cfg: RunConfig) -> dict[str, Any]:
    """The run config's `evaluate:` section: its model scored on the published folder's
    evaluation configs, the report under `cfg.eval_dir` (outside the hub folder)."""
    section, hub = cfg.evaluate, cfg.hub_dir
    assert section is not None and cfg.eval_dir is not None
    knobs = section.eval_config().model_copy(update={"progress": False})  # lines, not a bar
    files = [f for name in knobs.splits for f in split_files(hub, name, knobs.split)]
    model = Path(section.model)
    # A local model folder by content (the demo's tiny verifier); a hub id by its name.
    weights = sorted(p for p in model.iterdir() if p.is_file()) if model.is_dir() else []
    out = cfg.eval_dir
    with watch(cfg, "evaluate", [progress_file(out)]):
        evaluated = T.configured(T.evaluate_published_task, cfg, [out / "report.json"])(
            section.model,
            sha256_files(weights)[:16] if weights else section.model,
            str(hub),
            sha256_files(files)[:16],
            knobs.model_dump(mode="json"),
            str(out),
            T.code_digest("pipeline.evaluate", "pipeline.sampling"),
        )
    get_run_logger().info("evaluation report: %s", Path(evaluated["outputs"]["markdown"]).resolve())
    return evaluated


def _sandbox_image(judged: Path) -> str | None:
    import polars as pl

    images = (
        pl.read_parquet(judged, columns=["sandbox_image"])["sandbox_image"]
        .unique()
        .sort()
        .to_list()
    )
    return ", ".join(i for i in images if i) or None
