"""The build flows: `build-aletheia-train` (all nine configs, then publish) and
`build-aletheia-eval` (Heldout, Strong, Hard, Adv).

The order of the stages, the sections each gets and the artifacts; nothing else. A stage
runs as one task (`flows.task.run_task`) or, when sharded, through the one fan-out
(`flows.fanout.run_sharded`). `build-aletheia-train` runs `build-aletheia-eval` as a
subflow so one deployment run yields every config; the stages the two share are
Prefect-cached, so they execute once.

Work-dir layout (`<out_dir>/work/`):
  problems.parquet (+ .quarantine/.report)   splits/           candidates.parquet
  judged.parquet                             instances/        mixed/ adv/ dpo/ mixed_dpo/
  build.json (the manifest `publish` reads)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

import pipeline
from flows.artifacts import (
    FINGERPRINTS,
    artifact_key,
    counts_artifact,
    fingerprint_lines,
    judged_counts,
    rejected_edits,
    timing_note,
    weights_line,
)
from flows.fanout import run_each, run_sharded
from flows.progress import watch
from flows.quiet import quiet_libraries
from flows.task import (
    RunSettings,
    checked,
    file_ref,
    gathered,
    policy_progress_file,
    ref,
    run_task,
)
from pipeline.config import RunConfig
from pipeline.instances.adversarial.stage import ADVERSARIAL, ADVERSARIAL_EDITS
from pipeline.instances.config import test_table_name
from pipeline.instances.dpo.stage import DPO_PAIRS, DPO_RESPONSES
from pipeline.instances.stage import ASSEMBLE, split_tables
from pipeline.judge.stage import JUDGE, JudgeCall
from pipeline.models.stage import FIT_POLICY, TINY_MODEL, TinyModelCall
from pipeline.problems.stage import INGEST, IngestCall, ingest_inputs
from pipeline.publish.layout import BuildManifest
from pipeline.sampling.stage import SAMPLE
from pipeline.splits.stage import SPLITS, SplitCall, split_inputs

DEFAULT_CONFIG = "configs/demo.yaml"
# A path or a mapping (a deployment): resolved and checked by the flow; a RunConfig: by
# its caller (the CLI, the train flow). Prefect never validates it (validate_parameters).
ConfigParam = str | dict[str, Any] | RunConfig
EVAL_SETS = ("heldout", "strong", "hard")


def prepare(cfg: RunConfig) -> dict[str, Any]:
    """ingest -> splits -> fit-policy -> sample -> judge -> tiny-model -> assemble."""
    s, work = RunSettings.of(cfg), cfg.work_dir
    call = IngestCall(sources=cfg.sources, ingest=cfg.ingest, progress=False)
    problems = run_task(
        INGEST,
        call,
        {"source_files": file_ref(ingest_inputs(call)["source_files"])},
        work / "problems.parquet",
        s,
    )
    prints = fingerprint_lines("ingest", problems)
    problems_in = ref(problems, "problems")
    found = split_inputs(
        Path(problems["outputs"]["problems"]),
        cfg.splits,
        work / "splits",
        ingest_quarantine=Path(problems["outputs"]["quarantine"]),
    )
    splits = run_task(
        SPLITS,
        SplitCall(splits=cfg.splits, progress=False),
        {
            "problems": problems_in,
            "ingest_quarantine": ref(problems, found["ingest_quarantine"]),
            "benchmarks": file_ref(found["benchmarks"]),
        },
        work / "splits",
        s,
    )
    prints += fingerprint_lines("splits", splits)
    # Before sampling (the model sources read these folders); one thread each, so as many
    # side by side as `runner.model_parallel` allows.
    fit_files = [policy_progress_file(f.dir) for f in cfg.policies]
    with watch(
        cfg.progress, "fit " + " + ".join(f.name for f in cfg.policies), fit_files, part="fit"
    ):
        fits = run_each(
            FIT_POLICY,
            cfg.policies,
            {"problems": problems_in},
            [f.dir for f in cfg.policies],
            s,
            cfg.runner.model_parallel,
        )
    for fit, fitted in zip(cfg.policies, fits, strict=True):
        prints += weights_line(f"fit {fit.name}", fitted["stats"].get("weights_sha256"))
    problem_sets = [splits["outputs"]["train"], splits["outputs"]["heldout"]]
    candidates = run_sharded(
        SAMPLE,
        cfg.sample,
        {"problems": ref(splits, problem_sets)},
        work / "candidates.parquet",
        s,
        "sample",
        "sampling candidates",
        show=cfg.sample.progress,
    )
    prints += fingerprint_lines("sample", candidates)
    judged = run_sharded(
        JUDGE,
        JudgeCall(judge=cfg.judge, sandbox=cfg.sandbox),
        {"candidates": ref(candidates, "candidates"), "problems": problems_in},
        work / "judged.parquet",
        s,
        "judge",
        "judging candidates in the sandbox",
        show=cfg.judge.progress,
    )
    prints += fingerprint_lines("judge", judged)
    judged_file = Path(judged["outputs"]["judged"])
    timing_note(judged_file, prints)
    counts_artifact(
        artifact_key(cfg.name, "judged-counts"),
        judged_counts(judged_file, Path(judged["outputs"]["quarantine"])),
        "Judged candidates per model / tier / language / verdict, and the problems the judge "
        "quarantined",
    )
    front = {"problems": problems, "splits": splits, "candidates": candidates, "judged": judged}
    # The tiny model is built before assembly: the demo measures Aletheia's token caps with
    # its tokenizer (the R1-distill one cannot be downloaded offline).
    if cfg.tiny_model is not None:
        front["tiny_model"] = run_task(
            TINY_MODEL, TinyModelCall(seed=cfg.tiny_model.seed), {}, cfg.tiny_model.dir, s
        )
        prints += weights_line("tiny-model", front["tiny_model"]["stats"].get("weights_sha256"))
    aletheia_heldout = cfg.assemble.eval_problems == "not_in_train"  # reads Train-Questions
    splits_dir = Path(splits["outputs"]["assignments"]).parent
    splits_in = ref(splits, split_tables(splits_dir, train_questions=aletheia_heldout))
    front["instances"] = run_task(
        ASSEMBLE,
        cfg.assemble,
        {"judged": ref(judged, "judged"), "problems": problems_in, "splits": splits_in},
        work / "instances",
        s,
    )
    prints += fingerprint_lines("assemble", front["instances"])
    return front | {"fingerprints": prints}


def adversarial_source(section: str, instances: dict[str, Any]) -> Path:
    """The table a bias-edit split is built from: Mixed from Train; Adv, as Aletheia's
    (`src/rq4_datagen.py` reads the listwise Heldout set's `test` split), from Heldout's
    `test` split (Heldout itself when the build has none)."""
    if section == "mixed":
        return Path(instances["train"])
    return Path(instances.get(test_table_name("heldout")) or instances["heldout"])


def adversarial(
    cfg: RunConfig, section: str, source: dict[str, Any], problems: dict[str, Any]
) -> dict[str, Any]:
    """Plan the bias edits, judge the edited programs as judge shards with the section's own
    judge settings, then build the split from the plan and the judged table."""
    s, adv_cfg, out = RunSettings.of(cfg), getattr(cfg, section), cfg.work_dir / section
    inputs = {
        "instances": file_ref(adversarial_source(section, source)),
        "problems": ref(problems, "problems"),
    }
    with watch(cfg.progress, f"{section} edits", [out / "edits" / "progress.json"]):
        edits = run_task(ADVERSARIAL_EDITS, adv_cfg, inputs, out / "edits", s)
    prints = fingerprint_lines(f"{section} edits", edits)
    get_run_logger().info(
        "%s: %d bias edits planned, %d proven unchanged (verdict carried), %d programs to re-judge",
        section,
        edits["stats"].get("edits_planned", 0),
        edits["stats"].get("edits_carried_unchanged", 0),
        edits["stats"].get("distinct_programs", 0),
    )
    judged = run_sharded(
        JUDGE,
        JudgeCall(judge=adv_cfg.judge, sandbox=cfg.sandbox),
        {"candidates": ref(edits, "edits"), "problems": inputs["problems"]},
        out / "judged-edits.parquet",
        s,
        section,
        f"{section}: re-judging the bias-edited programs in the sandbox",
        show=cfg.judge.progress,
        title=f"{section} re-judge",
        run_prefix=f"{section}-judge-shard",
    )
    prints += fingerprint_lines(f"{section} re-judge", judged)
    split = run_task(
        ADVERSARIAL,
        adv_cfg,
        {**inputs, "judged_edits": ref(judged, [judged["outputs"]["judged"]])},
        out,
        s,
    )
    counts_artifact(
        artifact_key(cfg.name, section, "rejected-edits"),
        rejected_edits(split["stats"]),
        f"{section}: bias edits per type, planned / accepted / rejected by the re-judge",
    )
    return {**split, "fingerprints_all": prints + fingerprint_lines(section, split)}


def dpo(cfg: RunConfig, name: str, instances: Path, tiny: dict[str, Any] | None) -> dict[str, Any]:
    """DPO pairs for one instance table (`name`: dpo | mixed_dpo): the verifier responses as
    shards placed like sampling, then one pairs task over every shard's responses. The tiny
    model the demo's judge loads keys the responses' task cache too (`after`)."""
    s, section, out = (
        RunSettings.of(cfg),
        cfg.dpo.model_copy(update={"name": name}),
        cfg.work_dir / name,
    )
    src = file_ref(instances)
    responses = run_sharded(
        DPO_RESPONSES,
        section,
        {"instances": src},
        out / "responses",
        s,
        name,
        f"{name}: verifier responses by shard",
        title=f"{name} responses",
        after=tiny["digest"] if tiny else "",
    )
    pairs = run_task(
        DPO_PAIRS, section, {"instances": src, "responses": gathered(responses)}, out, s
    )
    return {
        **pairs,
        "stats": {
            **pairs["stats"],
            "shards": responses["stats"]["shards"],
            "shards_ran_on": responses["stats"]["shards_ran_on"],
        },
    }


@flow(name="build-aletheia-eval", validate_parameters=False)
def build_aletheia_eval(
    config: ConfigParam = DEFAULT_CONFIG, front: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Heldout, Strong and Hard (from assembly: `full` tables, and `test` ones under
    `<name>.test`) and Adv (bias edits on Heldout's `test` split, re-judged).

    `front`: the results of `prepare` when the train flow already ran it (else it runs here).
    """
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    cfg = checked(config)  # as a subflow of the train flow: its RunConfig, checked there
    front = front or prepare(cfg)
    inst = front["instances"]["outputs"]
    adv = adversarial(cfg, "adv", inst, front["problems"])
    out = {name: inst[name] for name in EVAL_SETS}
    out |= {
        test_table_name(n): inst[test_table_name(n)]
        for n in EVAL_SETS
        if test_table_name(n) in inst
    }
    return out | {
        "adv": adv["outputs"]["adv"],
        "front": front,
        "fingerprints": adv["fingerprints_all"],
    }


@flow(name="build-aletheia-train", validate_parameters=False)
def build_aletheia_train(config: ConfigParam = DEFAULT_CONFIG) -> dict[str, Any]:
    """problems -> splits -> sample -> judge -> assemble -> mixed -> dpo -> (eval) -> publish."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    from flows.evaluate import evaluate_published
    from flows.publish import publish_aletheia

    cfg = checked(config)
    front = prepare(cfg)
    problems, inst = front["problems"], front["instances"]["outputs"]
    mixed = adversarial(cfg, "mixed", inst, problems)
    tiny = front.get("tiny_model")
    dpo_ = dpo(cfg, "dpo", Path(inst["train"]), tiny)
    prints = front["fingerprints"] + mixed["fingerprints_all"] + fingerprint_lines("dpo", dpo_)
    mixed_dpo = dpo(cfg, "mixed_dpo", Path(mixed["outputs"]["mixed"]), tiny)
    prints += fingerprint_lines("mixed_dpo", mixed_dpo)
    evals = build_aletheia_eval(cfg, front)
    prints += evals["fingerprints"]
    tables = {
        "train": inst["train"],
        # heldout_rule not_in_train: assembly's copy, less the evaluation pool
        "train_questions": inst.get("train_questions")
        or front["splits"]["outputs"]["train_questions"],
        "dpo": dpo_["outputs"]["dpo"],
        "mixed": mixed["outputs"]["mixed"],
        "mixed_dpo": mixed_dpo["outputs"]["dpo"],
        **{n: evals[n] for n in (*EVAL_SETS, "adv")},
    }
    write_manifest(cfg, front, tables, evals, prints)
    published = publish_aletheia(cfg)
    if cfg.evaluate is not None:
        published["evaluation"] = evaluate_published(cfg)
    return published


def write_manifest(
    cfg: RunConfig,
    front: dict[str, Any],
    tables: dict[str, str],
    evals: dict[str, Any],
    prints: list[dict[str, Any]],
) -> None:
    """build.json (what publish reads) and fingerprints.json, paths relative to the work dir."""
    work = cfg.work_dir.resolve()

    def rel(p: str | Path) -> str:
        return Path(p).resolve().relative_to(work).as_posix()

    seeds = {
        name: getattr(cfg, name).seed for name in ("splits", "assemble", "mixed", "adv", "dpo")
    }
    for i, source in enumerate(cfg.sample.sources):  # each candidate source has its own seed
        if getattr(source, "seed", None) is not None:
            seeds[f"sample.{i}.{source.kind}.{source.tier}"] = source.seed
    BuildManifest(
        build_id=cfg.build_id,
        pipeline_version=pipeline.__version__,
        run_config=cfg.model_dump(mode="json"),
        seeds=seeds,
        sandbox_image=_sandbox_image(Path(front["judged"]["outputs"]["judged"])),
        tables={k: rel(v) for k, v in tables.items()},
        # Adv has no test table of its own: it is published as both `test` and `full`.
        test_tables={
            n: rel(evals[test_table_name(n)]) for n in EVAL_SETS if test_table_name(n) in evals
        },
        assignments=rel(front["splits"]["outputs"]["assignments"]),
        stage_stats={k: v.get("stats", {}) for k, v in front.items() if k != "fingerprints"},
    ).write(work)
    get_run_logger().info("build manifest written: %s", work / "build.json")
    # Every stage's fingerprint in one file: the build summary shows it, and two users
    # compare theirs line by line to see where their builds parted.
    for e in prints:  # paths relative to the work dir: two machines' files compare as text
        if e.get("file") and Path(e["file"]).resolve().is_relative_to(work):
            e["file"] = rel(e["file"])
    (work / FINGERPRINTS).write_text(json.dumps(prints, indent=1) + "\n")


def _sandbox_image(judged: Path) -> str | None:
    import polars as pl

    images = pl.read_parquet(judged, columns=["sandbox_image"])["sandbox_image"]
    return ", ".join(i for i in images.unique().sort().to_list() if i) or None
