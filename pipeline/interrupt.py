"""Ctrl-C on a build that runs in this process: stopped within seconds, finished work kept.

`aletheia build-train` runs the flows here, their shards on worker threads. Python's own
Ctrl-C only interrupts the main thread: the threads ran on (a DPO shard for five more
minutes), reporting to the temporary Prefect server that Ctrl-C had already stopped, so
every state change printed a connection traceback, and the interpreter waited for them at
exit. Here the first Ctrl-C prints one line, removes this process's sandbox containers,
stops its child processes (the temporary Prefect server, model servers, Ray workers) and
ends the process; a second Ctrl-C ends it at once.

Nothing finished is lost: every stage writes its outputs to a temporary file renamed into
place and marks itself done last (`pipeline/common/stage.py`), so a stage cut short is
simply redone and the same command resumes after the last finished stage and shard.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

EXIT_CODE = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
GRACE_S = 8.0  # children get this long to stop before they are killed
SANDBOX_OWNER_LABEL = "aletheia.sandbox.owner"  # sandbox/container.py's OWNER_LABEL


def _remove_own_containers() -> None:
    """`docker rm -f` the sandbox containers this process started (they run `--rm`, but a
    container whose `docker run` client is killed keeps running until its stdin closes)."""
    owner = f"{socket.gethostname()}:{os.getpid()}"
    try:
        ids = subprocess.run(
            ["docker", "ps", "-q", "--filter", f"label={SANDBOX_OWNER_LABEL}={owner}"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.split()
        if ids:
            subprocess.run(
                ["docker", "rm", "-f", *ids], capture_output=True, timeout=5, check=False
            )
    except (OSError, subprocess.TimeoutExpired):
        pass  # no Docker here, or it is slow: the next sandbox start removes stale ones


def stop_children(grace_s: float = GRACE_S) -> None:
    """SIGTERM every descendant process, then SIGKILL whatever is left after `grace_s`; again
    for any a still-running thread started meanwhile (the stop runs beside the flow's
    threads, which may start a sandbox client until the process ends)."""
    import psutil

    for wait_s in (grace_s, 1.0, 1.0):
        try:
            children = psutil.Process().children(recursive=True)
        except psutil.Error:
            return
        if not children:
            return
        for child in children:
            with contextlib.suppress(psutil.Error):
                child.terminate()
        _, alive = psutil.wait_procs(children, timeout=wait_s)
        for child in alive:
            with contextlib.suppress(psutil.Error):
                child.kill()
        psutil.wait_procs(alive, timeout=2)


def _silence() -> None:
    """After our one line, nothing more: the threads' dying words are not the user's concern."""
    logging.disable(logging.CRITICAL)
    threading.excepthook = lambda args: None
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)


def _stop_and_exit() -> None:
    deadline = threading.Timer(GRACE_S + 4, os._exit, (EXIT_CODE,))
    deadline.daemon = True
    deadline.start()  # exit on time even if a child or Docker hangs
    _remove_own_containers()
    stop_children()
    os._exit(EXIT_CODE)  # the shard threads are not joined: their work is redone on resume


def _watch_wakeup_fd(read_fd: int, on_signal: Callable[[int], None]) -> None:
    """Read the signal numbers Python's C-level handler writes to the wakeup fd and act on
    each at once, from this thread.

    Why not only the Python handler: it runs on the main thread, and only when the main
    thread next executes bytecode. The kernel may deliver the signal to any thread; then a
    main thread blocked in a lock or a future's result (a Prefect call retrying against the
    temporary server that the same Ctrl-C just stopped) does not wake until that call gives
    up: a minute on CI. The C handler still writes the signal to the wakeup fd right away,
    whichever thread took it."""
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:
            return
        for signum in data:
            if signum in STOP_SIGNALS:  # other handled signals write here too
                on_signal(signum)


@contextlib.contextmanager
def stop_on_interrupt(resume: str) -> Iterator[None]:
    """Within this block, Ctrl-C (SIGINT) or SIGTERM stops the process within seconds.

    `resume` is the command that picks the work up again (printed with the notice)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    first = threading.Lock()

    def on_signal(signum: int) -> None:
        if not first.acquire(blocking=False):
            os._exit(EXIT_CODE)  # a second Ctrl-C: at once
        print(
            f"\ninterrupted ({signal.Signals(signum).name}): stopping now. Finished stages "
            f"and shards are kept; `{resume}` resumes after them.",
            file=sys.stderr,
            flush=True,
        )
        _silence()
        _stop_and_exit()  # the flow does not run on meanwhile: this ends the process

    def handler(signum: int, frame: object) -> None:
        # The watcher sees every signal through the wakeup fd; act here only where something
        # (an asyncio loop) has put its own wakeup fd in place of ours.
        current = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(current)
        if current != write_fd:
            on_signal(signum)

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C handler must never block on it
    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watcher = threading.Thread(
        target=_watch_wakeup_fd, args=(read_fd, on_signal), name="interrupt-watch", daemon=True
    )
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for sig, previous in old.items():
            signal.signal(sig, previous)
        os.close(write_fd)  # the watcher reads EOF and ends
        watcher.join(timeout=1)
        os.close(read_fd)
