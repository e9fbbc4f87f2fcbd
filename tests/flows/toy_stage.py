"""A toy stage, in one file: the number of train problems, as a JSON file. Plus the one line
that adds it to the build graph (`with_toy`). tests/flows/test_toy_stage.py shows preflight,
the dry run, the Prefect executor of the build flows and `aletheia stage` all pick it up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel

from pipeline.common.graph import Graph, Node, out
from pipeline.common.stage import CheckContext, Finding, ShardContext, Stage, Stats


class ToyCall(BaseModel):
    label: str = "train problems"


def _run(ctx: ShardContext[ToyCall]) -> Stats:
    n = pq.ParquetFile(ctx.inputs["problems"]).metadata.num_rows
    ctx.out.mkdir(parents=True, exist_ok=True)
    (ctx.out / "count.json").write_text(json.dumps({ctx.config.label: n}))
    return {"problems": n}


def _check(call: ToyCall, ctx: CheckContext) -> list[Finding]:
    return [Finding("config", f"toy stage checked ({call.label})", fatal=False)]


TOY = Stage(
    name="toy-count",
    version="1",
    config=ToyCall,
    inputs=("problems",),
    outputs=lambda call, where: {"count": where / "count.json"},
    run=_run,
    check=_check,
    plan=lambda call, runner: f"count the {call.label}",
)


def with_toy(graph: Graph) -> Graph:
    """The one line in the graph."""
    return graph.with_node(Node("toy-count", TOY, lambda c: [ToyCall()], lambda c, _: c.work_dir / "toy", {"problems": out("splits", "train")}))  # fmt: skip


def count(work: Path) -> Any:
    return json.loads((work / "toy" / "count.json").read_text())
