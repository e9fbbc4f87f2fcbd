"""Task runners for the shard fan-out subflows (threads on one machine, or a Ray cluster),
where a shard may run (Ray resources), and how many run at once."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline.common.config import RunnerSection, ShardPlacement


def make_task_runner(runner: RunnerSection, parallel: int | None = None) -> Any:
    """`parallel`: shards in flight at once (None: `runner.max_parallel_shards`)."""
    if runner.kind == "thread":
        return ThreadPoolTaskRunner(max_workers=parallel or runner.max_parallel_shards)
    try:
        from prefect_ray import RayTaskRunner
    except ImportError as e:  # the `ray` extra is not installed
        raise RuntimeError(
            "runner.kind: ray needs prefect-ray and ray: pip install -e '.[ray]'"
        ) from e
    # address None: prefect-ray starts a local Ray cluster; "auto" joins the one on this host;
    # "ray://head:10001" joins a remote cluster (see docs/scale.md).
    init_kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    if runner.ray_address is None:
        init_kwargs["num_cpus"] = runner.max_parallel_shards
    return RayTaskRunner(address=runner.ray_address, init_kwargs=init_kwargs)


def placement(runner: RunnerSection, where: ShardPlacement) -> contextlib.AbstractContextManager:
    """The Ray remote options for tasks submitted inside this context (none on threads)."""
    opts = where.ray_options()
    if runner.kind != "ray" or not opts:
        return contextlib.nullcontext()
    from prefect_ray.context import remote_options

    return remote_options(**opts)


def bounded(submits: Iterable[Callable[[], PrefectFuture]], limit: int) -> Iterator[PrefectFuture]:
    """Call the submit functions keeping at most `limit` futures in flight; yield each future
    once it is done, in completion order. Ray schedules whatever it is given at once, so the
    window is what makes `runner.max_parallel_shards` hold on a cluster."""
    todo = iter(submits)
    running: list[PrefectFuture] = [s() for _, s in zip(range(limit), todo, strict=False)]
    while running:
        done = next(iter(as_completed(running)))
        running.remove(done)
        nxt = next(todo, None)
        if nxt is not None:
            running.append(nxt())
        yield done
