"""The one way into a stage: `prepared` (what every executor does around a stage run) and
`run_prepared` (that, then the stage runner).

The inline executor (pipeline/executor.py, `aletheia stage NODE`), the Prefect stage task
(flows/task.py) and every stage's own entry (`judge_candidates`, `run_policy_eval`, the
evaluation of a verifier) run a stage through here, so a stage is set up the same way
whoever starts it: the process set-up its `models` flag asks for, its section turned into
its call (`Stage.call_of`), and what the run needs opened (`Stage.resources`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pipeline.common.runner import Inputs, StageResult, run_stage
from pipeline.common.stage import Stage


def _set_up_models(stage: Stage[Any]) -> None:
    """A stage that loads local models: the CPU kernels pinned first where it asks (the
    same floats on any x86 machine), transformers' classes resolved under a lock."""
    if stage.models is None:
        return
    from pipeline.common.cpu import pin_cpu_kernels, resolve_model_classes

    if stage.models == "pinned":
        pin_cpu_kernels()
    resolve_model_classes()


@contextmanager
def prepared(
    stage: Stage[Any], call: Any, inputs: Mapping[str, Any], *, quiet: bool
) -> Iterator[tuple[Stage[Any], Any]]:
    """Set up the process for `stage` (`Stage.models`), turn a section into its call
    (`Stage.call_of`) and open what the run needs (`Stage.resources`; `quiet`: progress as
    log lines, no bars), closed when the block ends. Yields the stage and call to run."""
    _set_up_models(stage)
    if stage.call_of is not None and not isinstance(call, stage.config):
        call = stage.call_of(call, inputs)
    with ExitStack() as opened:
        if stage.resources is not None:
            stage, call = stage.resources(call, inputs, opened, quiet)
        yield stage, call


def run_prepared(
    stage: Stage[Any],
    call: Any,
    inputs: Inputs,
    out: Path,
    *,
    quiet: bool = False,
    force: bool = False,
    shard: tuple[int, int] = (0, 1),
) -> StageResult:
    """`stage` run once (one shard of it, when asked) into `out` through `prepared` and the
    runner: its marker decides whether anything runs."""
    with prepared(stage, call, inputs, quiet=quiet) as (bound, given):
        return run_stage(bound, given, inputs, Path(out), shard=shard, force=force)
