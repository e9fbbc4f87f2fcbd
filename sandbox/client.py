"""SandboxClient: the Docker engine, a pool of long-lived sandbox containers (`sandbox.pool`).

    with SandboxClient(pool_size=2) as client:
        results = client.judge(requests, progress=True)      # same order as the input
        for index, result in client.judge_iter(requests):    # as they finish
            ...

Each slot of the pool is one `docker run -i` container running the runner; everything else
(queue, retries on a fresh container, test store, verdict cache) is `sandbox.pool.RunnerPool`.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.container import (
    ContainerSpec,
    SandboxContainer,
    cgroup_parent_for,
    remove_stale_containers,
)
from sandbox.dockerd import docker_problem
from sandbox.engines import EngineUnavailable
from sandbox.image import docker_client, ensure_image
from sandbox.models import MAX_MEMORY_LIMIT_MB
from sandbox.pool import (
    CHECKER_BUDGET_S,
    COMPILE_BUDGET_S,
    STORE_BUDGET_S,
    Progress,
    RunnerPool,
    SandboxError,
)

__all__ = [
    "CHECKER_BUDGET_S",
    "COMPILE_BUDGET_S",
    "STORE_BUDGET_S",
    "Progress",
    "SandboxClient",
    "SandboxError",
]


class SandboxClient(RunnerPool):
    """A pool of sandbox containers and the verdict cache in front of it.

    pool_size: containers (= concurrent candidates); None -> os.cpu_count().
    image: an image tag or id; None -> the current definition's tag, built if missing.
    cache / cache_path: the host verdict cache (SQLite); default <cache dir>/verdicts.sqlite.
    max_attempts: how often a candidate is tried on a fresh container after a sandbox failure.
    """

    engine_name = "docker"

    def __init__(
        self,
        pool_size: int | None = None,
        image: str | None = None,
        *,
        cache: bool = True,
        cache_path: str | Path | None = None,
        max_attempts: int = 3,
        restart_timeout_s: float = 180.0,
        selftest: bool = True,
        container_memory_mb: int = MAX_MEMORY_LIMIT_MB + 1024,
        inline_tests_max_bytes: int = 64 << 10,
    ):
        super().__init__(
            pool_size,
            cache=cache,
            cache_path=cache_path,
            max_attempts=max_attempts,
            restart_timeout_s=restart_timeout_s,
            inline_tests_max_bytes=inline_tests_max_bytes,
        )
        why = docker_problem()
        if why:  # before the image: building it would fail on the same thing, at length
            raise EngineUnavailable(why)
        tag = image or ensure_image()
        try:
            engine = docker_client()
            self._image_id = engine.images.get(tag).id
            self._cgroup_driver = engine.info().get("CgroupDriver", "")
        except Exception as exc:  # docker-py raises several kinds here
            raise SandboxError(f"sandbox image {tag!r} is not available: {exc}") from exc
        # Verdict cache keys carry the image id (as they always have: the shared cache stays valid).
        self._key_id = self._image_id
        self.spec = ContainerSpec(image=self._image_id, memory_mb=container_memory_mb)
        remove_stale_containers()
        self._start_pool(selftest)

    @property
    def containers(self) -> list[str]:
        """Names of the pool's current containers (for operators and recovery tests)."""
        return self.slots

    @property
    def image(self) -> str:
        """The image id (sha256:...) every verdict of this client comes from."""
        return self._image_id

    @property
    def stamp(self) -> str:
        """The engine and what fixes its verdicts (see sandbox.engines)."""
        return f"docker:{self._image_id}"

    def _start_slot(self, slot: int = -1) -> SandboxContainer:
        return SandboxContainer(
            self.spec, cgroup_parent=cgroup_parent_for(slot, self._cgroup_driver)
        )
