"""One long-lived sandbox container running the persistent runner, spoken to over stdin/stdout.

The container is a `docker run -i` child process: its runner reads one JSON request per line and
answers one line. No `docker exec` per candidate (that alone costs ~90 ms).
"""

from __future__ import annotations

import json
import os
import random
import select
import socket
import subprocess
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass

LABEL = "aletheia.sandbox"
OWNER_LABEL = "aletheia.sandbox.owner"


class RunnerDied(RuntimeError):
    """The container or its runner went away (or hung) during a request: retry on a fresh one."""


class StartFailed(RuntimeError):
    """A container could not be started (daemon down, image missing, ...)."""


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


class SandboxContainer:
    """A running container + its runner. Not thread-safe: one request at a time (the pool sees to it)."""

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
        self._stderr = deque(maxlen=64)
        self._buf = bytearray()
        self.stored: set[str] = set()  # test sets sent to this container's store (by hash)
        try:
            self.proc = subprocess.Popen(
                docker_run_argv(spec, self.name, self.uid, cpuset, cgroup_parent),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,  # a Ctrl-C to the host program must not kill the docker CLI mid-answer
            )
        except OSError as exc:
            raise StartFailed(f"cannot run the docker CLI: {exc}") from exc
        threading.Thread(target=self._read_stderr, daemon=True).start()
        try:
            resp = self.request({"op": "ping"}, timeout_s=start_timeout_s)
        except RunnerDied as exc:
            self.close()
            raise StartFailed(f"sandbox container did not start: {exc}") from exc
        if not resp.get("ok"):
            self.close()
            raise StartFailed(f"runner answered ping with {resp}")
        self.requests_served = 0

    def _read_stderr(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self) -> str:
        return " | ".join(list(self._stderr)[-8:])

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, payload: dict | bytes, timeout_s: float) -> dict:
        """Send one request (a dict, or its JSON line already encoded) and read the answer."""
        if not self.alive:
            raise RunnerDied(f"container {self.name} is gone: {self.stderr_tail()}")
        line = payload if isinstance(payload, bytes) else json.dumps(payload).encode() + b"\n"
        try:
            self.proc.stdin.write(line)
        except (BrokenPipeError, OSError) as exc:
            raise RunnerDied(f"cannot write to container {self.name}: {exc}") from exc
        line = self._readline(time.monotonic() + timeout_s)
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            self.close()
            raise RunnerDied(f"garbled answer from {self.name}: {line[:200]!r}") from exc

    def _readline(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise RunnerDied(f"container {self.name} did not answer in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.proc.wait(timeout=10)
                time.sleep(0.05)  # let the stderr reader catch the CLI's last words
                raise RunnerDied(
                    f"container {self.name} exited (docker run status {self.proc.returncode}): "
                    f"{self.stderr_tail() or 'no message'}"
                )
            self._buf += chunk

    def close(self) -> None:
        """Remove the container (SIGKILL from outside always works) and reap the CLI process."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
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
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


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
        if owner_host == host and pid.isdigit() and not _pid_alive(int(pid)):
            stale.append(parts[0])
    if stale:
        subprocess.run(["docker", "rm", "-f", *stale], capture_output=True, timeout=60, check=False)
    return len(stale)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
