"""`python -m sandbox serve` as the HTTP suites run it: a real server process on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
from engines_here import child_pythonpath

REPO = Path(__file__).resolve().parents[2]
TOKEN = f"test-{uuid.uuid4().hex}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `python -m sandbox serve` process on 127.0.0.1."""

    def __init__(
        self,
        *args: str,
        pool_size: int = 1,
        port: int | None = None,
        engine: str = "process",
        cache: bool = False,
    ):
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(f"/tmp/aletheia-serve-{self.port}.log")
        self._log = open(self.log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sandbox", "serve", "--engine", engine, "--host",
             "127.0.0.1", "--port", str(self.port), "--pool-size", str(pool_size),
             *(() if cache else ("--no-cache",)), *args],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": child_pythonpath(REPO), "ALETHEIA_SANDBOX_TOKEN": TOKEN},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not come up: {self.log.read_text()[-2000:]}")

    def health(self) -> dict:
        return httpx.get(self.url + "/v1/health", timeout=5).json()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log.unlink(missing_ok=True)
