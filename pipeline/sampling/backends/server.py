"""Start, health-check and stop a local OpenAI-compatible server process.

Used for `vllm serve` (in vLLM's own environment) and, in tests, `transformers serve`
(in `.venv-serve`). The server runs in a new session so it and its children are
stopped together; its output goes to a log file whose tail is shown on failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

import httpx


class ServerStartError(RuntimeError):
    """The server exited or did not become healthy in time; the message has its log tail."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class ManagedServer:
    def __init__(
        self,
        command: list[str],
        *,
        port: int,
        host: str = "127.0.0.1",
        env: dict[str, str] | None = None,
        health_path: str = "/v1/models",
        startup_timeout_s: float = 600.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.command = command
        self.host, self.port = host, port
        self.env = {**os.environ, **(env or {})}
        self.health_path = health_path
        self.startup_timeout_s = startup_timeout_s
        self.log_path = (
            Path(log_path)
            if log_path
            else Path(tempfile.mkstemp(prefix="server-", suffix=".log")[1])
        )
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def start(self) -> Self:
        with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"http://{self.host}:{self.port}{self.health_path}"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerStartError(
                    f"server exited with code {self.proc.returncode}: {' '.join(self.command)}\n"
                    f"{self.log_tail()}"
                )
            try:
                if httpx.get(url, timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise ServerStartError(
            f"server not healthy after {self.startup_timeout_s}s at {url}\n{self.log_tail()}"
        )

    def stop(self, grace_s: float = 20.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(
                self.proc.pid, signal.SIGTERM
            )  # the session we created: the server and its children
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=grace_s)
        except ProcessLookupError:
            pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def transformers_serve_command(
    model: str | Path,
    *,
    python: str | Path,
    port: int,
    host: str = "127.0.0.1",
    device: str = "cpu",
) -> list[str]:
    """`transformers serve` preloading `model` (from an environment with transformers[serving])."""
    return [
        str(python),
        "-m",
        "transformers.cli.transformers",
        "serve",
        str(model),
        "--host",
        host,
        "--port",
        str(port),
        "--device",
        device,
    ]


def vllm_serve_command(
    model: str | Path,
    *,
    python: str | Path,
    port: int,
    host: str = "127.0.0.1",
    tensor_parallel_size: int = 1,
    served_name: str | None = None,
    extra_args: list[str] | None = None,
) -> list[str]:
    """`vllm serve` in vLLM's own environment. UNTESTED HERE: vLLM cannot be installed on our
    CI or GPU test machines; the process management around it is tested with transformers serve."""
    cmd = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--host",
        host,
        "--port",
        str(port),
        "--tensor-parallel-size",
        str(tensor_parallel_size),
    ]
    if served_name:
        cmd += ["--served-model-name", served_name]
    return cmd + list(extra_args or [])
