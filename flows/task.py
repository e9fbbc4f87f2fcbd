"""One Prefect task for every stage, with the retry policy every stage task shares.

`stage_task` runs `pipeline.stages.STAGES[name]` (one shard of it, when asked) through the
same `pipeline.common.prepared.prepared` as the inline executor and every stage's own entry,
then the stage runner (`pipeline.common.runner.run_stage`); `task_for` names it per stage (`ingest`,
`sample-shard`, ...) and applies the run's retries. Every call takes plain JSON-able inputs
(its own config section as a dict, named inputs as `Ref`s) and returns a small JSON-able
result: the output paths, a content digest of the outputs and the stage's stats.

One cache decides: the stage's marker. Stage tasks keep no Prefect result cache; a task
whose marker matched (nothing ran) finishes in a Completed state named `Cached`, so the UI
and the logs say what the marker decided. The evaluation after publish is a stage too
(EVALUATE, a graph node), and so is policy evaluation (POLICY_EVAL, flows/rlvr.py).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import Task
from pydantic import BaseModel, ConfigDict

from flows.progress import reporting
from pipeline import preflight
from pipeline.common.config import RetrySection, RunnerSection
from pipeline.common.fingerprint import fingerprints
from pipeline.common.hashing import sha256_files
from pipeline.common.stage import LeftUnfinished, Stage
from pipeline.config import ProgressSection, RunConfig, resolve_run_config
from pipeline.stages import RELEASE
from sandbox.engines import EngineUnavailable

log = logging.getLogger(__name__)


def jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str))


def result(
    stage: str,
    outputs: dict[str, Path],
    stats: dict[str, Any],
    *,
    shard: tuple[int, int] = (0, 1),
    cached: bool = False,
) -> dict[str, Any]:
    files = [p for p in outputs.values() if Path(p).exists()]
    return jsonable(
        {
            "stage": stage,
            "shard": list(shard),
            "cached": cached,
            "outputs": {k: str(v) for k, v in outputs.items()},
            "digest": sha256_files(files)[:16],
            # rows + content hash of each Parquet output: where two builds part (printed
            # by the flow)
            "fingerprints": fingerprints(outputs),
            "stats": stats,
            "ran_on": _ran_on(),  # where a shard ran
        }
    )


def _ran_on() -> dict[str, Any]:
    where: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid()}
    ray = sys.modules.get("ray")  # only when this process is a Ray worker (or driver)
    if ray is not None and ray.is_initialized():
        where["ray_node"] = ray.get_runtime_context().get_node_id()
    return where


# Failures worth retrying: the machine or a service hiccuped. A bad input or config
# (ValueError, TypeError, KeyError, schema errors) fails at once: retrying cannot fix it.
_TRANSIENT_NAMES = (
    "SandboxError",
    "APIError",
    "DockerException",
    "HTTPError",
    "HfHubHTTPError",
    "RemoteProtocolError",
    "ReadTimeout",
    "ConnectTimeout",
    "RayTaskError",
)


# OSErrors that mean the machine or the paths are set up wrong, not that something
# hiccuped: a retry cannot fix them and a retry loop on a full disk only hides the cause.
_PERMANENT_ERRNOS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a path component is not a directory",
    errno.EISDIR: "is a directory",
    errno.EEXIST: "file exists",
    errno.ENAMETOOLONG: "file name too long",
    errno.EFBIG: "file too large",
}
_PERMANENT_OSERRORS = (
    PermissionError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
)


def permanent_os_error(exc: BaseException) -> str | None:
    """Why `exc` is an OSError no retry can fix (a short phrase), or None."""
    if not isinstance(exc, OSError):
        return None
    if exc.errno in _PERMANENT_ERRNOS:
        return _PERMANENT_ERRNOS[exc.errno]
    if isinstance(exc, _PERMANENT_OSERRORS):  # raised by hand, without an errno
        return type(exc).__name__
    return None


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, EngineUnavailable):  # no engine, no isolation, no server, a refused token
        return False
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):  # an HTTP answer: only server-side trouble and rate limits
        return status >= 500 or status == 429
    if isinstance(exc, OSError):  # includes ConnectionError and TimeoutError
        return permanent_os_error(exc) is None
    return bool({c.__name__ for c in type(exc).__mro__} & set(_TRANSIENT_NAMES))


def retry_transient(task: Task, task_run: Any, state: Any) -> bool:
    """Prefect retry condition: retry only transient failures (see is_transient)."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the task's own exception, whatever it is
        transient = is_transient(exc)
        if not transient:
            why = permanent_os_error(exc)
            if isinstance(exc, EngineUnavailable):  # a dead or refusing judge engine: one line
                log.error("%s failed: %s; not retried: the judge engine cannot run", task.name, exc)
            elif why:
                log.error(
                    "%s failed: %s (%s); not retried: fix the machine or path and run again",
                    task.name,
                    why,
                    exc,
                )
            else:
                log.info(
                    "%s failed with %s: not transient, not retried", task.name, type(exc).__name__
                )
        return transient
    return False


# --- what a stage task receives -------------------------------------------------------------


class RunSettings(BaseModel):
    """The only run-wide thing a fan-out or a stage task receives: never the whole config."""

    model_config = ConfigDict(frozen=True)

    name: str
    out_dir: Path
    runner: RunnerSection
    retry: RetrySection
    progress: ProgressSection

    @classmethod
    def of(cls, cfg: RunConfig) -> RunSettings:
        return cls(
            name=cfg.name,
            out_dir=cfg.out_dir,
            runner=cfg.runner,
            retry=cfg.retry,
            progress=cfg.progress,
        )

    @classmethod
    def alone(
        cls, name: str, out_dir: Path, retries: int = 0, backoff_s: float = 30
    ) -> RunSettings:
        """For a stage run outside a build (a study's or a command's evaluation): the
        default runner and progress, `retries` retries of transient failures."""
        retry = RetrySection(retries=retries, backoff_s=[backoff_s])
        return cls(
            name=name,
            out_dir=out_dir,
            runner=RunnerSection(),
            retry=retry,
            progress=ProgressSection(),
        )

    @property
    def work_dir(self) -> Path:
        return self.out_dir / "work"


# One named stage input: {"path": a path or a list of them, "digest": their content's hash}.
Ref = dict[str, Any]


def file_ref(path: str | Path | Sequence[str | Path]) -> Ref:
    """An input given as files, hashed here: the task's cache key follows their content."""
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    given: str | list[str] = str(path) if isinstance(path, (str, Path)) else [str(p) for p in paths]
    return {"path": given, "digest": sha256_files(paths)[:16]}


def _paths(value: str | list[str]) -> Path | list[Path]:
    return Path(value) if isinstance(value, str) else [Path(p) for p in value]


def task_name(stage: Stage[Any]) -> str:
    """A stage's task name in the UI: `ingest`, or `sample-shard` for a sharded stage."""
    return f"{stage.name}-shard" if stage.sharding is not None else stage.name


@task(name="stage", tags=["cpu"])
def stage_task(
    stage: str,
    config: dict[str, Any],
    inputs: dict[str, Ref],
    out: str,
    shard: tuple[int, int] = (0, 1),
) -> Any:
    """Run STAGES[stage] (shard `shard` of it) into `out` through the stage runner. When its
    marker matched and nothing ran, the task finishes in state `Cached`."""
    from prefect.states import Completed

    from pipeline.common.prepared import prepared
    from pipeline.common.runner import run_stage
    from pipeline.stages import stage_named

    value = stage_named(stage)
    paths = {name: _paths(r["path"]) for name, r in inputs.items()}
    given = config if value.call_of is not None else value.config.model_validate(config)
    where = Path(out)
    with ExitStack() as opened:
        bound, call = opened.enter_context(prepared(value, given, paths, quiet=True))
        if value.reports is not None:
            opened.enter_context(reporting(value.reports(call, where)))
        try:
            done = run_stage(bound, call, paths, where, shard=tuple(shard))  # type: ignore[arg-type]
            stats, cached = done.stats, done.cached
        except LeftUnfinished as e:  # outputs written, work left: unmarked, a rerun retries
            log.warning("%s", e)
            stats, cached = e.stats, False
    made = result(stage, bound.outputs(call, where), stats, shard=tuple(shard), cached=cached)  # type: ignore[arg-type]
    if cached:
        return Completed(
            data=made, name="Cached", message="the stage's marker matched: nothing ran"
        )
    return made


def _retry_options(retry: Any) -> dict[str, Any]:
    """The run's `retry:` section as Prefect task options (transient failures only)."""
    return {
        "retries": retry.retries,
        "retry_delay_seconds": retry.backoff_s,
        "retry_jitter_factor": retry.jitter_factor,
        "retry_condition_fn": retry_transient,
        "timeout_seconds": retry.timeout_s,
    }


def stage_options(t: Task, s: RunSettings) -> Task:
    """A stage task with the run's retries and timeout, and no Prefect cache: the stage's
    marker decides what runs (a rerun of a finished stage is a Cached task run)."""
    return t.with_options(
        **_retry_options(s.retry),
        cache_policy=NO_CACHE,
        persist_result=False,
    )


def task_for(stage: Stage[Any], s: RunSettings, run_name: str | None = None) -> Task:
    """`stage_task` named for `stage`, with the run's retries (`stage_options`)."""
    names: dict[str, Any] = {"task_run_name": run_name} if run_name else {}
    t = stage_task.with_options(name=task_name(stage), tags=list(stage.tags), **names)
    return stage_options(t, s)


def run_task(
    stage: Stage[Any],
    config: BaseModel,
    inputs: dict[str, Ref],
    out: Path,
    s: RunSettings,
    *,
    submit: bool = False,
) -> Any:
    """One unsharded stage as one task: its result (or, `submit`, its future)."""
    t = task_for(stage, s)
    args = (stage.name, config.model_dump(mode="json"), inputs, str(out), (0, 1))
    if submit:
        return t.submit(*args)
    return t(*args, return_state=True).result()  # a Cached state's data, like a future's


def checked(config: str | dict[str, Any] | RunConfig, only: tuple[str, ...] = ()) -> RunConfig:
    """The run config a flow works from, resolved once and checked once.

    A RunConfig was resolved and preflighted by its caller (the CLI, before Prefect
    started; the train flow, for its eval and publish subflows) and is used as it is. A path
    or a mapping (a deployment run) is resolved here and every stage's check runs, or only
    `only` these nodes' (the eval build's; a publish of an existing build: the Hub); the
    plan goes to the log."""
    if isinstance(config, RunConfig):
        return config
    cfg = resolve_run_config(config)
    # Fail in seconds, not after hours of sampling: sources, models, Hub, Docker, vLLM envs.
    report = preflight.preflight(cfg, only=only)
    report.raise_if_fatal()
    if only != RELEASE:
        logger = get_run_logger()
        for line in report.lines():
            logger.info(line)
    return cfg
