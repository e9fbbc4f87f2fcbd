"""One long-lived sandbox container running the persistent runner, spoken to over stdin/stdout.

The container is a `docker run -i` child process: its runner reads one JSON request per line and
answers one line. No `docker exec` per candidate (that alone costs ~90 ms).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import uuid
from dataclasses import dataclass

from sandbox.slot import RunnerDied, RunnerPipe, StartFailed, pid_alive

__all__ = [  # RunnerDied and StartFailed live in sandbox.slot; importable from here as before
    "LABEL",
    "OWNER_LABEL",
    "ContainerSpec",
    "RunnerDied",
    "SandboxContainer",
    "StartFailed",
    "cgroup_parent_for",
    "docker_run_argv",
    "owner_id",
    "remove_stale_containers",
]

LABEL = "aletheia.sandbox"
OWNER_LABEL = "aletheia.sandbox.owner"


@dataclass(frozen=True)
class ContainerSpec:
    image: str
    memory_mb: int = 2048  # per container: the largest per-test limit + tmpfs + compiler headroom
    cpus: float | None = 1.0  # CFS quota: one core's worth per container
    pids: int = 192  # > the runner's per-test RLIMIT_NPROC, so the runner can always fork
    work_tmpfs_mb: int = 384
    tmp_tmpfs_mb: int = 64


def cgroup_parent_for(slot: int, driver: str) -> str | None:
    """Put each pool container's cgroup at the top level ("/"), beside the host's processes.

    Under the default parent (/docker) ALL containers of the host share the CPU weight of a single
    host process: on a loaded machine a sandboxed `python3 -c pass` then takes 5x longer than the
    same program on the host. At the top level each container weighs what one host process weighs,
    like the bare worker process it replaces. Only for the cgroupfs driver (systemd wants slices);
    ALETHEIA_SANDBOX_CGROUP_PARENT=default keeps Docker's default.
    """
    if os.environ.get("ALETHEIA_SANDBOX_CGROUP_PARENT", "") == "default":
        return None
    return "/" if driver == "cgroupfs" else None


def owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def docker_run_argv(
    spec: ContainerSpec,
    name: str,
    uid: int,
    cpuset: str | None = None,
    cgroup_parent: str | None = None,
) -> list[str]:
    return [
        "docker",
        "run",
        "-i",
        "--rm",
        "--pull",
        "never",
        "--name",
        name,
        "--label",
        f"{LABEL}=1",
        "--label",
        f"{OWNER_LABEL}={owner_id()}",
        "--network",
        "none",
        "--read-only",
        "--user",
        f"{uid}:{uid}",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--memory",
        f"{spec.memory_mb}m",
        "--memory-swap",
        f"{spec.memory_mb}m",
        "--pids-limit",
        str(spec.pids),
        *(["--cpus", str(spec.cpus)] if spec.cpus else []),
        *(["--cpuset-cpus", cpuset] if cpuset else []),
        *(["--cgroup-parent", cgroup_parent] if cgroup_parent else []),
        "--ipc",
        "none",
        "--ulimit",
        "core=0",
        "--log-driver",
        "none",
        "--tmpfs",
        f"/work:rw,exec,nosuid,nodev,size={spec.work_tmpfs_mb}m,mode=0700,uid={uid},gid={uid}",
        "--tmpfs",
        f"/tmp:rw,exec,nosuid,nodev,size={spec.tmp_tmpfs_mb}m,mode=1777",
        spec.image,
    ]


class SandboxContainer(RunnerPipe):
    """A running container + its runner (see RunnerPipe for the request protocol)."""

    def __init__(
        self,
        spec: ContainerSpec,
        start_timeout_s: float = 60.0,
        cpuset: str | None = None,
        cgroup_parent: str | None = None,
    ):
        self.spec = spec
        self.name = f"aletheia-sbx-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        # A uid of its own per container: RLIMIT_NPROC counts per uid across the whole host.
        self.uid = random.randint(100_000, 900_000)
        self._spawn(docker_run_argv(spec, self.name, self.uid, cpuset, cgroup_parent))
        self._handshake(start_timeout_s)

    def _teardown(self) -> None:
        """Remove the container (SIGKILL from outside always works)."""
        try:
            subprocess.run(
                ["docker", "rm", "-f", self.name],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            pass


def remove_stale_containers() -> int:
    """Remove pool containers whose owning process (on this host) is gone. Returns how many."""
    try:
        out = subprocess.run(
            [
                "docker",
                "ps",
                "-a",
                "--filter",
                f"label={LABEL}=1",
                "--format",
                '{{.ID}} {{.Label "' + OWNER_LABEL + '"}}',
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    host = socket.gethostname()
    stale = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 2 or ":" not in parts[1]:
            continue
        owner_host, pid = parts[1].rsplit(":", 1)
        if owner_host == host and pid.isdigit() and not pid_alive(int(pid)):
            stale.append(parts[0])
    if stale:
        subprocess.run(["docker", "rm", "-f", *stale], capture_output=True, timeout=60, check=False)
    return len(stale)
