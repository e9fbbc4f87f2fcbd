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
from collections.abc import Iterator

EXIT_CODE = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C
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
    """SIGTERM every descendant process, then SIGKILL whatever is left after `grace_s`."""
    import psutil

    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _, alive = psutil.wait_procs(children, timeout=grace_s)
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


@contextlib.contextmanager
def stop_on_interrupt(resume: str) -> Iterator[None]:
    """Within this block, Ctrl-C (SIGINT) or SIGTERM stops the process within seconds.

    `resume` is the command that picks the work up again (printed with the notice)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    stopping = threading.Event()

    def handler(signum: int, frame: object) -> None:
        if stopping.is_set():
            os._exit(EXIT_CODE)  # a second Ctrl-C: at once
        stopping.set()
        print(
            f"\ninterrupted ({signal.Signals(signum).name}): stopping now. Finished stages "
            f"and shards are kept; `{resume}` resumes after them.",
            file=sys.stderr,
            flush=True,
        )
        _silence()
        _stop_and_exit()  # here, on the main thread: the flow does not run on meanwhile

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
