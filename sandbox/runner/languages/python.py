"""Python: no build step beyond a syntax check; run with the image's python3."""

from __future__ import annotations

import os
import resource
import select
import signal
import time
import traceback

from . import Language, SelfTest, write_source

# The function-mode harness (runner/fn_wrapper.py): the candidate, then the test code.
WRAPPER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fn_wrapper.py")
CHECK_MEMORY = 512 * 1024 * 1024
CHECK_CPU_S = 10
CHECK_WALL_S = 15


class Python(Language):
    name = "python"
    source_name = "solution.py"
    run = ("python3", "{dir}/{source}")
    run_function = ("python3", WRAPPER, "{dir}/{source}", "{test}")
    memory_errors = (b"MemoryError",)
    tools = ("python3",)
    version = ("python3", "--version")
    version_pattern = r"Python (\S+)"
    selftest = SelfTest(
        "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n", "2 3\n", "5"
    )

    def build(self, source, build_dir, run_limited, limits, extra_flags=()) -> tuple[bool, str]:
        """Syntax-check in a forked child under limits (a hostile source cannot hurt the runner)."""
        if extra_flags:
            return False, "python takes no compile flags"
        write_source(os.path.join(build_dir, self.source_name), source)
        return _syntax_check(source, self.source_name)


def _syntax_check(source: str, filename: str) -> tuple[bool, str]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            resource.setrlimit(resource.RLIMIT_AS, (CHECK_MEMORY, CHECK_MEMORY))
            resource.setrlimit(resource.RLIMIT_CPU, (CHECK_CPU_S, CHECK_CPU_S + 1))
            compile(source, filename, "exec", dont_inherit=True)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - report any failure to compile as CE
            try:
                os.write(w, traceback.format_exc(limit=0).encode("utf-8", "replace")[-4000:])
            finally:
                os._exit(1)
    os.close(w)
    msg = _read_until(r, time.monotonic() + CHECK_WALL_S)
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


def _read_until(fd: int, deadline: float) -> bytearray:
    msg = bytearray()
    try:
        while time.monotonic() < deadline:
            # poll, not select: the runner's descriptors can go beyond 1024 (its test store)
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            msg += chunk
    finally:
        os.close(fd)
    return msg


LANGUAGE = Python()
