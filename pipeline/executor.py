"""The inline executor: one node of the build graph run here, without Prefect
(`aletheia stage NODE -c cfg`); run on every node in the graph's order, it makes the same
build as the Prefect flows (flows/build.py), published folder included.

The executor owns what a stage does not: the shard count (`runner:` section) and the order
of the shards (here: one after another) and completion (the stage's marker decides what
runs); around each run it does what every executor does (`pipeline.common.prepared`: the
process set-up, the call, what the run opens).
"""

from __future__ import annotations

from typing import Any

from pipeline.common.graph import (
    Done,
    Graph,
    NotFinished,
    finished,
    resolve_inputs,
    unfinished_upstream,
)
from pipeline.common.prepared import prepared
from pipeline.common.runner import StageResult, run_sharded_inline
from pipeline.errors import UserError


def upstream_of(graph: Graph, name: str, cfg: Any) -> dict[str, Done]:
    """The finished upstream nodes of `name`, read from disk; a UserError names the first
    that has not finished."""
    up: dict[str, Done] = {}
    for u in graph[name].upstream:
        try:
            up[u] = finished(graph[u], cfg)
        except NotFinished:
            first = unfinished_upstream(graph, name, cfg)[0]
            raise UserError(
                f"node {name} reads {u}, which has not finished: run `aletheia stage {first}` "
                "(the first unfinished node upstream) or the build first"
            ) from None
    return up


def run_node(graph: Graph, name: str, cfg: Any, *, force: bool = False) -> list[StageResult]:
    """Run node `name` here, its shards one after another (as many as the runner section
    asks), every upstream already finished. One result per call (none: the config leaves
    the node out)."""
    node = graph[name]
    calls = list(node.calls(cfg))
    if not calls:  # the config leaves it out (no `tiny_model:`, no `evaluate:`)
        return []
    inputs = resolve_inputs(node, cfg, upstream_of(graph, name, cfg))
    results = []
    for call in calls:
        where = node.out(cfg, call)
        with prepared(node.stage, call, inputs, quiet=False) as (stage, bound):
            n = stage.sharding.count(cfg.runner) if stage.sharding is not None else 1
            results.append(run_sharded_inline(stage, bound, inputs, where, n, force=force))
    return results
