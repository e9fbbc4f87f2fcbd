"""Python executor: no build step beyond a syntax check, run with the image's python3."""

from __future__ import annotations

import os
import resource
import select
import signal
import time
import traceback

LANG = "python"
FLAGS = ["python3"]
SOURCE_NAME = "solution.py"
SELFTEST = ("import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n", "2 3\n", "5")
WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fn_wrapper.py")


def build(source: str, build_dir: str, run_limited, limits) -> tuple[bool, str]:
    """Syntax-check in a forked child under limits (a hostile source cannot hurt the runner)."""
    with open(
        os.path.join(build_dir, SOURCE_NAME), "w", encoding="utf-8", errors="surrogatepass"
    ) as f:
        f.write(source)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            mem = 512 * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CPU, (10, 11))
            compile(source, SOURCE_NAME, "exec", dont_inherit=True)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - report any failure to compile as CE
            try:
                os.write(w, traceback.format_exc(limit=0).encode("utf-8", "replace")[-4000:])
            finally:
                os._exit(1)
    os.close(w)
    msg = bytearray()
    deadline = time.monotonic() + 15
    try:
        while time.monotonic() < deadline:
            # poll, not select: the runner's descriptors can go beyond 1024 (its test store)
            poller = select.poll()
            poller.register(r, select.POLLIN)
            ready = poller.poll(max(0.0, deadline - time.monotonic()) * 1000)
            if not ready:
                break
            chunk = os.read(r, 65536)
            if not chunk:
                break
            msg += chunk
    finally:
        os.close(r)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return True, ""
    text = (
        msg.decode("utf-8", "replace")
        or f"syntax check failed (exit {code}; compile time or memory limit)"
    )
    return False, text


def command(build_dir: str, memory_mb: int, mode: str, test_path: str | None) -> list[str]:
    src = os.path.join(build_dir, SOURCE_NAME)
    if mode == "function":
        return ["python3", WRAPPER, src, test_path]
    return ["python3", src]


def address_space_mb(memory_mb: int) -> int | None:
    return memory_mb


def is_memory_error(stderr_tail: bytes) -> bool:
    return b"MemoryError" in stderr_tail
