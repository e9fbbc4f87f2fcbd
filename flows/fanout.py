"""The one shard fan-out: any sharded stage, as a subflow.

`fan_out` plans the shards (`plan_shards`: the sharded inputs split by problem_id), shows
their progress, submits at most the placement's share at once under the runner's Ray
placement (`bounded`), and merges the parts in SHARD-INDEX order (`merge_parts`), never in
the order they finished: the merged bytes do not depend on which shard was fastest. A shard
that fails fails the subflow; the finished ones keep their markers (and cached task
results), so the next run redoes only the failed one.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from prefect import flow
from pydantic import BaseModel

from flows.artifacts import Progress, artifact_key
from flows.progress import progress_file, watch
from flows.runners import bounded, make_task_runner, placement
from flows.task import Ref, RunSettings, file_ref, jsonable, result, run_task, task_for
from pipeline.common.runner import ShardCall, StageResult, merge_parts, plan_shards
from pipeline.common.stage import Stage


def _on_models(stage: Stage[Any]) -> bool:
    """Shards placed like sampling load models: `runner.model_parallel` at once."""
    assert stage.sharding is not None
    return stage.sharding.placement == "sample"


def _note(made: dict[str, Any]) -> str:
    """A finished shard in the progress artifact: the rows of each table it made."""
    rows = [f"{fp['rows']} {name}" for name, fp in (made.get("fingerprints") or {}).items()]
    return ", ".join(rows) or "done"


def _part(r: dict[str, Any]) -> StageResult:
    return StageResult(
        stage=r["stage"],
        outputs=r["outputs"],
        digest=r["digest"],
        stats=r["stats"],
        cached=r["cached"],
        shard=(r["shard"][0], r["shard"][1]),
    )


@flow(name="shards", validate_parameters=False)
def fan_out(
    stage_name: str,
    config: BaseModel,
    inputs: dict[str, Ref],
    out: Path,
    s: RunSettings,
    name: str,
    *,
    show: bool = True,
) -> dict[str, Any]:
    """Run `stage` as `stage.sharding.count(runner)` shards and merge them into `out`.

    `name` (the graph node's) names the progress artifact (`<run>-<name>-progress`), the
    terminal lines and the shards' task runs (`<name>-shard-1`); `show`: terminal lines.
    Returns the merged result, with where each shard ran (`stats.shards_ran_on`) and, for a
    gathered stage, its `parts`."""
    from pipeline.stages import stage_named

    stage = stage_named(stage_name)
    sharding = stage.sharding
    assert sharding is not None, f"stage {stage.name} is not sharded"
    paths = {name: Path(r["path"]) if isinstance(r["path"], str) else [Path(p) for p in r["path"]]
             for name, r in inputs.items()}  # fmt: skip
    calls = plan_shards(stage, config, paths, out, sharding.count(s.runner))
    n = len(calls)
    progress = Progress(artifact_key(s.name, name, "progress"), n, f"{name}: {n} shard(s)")
    where = s.runner.sample_placement if _on_models(stage) else s.runner.judge_placement
    parallel = s.runner.model_parallel if _on_models(stage) else s.runner.max_parallel_shards
    section = config.model_dump(mode="json")
    first, *others = sharding.inputs

    def submit(c: ShardCall[Any]) -> Any:
        shard_inputs = {**inputs, first: file_ref(c.inputs[first])}  # type: ignore[arg-type]
        shard_inputs.update({name: file_ref([]) for name in others})
        t = task_for(stage, s, f"{name}-shard-{c.shard[0]}")
        with placement(s.runner, where):
            return t.submit(stage.name, section, shard_inputs, str(c.out), c.shard)

    done: list[dict[str, Any]] = []
    with watch(s.progress, name, [progress_file(c.out) for c in calls], progress, show):
        for fut in bounded([partial(submit, c) for c in calls], parallel):
            done.append(fut.result())
            progress.advance(note=_note(done[-1]))
    done.sort(key=lambda r: r["shard"][0])  # shard-index order, whatever finished first
    merged = merge_parts(stage, config, out, [_part(r) for r in done])
    stats = {**merged.stats, "shards_ran_on": [r.get("ran_on") for r in done]}
    if sharding.merge is None:  # gathered: the parts go downstream as they are
        return jsonable(
            {
                "stage": stage.name,
                "outputs": {},
                "digest": merged.digest,
                "stats": stats,
                "parts": done,
            }
        )
    return result(stage.name, {k: Path(v) for k, v in merged.outputs.items()}, stats)


def run_sharded(
    stage: Stage[Any],
    config: BaseModel,
    inputs: dict[str, Ref],
    out: Path,
    s: RunSettings,
    name: str,
    *,
    show: bool = True,
) -> dict[str, Any]:
    """`fan_out` as a subflow named `<name>-shards`, on the runner its placement asks for."""
    parallel = s.runner.model_parallel if _on_models(stage) else None
    sub = fan_out.with_options(
        name=f"{name}-shards", task_runner=make_task_runner(s.runner, parallel)
    )
    return sub(stage.name, config, inputs, Path(out), s, name, show=show)


def run_each(
    stage: Stage[Any],
    configs: Sequence[BaseModel],
    inputs: dict[str, Ref],
    outs: Sequence[Path],
    s: RunSettings,
    parallel: int,
) -> list[dict[str, Any]]:
    """Several runs of one unsharded stage side by side (the policy fits), at most
    `parallel` at once: their results in the order given, whatever order they finished in."""
    futures: list[Any] = []

    def submit(config: BaseModel, out: Path) -> Any:
        futures.append(run_task(stage, config, inputs, out, s, submit=True))
        return futures[-1]

    for _ in bounded([partial(submit, c, o) for c, o in zip(configs, outs, strict=True)], parallel):
        pass
    return [f.result() for f in futures]
