"""Run one process under limits and collect what it did (stdlib only: runs in the image).

The runner is PID 1 of its container, so every process a candidate leaves behind is
re-parented to it; `sweep()` kills them all with one kill(-1) and reaps them.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field

STDERR_TAIL_BYTES = 2048


@dataclass
class Limits:
    cpu_s: float  # CPU time (user + sys) the process may use
    wall_s: float  # wall-clock deadline; a sleeping / stopped process is killed at it
    address_space_mb: int | None  # RLIMIT_AS; None for the JVM (it reserves far more than it uses)
    output_bytes: int  # stdout (and separately stderr) beyond this -> killed, OLE
    file_bytes: int  # RLIMIT_FSIZE
    nproc: int  # RLIMIT_NPROC (threads count too)
    stack_mb: int | None = None  # RLIMIT_STACK; None = same as address space or 256 MB
    # Stop the process once its CPU clock passes cpu_s (a test: over its time limit it is TLE
    # however far over, so running on to the RLIMIT_CPU backstop, a second later, buys nothing).
    stop_at_cpu_s: bool = False


@dataclass
class Outcome:
    exit_code: int | None  # exit status, or -signal when killed by a signal
    cpu_s: float
    wall_s: float
    max_rss_kb: int
    stdout: bytes
    stderr_tail: bytes
    timed_out: bool = False  # wall deadline hit
    output_exceeded: bool = False  # stdout or stderr over the limit
    cpu_exceeded: bool = False  # stopped by us: its CPU clock passed cpu_s (stop_at_cpu_s)
    killed_by_us: bool = False
    extra: dict = field(default_factory=dict)


# Built into the image from limit_exec.c: sets the limits below, then execs the program.
LIMIT_EXEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "limit-exec")


def _cpu_rlimit(limits: Limits) -> int:
    return max(1, int(limits.cpu_s + 0.999)) + 1


def _stack_bytes(limits: Limits) -> int:
    return (limits.stack_mb or min(limits.address_space_mb or 256, 1024)) * 1024 * 1024


def _limited_argv(argv: list[str], limits: Limits) -> list[str]:
    """argv behind limit-exec: the limits are set in the child after a vfork, with no Python
    run between fork and exec (a preexec_fn costs a full fork and ~5 ms of CPU per test)."""
    cpu = _cpu_rlimit(limits)
    space = limits.address_space_mb * 1024 * 1024 if limits.address_space_mb else 0
    nums = (cpu, cpu + 1, space, _stack_bytes(limits), limits.file_bytes, limits.nproc)
    return [LIMIT_EXEC, *map(str, nums), "--", *argv]


def _preexec(limits: Limits):
    """The same limits from Python, between fork and exec: only where limit-exec was not built
    (the runner's modules imported outside the image)."""

    cpu = _cpu_rlimit(limits)

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if limits.address_space_mb:
            b = limits.address_space_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        stack = _stack_bytes(limits)
        resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass

    return apply


class _Capture:
    """What a process wrote: stdout up to the cap (when kept), the tail of stderr, and whether
    either stream went over the output limit."""

    def __init__(self, limit: int, keep_stdout: bool):
        self.limit, self.keep_stdout = limit, keep_stdout
        self.out = bytearray()
        self.err = bytearray()
        self.err_total = 0
        self.exceeded = False

    def add(self, stream: str, chunk: bytes) -> None:
        if stream == "out":
            if self.keep_stdout:
                self.out += chunk
            if len(self.out) > self.limit:
                self.exceeded = True
            return
        self.err_total += len(chunk)
        self.err += chunk
        if len(self.err) > 4 * STDERR_TAIL_BYTES:
            del self.err[: len(self.err) - STDERR_TAIL_BYTES]
        if self.err_total > self.limit:
            self.exceeded = True

    def drain(self, streams: dict[int, str]) -> None:
        """After the main process exited: take what is already buffered, but do not wait for
        orphans that still hold the pipes open (at most 4 MiB: a pipe buffer plus what races in)."""
        for fd, name in list(streams.items()):
            for _ in range(64):
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                if name == "out":
                    if self.keep_stdout:
                        self.out += chunk
                else:
                    self.err += chunk
                    del self.err[: max(0, len(self.err) - STDERR_TAIL_BYTES)]


def _spawn(argv, cwd, env, limits, stdin_path, merge_stderr, pass_fds) -> subprocess.Popen:
    """Start argv in its own session under `limits`, stdin from a file (or /dev/null)."""
    stdin = open(stdin_path or os.devnull, "rb")  # noqa: SIM115 - closed right after the spawn
    helper = os.path.exists(LIMIT_EXEC)
    try:
        return subprocess.Popen(
            _limited_argv(argv, limits) if helper else argv,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            cwd=cwd,
            env=env,
            preexec_fn=None if helper else _preexec(limits),  # noqa: PLW1509 - single-threaded
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
    finally:
        stdin.close()


def _process_cpu_s(pid: int) -> float | None:
    """The process's CPU clock (all its threads; the scheduler's exact runtime, the figure its
    rusage will report), or None once it is gone. A process CPU clock id is (~pid << 3) | 2."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:
        return None


def _watch(
    proc: subprocess.Popen,
    pidfd: int,
    capture: _Capture,
    deadline: float,
    cpu_limit_s: float | None = None,
) -> tuple[bool, bool, bool]:
    """Read the pipes until the main process exits, the wall deadline passes, output goes over
    its cap or (with `cpu_limit_s`) its CPU clock passes the limit. Returns (exited, timed_out,
    cpu_exceeded)."""
    streams = {proc.stdout.fileno(): "out"}
    if proc.stderr is not None:
        streams[proc.stderr.fileno()] = "err"
    for fd in streams:
        os.set_blocking(fd, False)
    # poll, not select: the runner holds a descriptor per stored test, so ours can exceed 1024.
    poller = select.poll()
    for fd in [*streams, pidfd]:
        poller.register(fd, select.POLLIN)
    exited = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return exited, True, False
        if not streams and exited:
            return exited, False, False
        wait = remaining
        if cpu_limit_s is not None and not exited:
            used = _process_cpu_s(proc.pid)
            if used is not None and used > cpu_limit_s:
                return exited, False, True
            # Look again when the clock could first pass the limit, halving the gap each time
            # (threads may spend CPU faster than wall time), at most 100 looks a second.
            wait = min(wait, max(0.01, (cpu_limit_s - (used or 0.0)) / 2))
        for fd, _ in poller.poll(wait * 1000):
            if fd == pidfd:
                exited = True
                poller.unregister(pidfd)
                continue
            if fd not in streams:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                del streams[fd]
                poller.unregister(fd)
                continue
            capture.add(streams[fd], chunk)
        if capture.exceeded:
            return exited, False, False
        if exited:
            capture.drain(streams)
            return exited, False, False


def _kill_and_reap(proc: subprocess.Popen, exited: bool):
    """Kill the process group if the main process is still running; reap it. Returns
    (killed by us, rusage)."""
    killed = False
    if not exited:
        killed = True
        for kill, target in ((os.killpg, proc.pid), (os.kill, proc.pid)):
            try:
                kill(target, signal.SIGKILL)
            except ProcessLookupError:
                pass
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return killed, ru


def run_limited(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    limits: Limits,
    stdin_path: str | None = None,
    merge_stderr: bool = False,
    pass_fds: tuple[int, ...] = (),
    keep_stdout: bool = True,
) -> Outcome:
    """Spawn argv in its own session, feed stdin from a file, read stdout/stderr with caps.

    Returns when the main process has exited or been killed (wall deadline, output cap).
    The caller must `sweep()` afterwards to kill whatever it left behind.
    """
    start = time.monotonic()
    proc = _spawn(argv, cwd, env, limits, stdin_path, merge_stderr, pass_fds)
    capture = _Capture(limits.output_bytes, keep_stdout)
    pidfd = os.pidfd_open(proc.pid)
    exited = timed_out = cpu_exceeded = False
    try:
        cpu_limit = limits.cpu_s if limits.stop_at_cpu_s else None
        exited, timed_out, cpu_exceeded = _watch(
            proc, pidfd, capture, start + limits.wall_s, cpu_limit
        )
    finally:
        killed, ru = _kill_and_reap(proc, exited)
        wall = time.monotonic() - start
        os.close(pidfd)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    return Outcome(
        exit_code=proc.returncode,
        cpu_s=ru.ru_utime + ru.ru_stime,
        wall_s=wall,
        max_rss_kb=int(ru.ru_maxrss),
        stdout=bytes(capture.out[: limits.output_bytes + 1]),
        stderr_tail=bytes(capture.err[-STDERR_TAIL_BYTES:]),
        timed_out=timed_out,
        output_exceeded=capture.exceeded,
        cpu_exceeded=cpu_exceeded,
        killed_by_us=killed,
    )


def sweep(deadline_s: float = 5.0) -> bool:
    """Kill every process in the container but ourselves (PID 1) and reap them all.

    kill(-1) is atomic with respect to fork, so a fork bomb cannot outrun it.
    Returns False when something could not be reaped in time (the pool then replaces us).
    """
    end = time.monotonic() + deadline_s
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass  # nothing left to signal
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return True  # no children at all: clean
        if time.monotonic() > end:
            return False
        time.sleep(0.001)


def wipe(path: str) -> None:
    """Empty a directory, whatever the candidate left in it: mode-000 dirs, symlinks, trees nested
    deeper than Python's recursion limit or PATH_MAX (those go to GNU chmod/rm, which cope)."""
    try:
        _wipe_py(path)
    except (OSError, RecursionError):
        subprocess.run(["chmod", "-R", "u+rwx", path], capture_output=True, check=False)
        for name in os.listdir(path):
            subprocess.run(
                ["rm", "-rf", "--one-file-system", "--", os.path.join(path, name)],
                capture_output=True,
                check=False,
            )
    if os.listdir(path):
        raise OSError(f"could not empty {path}")


def _wipe_py(path: str) -> None:
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    for entry in entries:
        full = entry.path
        if entry.is_dir(follow_symlinks=False):
            os.chmod(full, 0o700)
            _wipe_py(full)
            os.rmdir(full)
        else:
            os.unlink(full)
