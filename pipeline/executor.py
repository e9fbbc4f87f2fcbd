"""The inline executor: one node of the build graph run here, without Prefect
(`aletheia stage NODE -c cfg`), and `prepared`, what every executor does around a stage run
(flows/task.py's Prefect task runs a stage through it too).

The executor owns what a stage does not: the shard count (`runner:` section) and the order
of the shards (here: one after another), completion (the stage's marker decides what
runs) and the process set-up a stage asks for by its flags; a stage brings its hooks
(`call_of`, `resources`) and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

from pipeline.common.graph import (
    Done,
    Graph,
    NotFinished,
    finished,
    resolve_inputs,
    unfinished_upstream,
)
from pipeline.common.runner import StageResult, run_sharded_inline
from pipeline.common.stage import Stage
from pipeline.errors import UserError


@contextmanager
def prepared(
    stage: Stage[Any], call: Any, inputs: Mapping[str, Any], *, quiet: bool
) -> Iterator[tuple[Stage[Any], Any]]:
    """Set up the process for a stage that loads local models (the CPU kernels pinned
    first where it asks: the same floats on any x86 machine), turn a section into its call
    (`Stage.call_of`) and open what the run needs (`Stage.resources`; `quiet`: progress as
    log lines, no bars), closed when the block ends. Yields the stage and call to run."""
    if stage.loads_models:
        from pipeline.common.cpu import pin_cpu_kernels, resolve_model_classes

        if stage.pins_cpu:
            pin_cpu_kernels()
        resolve_model_classes()
    if stage.call_of is not None and not isinstance(call, stage.config):
        call = stage.call_of(call, inputs)
    with ExitStack() as opened:
        if stage.resources is not None:
            stage, call = stage.resources(call, inputs, opened, quiet)
        yield stage, call


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
