"""Task runners for the shard fan-out subflows: threads on one machine, or a Ray cluster."""

from __future__ import annotations

from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

from pipeline.config import RunnerSection


def make_task_runner(runner: RunnerSection) -> Any:
    if runner.kind == "thread":
        return ThreadPoolTaskRunner(max_workers=runner.max_parallel_shards)
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
