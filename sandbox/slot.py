"""One runner process spoken to over its pipes: the unit every pool engine is made of.

A slot is a long-lived runner (sandbox/runner/runner.py) inside some isolation (a Docker container,
a bubblewrap sandbox): it reads one JSON request per line on stdin and answers one line on stdout.
Subclasses say how the runner is started and how it is torn down; the protocol is here.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from collections import deque


def pid_alive(pid: int) -> bool:
    """Whether the engine process `pid` (named in a slot it started) still runs: slots of a dead
    one are stale and may be removed (a pid of another user's process counts as alive)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class RunnerDied(RuntimeError):
    """The slot or its runner went away (or hung) during a request: retry on a fresh one."""


class StartFailed(RuntimeError):
    """A slot could not be started (daemon down, image missing, sandbox refused, ...)."""


class RunnerPipe:
    """A running runner process. Not thread-safe: one request at a time (the pool sees to it).

    Subclasses call `_spawn(argv, ...)` then `_handshake(timeout)` from their constructor and
    implement `_teardown()` (make sure nothing of the slot is left running)."""

    name: str = "slot"
    proc: subprocess.Popen

    def _spawn(self, argv: list[str], **popen: object) -> None:
        self._stderr: deque[str] = deque(maxlen=64)
        self._buf = bytearray()
        self.stored: set[str] = set()  # test sets sent to this runner's store (by hash)
        self.requests_served = 0
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                # a Ctrl-C to the host program must not kill the runner mid-answer
                start_new_session=True,
                **popen,  # type: ignore[arg-type]
            )
        except OSError as exc:
            raise StartFailed(f"cannot start {argv[0]}: {exc}") from exc
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _handshake(self, timeout_s: float) -> None:
        try:
            resp = self.request({"op": "ping"}, timeout_s=timeout_s)
        except RunnerDied as exc:
            self.close()
            raise StartFailed(f"sandbox {self.name} did not start: {exc}") from exc
        if not resp.get("ok"):
            self.close()
            raise StartFailed(f"runner answered ping with {resp}")

    def _read_stderr(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):  # type: ignore[union-attr]
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self) -> str:
        return " | ".join(list(self._stderr)[-8:])

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, payload: dict | bytes, timeout_s: float) -> dict:
        """Send one request (a dict, or its JSON line already encoded) and read the answer."""
        self.send(payload)
        return self.receive(timeout_s)

    def send(self, payload: dict | bytes) -> None:
        """Write one request; its answer is read by a later `receive` (answers come in order)."""
        if not self.alive:
            raise RunnerDied(f"{self.name} is gone: {self.stderr_tail()}")
        line = payload if isinstance(payload, bytes) else json.dumps(payload).encode() + b"\n"
        try:
            self.proc.stdin.write(line)  # type: ignore[union-attr]
        except (BrokenPipeError, OSError) as exc:
            raise RunnerDied(f"cannot write to {self.name}: {exc}") from exc

    def receive(self, timeout_s: float) -> dict:
        """The answer to the oldest request not yet answered."""
        answer = self._readline(time.monotonic() + timeout_s)
        try:
            return json.loads(answer)
        except json.JSONDecodeError as exc:
            self.close()
            raise RunnerDied(f"garbled answer from {self.name}: {answer[:200]!r}") from exc

    def _readline(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise RunnerDied(f"{self.name} did not answer in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.proc.wait(timeout=10)
                time.sleep(0.05)  # let the stderr reader catch the last words
                raise RunnerDied(
                    f"{self.name} exited (status {self.proc.returncode}): "
                    f"{self.stderr_tail() or 'no message'}"
                )
            self._buf += chunk

    def close(self) -> None:
        """Tear the slot down (subclass), close the pipes and reap the process."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self._teardown()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._after_exit()

    def _teardown(self) -> None:
        raise NotImplementedError

    def _after_exit(self) -> None:
        """Cleanup that needs the process gone (cgroup removal); optional."""
