"""The build as one graph of stage runs, and the inline executor that runs one node of it.

A `Node` names a `Stage`, the calls a run config gives it (one per run: a policy fit per
policy), where each call's primary output goes, and how each named input binds to upstream
nodes' outputs or to files (`Bind`). pipeline/stages.py declares the build's `GRAPH`;
preflight and `--dry-run` check and plan it, the Prefect flows (flows/build.py) and
`aletheia stage NODE` (pipeline/executor.py, inline) run it. An executor (pipeline/executor.py inline,
or the Prefect one in flows/) owns the rest: shard count and placement, fan-out, retries,
progress and completion; a stage brings only its hooks (`Stage.resources`, `summary`, ...).

Nothing here knows Prefect or a particular stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.common.hashing import sha256_text
from pipeline.common.runner import shard_folder
from pipeline.common.stage import Stage

Paths = str | Path | Sequence[str | Path]


@dataclass(frozen=True)
class Done:
    """A finished node run as its downstream sees it: output name -> path, and for a
    gathered stage its parts' outputs in shard-index order."""

    outputs: Mapping[str, str]
    digest: str = ""
    parts: tuple[Mapping[str, str], ...] = ()
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> str:
        return self.outputs[name]

    def gathered(self) -> list[str]:
        """Every part's outputs, shards in order, each part's outputs in their own order."""
        return [p for part in self.parts for p in part.values()]


# (run config, upstream node name -> its Done) -> the path(s) the input reads
Resolve = Callable[[Any, Mapping[str, Done]], Paths]


@dataclass(frozen=True)
class Bind:
    """One named input: the upstream nodes it reads (none: files the config names) and the
    path(s) it resolves to once they are done."""

    upstream: tuple[str, ...]
    paths: Resolve


def out(node: str, name: str) -> Bind:
    """Output `name` of node `node`."""
    return Bind((node,), lambda cfg, up: up[node][name])


def outs(node: str, names: Sequence[str]) -> Bind:
    """Several outputs of one node, as a list in the order given."""
    return Bind((node,), lambda cfg, up: [up[node][n] for n in names])


def gathered(node: str) -> Bind:
    """Every part output of a gathered (sharded, unmerged) node, in shard-index order."""
    return Bind((node,), lambda cfg, up: up[node].gathered())


def files(paths: Callable[[Any], Paths]) -> Bind:
    """Files the run config names (hashed into the stage key like any input)."""
    return Bind((), lambda cfg, up: paths(cfg))


@dataclass(frozen=True)
class Node:
    """One stage in the build: its calls, inputs, outputs and place in the order.

    `calls(cfg)`: one per run (empty: the config leaves the stage out); each is what
    preflight checks with the stage's `check` and plans, and what runs: the stage's call,
    or, for a stage with `call_of`, the section it becomes at run time. `out(cfg, call)`:
    the primary output, under the work dir. `after`: nodes that must finish first though no
    input reads them (the policy fits before sampling, whose model sources read their
    folders). `evaluation`: part of build-aletheia-eval (the eval nodes are a subset of the
    train build's). An executor names everything it shows of the node (progress lines,
    artifacts, shard task runs, fingerprints) by `name`."""

    name: str
    stage: Stage[Any]
    calls: Callable[[Any], Sequence[Any]]
    out: Callable[[Any, Any], Path]
    inputs: Mapping[str, Bind] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    evaluation: bool = False

    @property
    def upstream(self) -> tuple[str, ...]:
        ups = [u for b in self.inputs.values() for u in b.upstream] + list(self.after)
        return tuple(dict.fromkeys(ups))


class Graph:
    """Nodes in a valid run order (every upstream before its downstream)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes: dict[str, Node] = {}
        for n in nodes:
            if n.name in self.nodes:
                raise ValueError(f"graph: node {n.name!r} declared twice")
            unknown = [u for u in n.upstream if u not in self.nodes]
            if unknown:
                raise ValueError(
                    f"graph: node {n.name!r} reads {unknown}, declared after it or not at all"
                )
            missing = set(n.stage.inputs) - set(n.inputs)
            if missing:
                raise ValueError(f"graph: node {n.name!r} binds no input {sorted(missing)}")
            self.nodes[n.name] = n

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def __getitem__(self, name: str) -> Node:
        if name not in self.nodes:
            from pipeline.errors import UserError, did_you_mean

            raise UserError(f"no node {name!r} in the build graph{did_you_mean(name, self.nodes)}; "
                            f"nodes: {', '.join(self.nodes)}")  # fmt: skip
        return self.nodes[name]

    def with_node(self, node: Node) -> Graph:
        """This graph and one more node (a test's toy stage)."""
        return Graph([*self, node])

    def evaluation(self) -> list[Node]:
        return [n for n in self if n.evaluation]

    def downstream(self, name: str) -> list[Node]:
        """`name` and every node that reads it, directly or not, in build order."""
        reached = {name}
        for n in self:
            if reached & set(n.upstream):
                reached.add(n.name)
        return [n for n in self if n.name in reached]


def resolve_inputs(node: Node, cfg: Any, up: Mapping[str, Done]) -> dict[str, Path | list[Path]]:
    """Each named input of `node` as the path(s) the stage reads."""
    resolved: dict[str, Path | list[Path]] = {}
    for name, bind in node.inputs.items():
        p = bind.paths(cfg, up)
        resolved[name] = Path(p) if isinstance(p, (str, Path)) else [Path(x) for x in p]
    return resolved


def input_digest(node: Node, name: str, up: Mapping[str, Done]) -> str:
    """What an input's content depends on, from its upstream results ('' for files)."""
    return sha256_text(*(up[u].digest for u in node.inputs[name].upstream))[:16]


def shard_count(node: Node, runner: Any) -> int:
    assert node.stage.sharding is not None
    return node.stage.sharding.count(runner)


# ---------------------------------------------------------------------- finished nodes
class NotFinished(Exception):
    """An upstream node has not finished: run it (or the build) first."""


def _marked(stage: Stage[Any], where: Path) -> bool:
    from pipeline.common.runner import marker_dir

    return (marker_dir(where, stage.marker_beside) / stage.marker).exists()


def finished(node: Node, cfg: Any) -> Done:
    """The outputs of a node an earlier run finished, read from disk; NotFinished if not.
    A node of several runs (a fit per policy) is finished when every run is; its Done then
    names the last run's outputs."""
    stage, done = node.stage, Done(outputs={})
    for call in node.calls(cfg):
        where = node.out(cfg, call)
        sharding = stage.sharding
        if not isinstance(call, stage.config):  # a section its call is made from (a fit)
            ok = _marked(stage, where)
        elif sharding is not None and sharding.merge is None:  # gathered: every part
            n = sharding.count(cfg.runner)
            folder = shard_folder(stage, where)
            parts = [folder / sharding.part(i, n) for i in range(n)]
            ok = all(_marked(stage, p) for p in parts)
            done = Done(outputs={}, parts=tuple(_named(stage.outputs(call, p)) for p in parts))
        else:
            outputs = stage.outputs(call, where)
            required = [p for k, p in outputs.items() if k not in stage.optional_outputs]
            # merged outputs of a sharded stage carry no marker of their own
            ok = all(p.exists() for p in required) and (
                sharding is not None or _marked(stage, where)
            )
            done = Done(outputs=_named(outputs))
        if not ok:
            raise NotFinished(node.name)
    return done


def is_finished(node: Node, cfg: Any) -> bool:
    try:
        finished(node, cfg)
    except NotFinished:
        return False
    return True


def unfinished_upstream(graph: Graph, name: str, cfg: Any) -> list[str]:
    """The nodes that must still run before `name` can, in build order: each upstream that has
    not finished, and theirs (a finished node's own upstream do not matter). The first of
    them has every input it needs: it is the one to run next."""
    todo, need = list(graph[name].upstream), set()
    while todo:
        u = todo.pop()
        if u not in need and not is_finished(graph[u], cfg):
            need.add(u)
            todo += graph[u].upstream
    return [n.name for n in graph if n.name in need]


def _named(outputs: Mapping[str, Path]) -> dict[str, str]:
    return {k: str(v) for k, v in outputs.items()}
