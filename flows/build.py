"""The build flows: `build-aletheia-train` (all nine configs, then publish) and
`build-aletheia-eval` (Heldout, Strong, Hard, Adv), both walking the one build graph
(`pipeline.stages.GRAPH`, pipeline/common/graph.py).

This module is the Prefect executor of that graph: a node with one run is one task
(`flows.task.run_task`), a sharded node goes through the one fan-out
(`flows.fanout.run_sharded`), a node of several runs (a fit per policy) runs them side by
side (`run_each`). Here besides: the artifacts, the fingerprints and the manifest.
`build-aletheia-train` runs `build-aletheia-eval` as a subflow, with the nodes the two
share already done, so one deployment run yields every config.
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
from flows.task import Ref, RunSettings, checked, run_task
from pipeline import stages
from pipeline.common.graph import Done, Node, input_digest, resolve_inputs
from pipeline.config import RunConfig
from pipeline.instances.config import test_table_name
from pipeline.preflight import evaluation_nodes
from pipeline.publish.layout import BuildManifest

DEFAULT_CONFIG = "configs/demo.yaml"
# A path or a mapping (a deployment): resolved and checked by the flow; a RunConfig: by
# its caller (the CLI, the train flow). Prefect never validates it (validate_parameters).
ConfigParam = str | dict[str, Any] | RunConfig
EVAL_SETS = stages.EVAL_SETS
# The manifest's stage_stats keys, by node (what build.json has always called them).
MANIFEST_STATS = {
    "ingest": "problems",
    "splits": "splits",
    "sample": "candidates",
    "judge": "judged",
    "tiny-model": "tiny_model",
    "assemble": "instances",
}

# node name -> its result (a task's JSON-able result; a multi-run node: a list of them)
Results = dict[str, Any]


def _done(result: Any) -> Done:
    if isinstance(result, list):  # several runs: downstream reads none of their outputs
        return Done(outputs={})
    parts = tuple(
        p["outputs"] for p in sorted(result.get("parts", ()), key=lambda r: r["shard"][0])
    )
    return Done(
        outputs=result["outputs"], digest=result["digest"], parts=parts, stats=result["stats"]
    )


def _as_json(value: Path | list[Path]) -> str | list[str]:
    return str(value) if isinstance(value, Path) else [str(p) for p in value]


def run_node(node: Node, cfg: RunConfig, results: Results) -> Any:
    """Run one graph node on Prefect, its upstream in `results`; None when the config leaves
    it out (no tiny model)."""
    s, stage = RunSettings.of(cfg), node.stage
    calls = list(node.calls(cfg))
    if not calls:
        return None
    up = {u: _done(results[u]) for u in node.upstream if results.get(u) is not None}
    paths = resolve_inputs(node, cfg, up)
    inputs: dict[str, Ref] = {
        name: {"path": _as_json(p), "digest": input_digest(node, name, up)}
        for name, p in paths.items()
    }
    outs = [node.out(cfg, call) for call in calls]
    title = node.shown_as(cfg)
    if stage.sharding is not None:
        (call,) = calls
        return run_sharded(
            stage,
            call,
            inputs,
            outs[0],
            s,
            node.label or node.name,
            node.description,
            show=node.show(cfg),
            title=title,
            run_prefix=node.run_prefix,
        )
    files = [stage.reports(c, o) for c, o in zip(calls, outs, strict=True)] if stage.reports else []
    with watch(cfg.progress, title, files, enabled=bool(files)):
        if len(calls) > 1 or stage.call_of is not None:  # runs side by side (the fits)
            return run_each(stage, calls, inputs, outs, s, cfg.runner.model_parallel)
        return run_task(stage, calls[0], inputs, outs[0], s)


def _label(node: Node) -> str:
    """A node's fingerprint label (as the build summary has always named them)."""
    for suffix, said in (("-edits", " edits"), ("-judge", " re-judge")):
        if node.name.endswith(suffix) and node.name != "judge":
            return node.name.removesuffix(suffix) + said
    return node.name


def _report(node: Node, cfg: RunConfig, result: Any, prints: list[dict[str, Any]]) -> None:
    """What the build shows of a finished node: its fingerprints and artifacts."""
    if result is None or node.name.endswith("-responses"):
        return
    if node.stage.name == "fit-policy":
        for fit, fitted in zip(cfg.policies, result, strict=True):
            prints += weights_line(f"fit {fit.name}", fitted["stats"].get("weights_sha256"))
        return
    if node.stage.name == "tiny-model":
        prints += weights_line("tiny-model", result["stats"].get("weights_sha256"))
        return
    prints += fingerprint_lines(_label(node), result)
    if node.name == "judge":
        judged = Path(result["outputs"]["judged"])
        timing_note(judged, prints)
        counts_artifact(
            artifact_key(cfg.name, "judged-counts"),
            judged_counts(judged, Path(result["outputs"]["quarantine"])),
            "Judged candidates per model / tier / language / verdict, and the problems the "
            "judge quarantined",
        )
    elif node.stage.name == "adversarial-edits":
        get_run_logger().info(
            "%s: %d bias edits planned, %d proven unchanged (verdict carried), %d programs to "
            "re-judge",
            node.name.removesuffix("-edits"),
            result["stats"].get("edits_planned", 0),
            result["stats"].get("edits_carried_unchanged", 0),
            result["stats"].get("distinct_programs", 0),
        )
    elif node.stage.name == "adversarial":
        counts_artifact(
            artifact_key(cfg.name, node.name, "rejected-edits"),
            rejected_edits(result["stats"]),
            f"{node.name}: bias edits per type, planned / accepted / rejected by the re-judge",
        )


def run_nodes(nodes: list[Node], cfg: RunConfig, results: Results, prints: list[Any]) -> None:
    for node in nodes:
        if node.name not in results:
            results[node.name] = run_node(node, cfg, results)
            _report(node, cfg, results[node.name], prints)


@flow(name="build-aletheia-eval", validate_parameters=False)
def build_aletheia_eval(
    config: ConfigParam = DEFAULT_CONFIG, front: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Heldout, Strong and Hard (from assembly: `full` tables, and `test` ones under
    `<name>.test`) and Adv (bias edits on Heldout's `test` split, re-judged): the graph's
    evaluation nodes.

    `front`: `{"results": ..., "fingerprints": ...}` of the nodes the train flow already
    ran (they are not run again)."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    # As a subflow of the train flow: its RunConfig, checked there; else its own nodes.
    cfg = checked(config, only=evaluation_nodes())
    results: Results = dict((front or {}).get("results", {}))
    prints: list[Any] = []
    run_nodes(stages.GRAPH.evaluation(), cfg, results, prints)
    inst = results["assemble"]["outputs"]
    out = {name: inst[name] for name in EVAL_SETS}
    out |= {
        test_table_name(n): inst[test_table_name(n)]
        for n in EVAL_SETS
        if test_table_name(n) in inst
    }
    return out | {
        "adv": results["adv"]["outputs"]["adv"],
        "results": results,
        "fingerprints": prints,
    }


@flow(name="build-aletheia-train", validate_parameters=False)
def build_aletheia_train(config: ConfigParam = DEFAULT_CONFIG) -> dict[str, Any]:
    """The graph in order: the nodes shared with the eval build, then the train-only ones
    (mixed, dpo, mixed-dpo), the eval build as a subflow (adv), the manifest, publish, and
    (the run config's `evaluate:`) the evaluation of its verifier on the published folder."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    from flows.publish import publish_aletheia

    cfg = checked(config)
    # The nodes after publish (the evaluation) run once it has; the rest before it.
    later = {n.name for n in stages.GRAPH if "publish" in n.upstream}
    nodes = [n for n in stages.GRAPH if n.name != "publish" and n.name not in later]
    first_train = next(i for i, n in enumerate(nodes) if not n.evaluation)
    front, rest = nodes[:first_train], [n for n in nodes[first_train:] if not n.evaluation]
    results: Results = {}
    prints: list[Any] = []
    run_nodes(front, cfg, results, prints)
    run_nodes(rest, cfg, results, prints)
    evals = build_aletheia_eval(cfg, {"results": results})
    results, prints = evals["results"], prints + evals["fingerprints"]
    inst = results["assemble"]["outputs"]
    tables = {
        "train": inst["train"],
        # heldout_rule not_in_train: assembly's copy, less the evaluation pool
        "train_questions": inst.get("train_questions")
        or results["splits"]["outputs"]["train_questions"],
        "dpo": results["dpo"]["outputs"]["dpo"],
        "mixed": results["mixed"]["outputs"]["mixed"],
        "mixed_dpo": results["mixed-dpo"]["outputs"]["dpo"],
        **{n: evals[n] for n in (*EVAL_SETS, "adv")},
    }
    write_manifest(cfg, results, tables, evals, prints)
    published = publish_aletheia(cfg)
    if cfg.evaluate is not None:  # the graph's `evaluate` node
        published["evaluation"] = evaluate_published(cfg, results)
    return published


def write_manifest(
    cfg: RunConfig,
    results: Results,
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
        sandbox_image=_sandbox_image(Path(results["judge"]["outputs"]["judged"])),
        tables={k: rel(v) for k, v in tables.items()},
        # Adv has no test table of its own: it is published as both `test` and `full`.
        test_tables={
            n: rel(evals[test_table_name(n)]) for n in EVAL_SETS if test_table_name(n) in evals
        },
        assignments=rel(results["splits"]["outputs"]["assignments"]),
        stage_stats={
            key: results[node].get("stats", {})
            for node, key in MANIFEST_STATS.items()
            if results.get(node) is not None
        },
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


def evaluate_published(cfg: RunConfig, results: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the `evaluate` node (the config has an `evaluate:` section) after publish; its
    result (outputs `report`, `markdown`). A rerun with the same model, published splits and
    knobs is a Cached task run: nothing ran. `results`: the build's node results so far."""
    assert cfg.evaluate is not None and cfg.eval_dir is not None
    evaluated = run_node(stages.GRAPH["evaluate"], cfg, dict(results or {}))
    get_run_logger().info("evaluation report: %s", Path(evaluated["outputs"]["markdown"]).resolve())
    return evaluated
