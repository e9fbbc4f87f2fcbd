"""The build flows: `build-aletheia-train` (every node of the build graph: the nine configs,
the manifest, publish, push with `hub.push`, the evaluation with `evaluate:`) and
`build-aletheia-eval` (its evaluation nodes: Heldout, Strong, Hard, Adv), each a plain walk of
`pipeline.stages.GRAPH` (pipeline/common/graph.py).

This module is the Prefect executor of that graph, as pipeline/executor.py is the inline one:
a node with one run is one task (`flows.task.run_task`), a sharded node goes through the one
fan-out (`flows.fanout.run_sharded`), a node of several runs (a fit per policy) runs them side
by side (`run_each`); what a finished node shows is its stage's (`flows.artifacts.Showing`).
It knows no node and no stage by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prefect import flow

from flows.artifacts import Showing
from flows.fanout import run_each, run_sharded
from flows.progress import watch
from flows.quiet import quiet_libraries
from flows.task import Ref, RunSettings, checked, run_task
from pipeline import stages
from pipeline.common.graph import Done, Node, NotFinished, finished, input_digest, resolve_inputs
from pipeline.config import RunConfig
from pipeline.errors import UserError
from pipeline.preflight import evaluation_nodes

DEFAULT_CONFIG = "configs/demo.yaml"
# A path or a mapping (a deployment): resolved and checked by the flow; a RunConfig: by
# its caller (the CLI, before Prefect starts). Prefect never validates it (validate_parameters).
ConfigParam = str | dict[str, Any] | RunConfig

# node name -> its result (a task's JSON-able result; a multi-run node: a list of them;
# None: the config leaves it out)
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


def _upstream(node: Node, cfg: RunConfig, results: Results) -> dict[str, Done]:
    """The node's upstream as it reads them: from this walk, or finished by an earlier run
    (a publish of an existing build reads the manifest from disk)."""
    up: dict[str, Done] = {}
    for u in node.upstream:
        if u in results:
            if results[u] is not None:
                up[u] = _done(results[u])
            continue
        try:
            up[u] = finished(stages.GRAPH[u], cfg)
        except NotFinished:
            raise UserError(
                f"node {node.name} reads {u}, which has not finished: build it first"
            ) from None
    return up


def _as_json(value: Path | list[Path]) -> str | list[str]:
    return str(value) if isinstance(value, Path) else [str(p) for p in value]


def run_node(node: Node, cfg: RunConfig, results: Results, shown: Showing) -> Any:
    """Run one graph node on Prefect, its upstream in `results` (or finished on disk); its
    result, None when the config leaves it out (no tiny model)."""
    s, stage = RunSettings.of(cfg), node.stage
    calls = list(node.calls(cfg))
    if not calls:
        return None
    up = _upstream(node, cfg, results)
    paths = resolve_inputs(node, cfg, up)
    inputs: dict[str, Ref] = {
        name: {"path": _as_json(p), "digest": input_digest(node, name, up)}
        for name, p in paths.items()
    }
    outs = [node.out(cfg, call) for call in calls]
    if stage.sharding is not None:
        (call,) = calls
        show = getattr(call, "progress", True)  # a section's own `progress: false`
        result = run_sharded(stage, call, inputs, outs[0], s, node.name, show=show)
    else:
        reports = stage.reports
        files = [reports(c, o) for c, o in zip(calls, outs, strict=True)] if reports else []
        with watch(cfg.progress, node.name, files, enabled=bool(files)):
            if len(calls) > 1 or stage.call_of is not None:  # runs side by side (the fits)
                result = run_each(stage, calls, inputs, outs, s, cfg.runner.model_parallel)
            else:
                result = run_task(stage, calls[0], inputs, outs[0], s)
    shown.add(node, cfg, calls, result, paths)
    return result


def walk(
    nodes: Iterable[Node], cfg: RunConfig, results: Results | None = None
) -> tuple[Results, Showing]:
    """Run `nodes` in order (those already in `results` are not run again)."""
    results, shown = dict(results or {}), Showing()
    for node in nodes:
        if node.name not in results:
            results[node.name] = run_node(node, cfg, results, shown)
    return results, shown


@flow(name="build-aletheia-eval", validate_parameters=False)
def build_aletheia_eval(config: ConfigParam = DEFAULT_CONFIG) -> Results:
    """Heldout, Strong and Hard (from assembly: `full` tables, and `test` ones under
    `<name>.test`) and Adv (bias edits on Heldout's `test` split, re-judged): the graph's
    evaluation nodes. Its result: each node's."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    cfg = checked(config, only=evaluation_nodes())
    results, shown = walk(stages.GRAPH.evaluation(), cfg)
    shown.finish(cfg, record=False)
    return results


@flow(name="build-aletheia-train", validate_parameters=False)
def build_aletheia_train(config: ConfigParam = DEFAULT_CONFIG) -> Results:
    """Every node of the graph, in its order: the nine configs, the manifest, publish, the
    push (`hub.push`) and the evaluation of the run config's verifier (`evaluate:`) on the
    published folder. Its result: each node's; its fingerprints in `<work>/fingerprints.json`."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    cfg = checked(config)
    results, shown = walk(stages.GRAPH, cfg)
    shown.finish(cfg, record=True)
    return results


@flow(name="publish-aletheia", validate_parameters=False)
def publish_aletheia(config: ConfigParam = DEFAULT_CONFIG) -> Results:
    """Publish the run config's finished build (the manifest its `manifest` node wrote): the
    graph's release nodes (`pipeline.stages.RELEASE`: re-check, the Hub folder, and with
    `hub.push` one atomic Hub commit). Its result: each node's."""
    quiet_libraries()  # flows/quiet.py: no bars, no library chatter
    cfg = checked(config, only=stages.RELEASE)  # the Hub checks only
    results, shown = walk([stages.GRAPH[n] for n in stages.RELEASE], cfg)
    shown.finish(cfg, record=False)
    return results
