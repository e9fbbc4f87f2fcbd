"""Run-level config sections every layer may name: the section base, how stage shards run
(`RunnerSection`, `ShardPlacement`) and how stage tasks retry (`RetrySection`).

They live below the stages (pipeline/common) so a stage's `Sharding.count` and `Stage.plan`
can take the runner section without importing the run config that composes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


def left_out_at_defaults(data: Any, defaults: Mapping[str, Any]) -> Any:
    """A config's dump (a wrap serializer's) without each key of `defaults` that holds its
    value there: a field added after configs were written is left out while at its default,
    so their dumps (stage keys, build ids, the card's run config) stay what they were."""
    if isinstance(data, dict):
        for key, value in defaults.items():
            if data.get(key) == value:
                data.pop(key, None)
    return data


class Section(BaseModel):
    """A config section: unknown keys are an error (a typo never passes silently)."""

    model_config = ConfigDict(extra="forbid")


class ShardPlacement(Section):
    """What one shard asks Ray for (ignored by the thread runner). A shard runs only on a node
    that has every listed resource free, so labelling nodes (`ray start --resources
    '{"gpu_node": 1}'`) and asking for the label routes the shard there."""

    num_cpus: float | None = Field(
        None, ge=0, description="CPUs one shard asks Ray for; None = Ray's default (1)."
    )
    num_gpus: float | None = Field(
        None, ge=0, description="GPUs one shard asks Ray for; None = none."
    )
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Custom node resources one shard asks for (node labels, e.g. gpu_node: 1).",
    )

    def ray_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"resources": dict(self.resources)} if self.resources else {}
        if self.num_cpus is not None:
            opts["num_cpus"] = self.num_cpus
        if self.num_gpus is not None:
            opts["num_gpus"] = self.num_gpus
        return opts


class RunnerSection(Section):
    """How stage shards are executed. Shards are by problem, so any one can be redone alone."""

    kind: Literal["thread", "ray"] = Field(
        "thread", description="Where shards run: threads of this process, or a Ray cluster."
    )
    ray_address: str | None = Field(
        None,
        description="The Ray cluster (`auto`, `ray://host:10001`); None = start a local one.",
    )
    sample_shards: int = Field(1, ge=1, description="Sampling shards (by problem).")
    judge_shards: int = Field(1, ge=1, description="Judging shards (by problem).")
    dpo_shards: int | None = Field(
        None,
        ge=1,
        description="DPO verifier-response shards (by problem), placed like sampling "
        "(`sample_placement`: they load models too); None = as many as `sample_shards`.",
    )
    max_parallel_shards: int = Field(
        2,
        ge=1,
        description="Shards in flight at once per fan-out, on threads and on Ray alike (the "
        "flow submits the next shard only when one has finished).",
    )
    model_parallel_shards: int | None = Field(
        None,
        ge=1,
        description="Shards of the model stages (policy fits, sampling, DPO responses) in "
        "flight at once; None = max_parallel_shards. On a small CPU box: judge shards one at "
        "a time (each runs `sandbox.pool_size` containers), one-thread model shards side by "
        "side.",
    )
    sample_placement: ShardPlacement = Field(
        default_factory=ShardPlacement,
        description="Where sampling shards may run on a Ray cluster (e.g. GPU nodes for "
        "vLLM); empty = anywhere.",
    )
    judge_placement: ShardPlacement = Field(
        default_factory=ShardPlacement,
        description="Where judging shards may run on a Ray cluster (nodes with Docker and "
        "the sandbox image); empty = anywhere.",
    )

    @model_validator(mode="after")
    def _dpo_like_sampling(self) -> RunnerSection:
        if self.dpo_shards is None:
            self.dpo_shards = self.sample_shards
        return self

    @property
    def model_parallel(self) -> int:
        return self.model_parallel_shards or self.max_parallel_shards


class RetrySection(Section):
    """Retries with backoff for transient failures (sandbox SE storms, HTTP 5xx), and timeouts."""

    retries: int = Field(2, ge=0, description="Retries of a failed stage task.")
    backoff_s: list[float] = Field(
        default_factory=lambda: [5.0, 30.0, 120.0],
        description="Seconds to wait before each retry (the last repeats).",
    )
    jitter_factor: float = Field(
        0.5, ge=0, description="Random spread of each wait, as a fraction of it."
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Time limit per stage task; None = none. Prefect enforces it only between "
        "blocking calls of a task in a thread, so hangs are bounded first by the stages' own "
        "limits (sandbox wall time per test, the generation backends' HTTP timeouts).",
    )
