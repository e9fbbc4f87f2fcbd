"""Ctrl-C stops the process even when the kernel hands the signal to another thread while
the main thread waits in a lock (on CI: a Prefect call retrying against the temporary server
that the same Ctrl-C had stopped kept the build alive for 63 s). Real processes and signals;
the blocked main thread is made deterministic by masking SIGINT on it, so the kernel must
deliver the signal to another thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from tests.flows.flows_helpers import REPO

SCRIPT = textwrap.dedent(
    """
    import signal, sys, threading, time
    from pipeline.interrupt import stop_on_interrupt

    with stop_on_interrupt("resume-me"):
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # only other threads take it
        stuck = threading.Lock()
        stuck.acquire()
        print("blocked", flush=True)
        stuck.acquire()  # never returns: as the main thread waiting on a dead server
    """
)


def _interrupt_blocked_main(tmp_path: object, signals: int) -> tuple[int, float, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "blocked"
        sent = time.monotonic()
        for _ in range(signals):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        rc = proc.wait(timeout=30)
        took = time.monotonic() - sent
        return rc, took, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_ends_the_process_while_its_main_thread_is_blocked(tmp_path: object) -> None:
    rc, took, err = _interrupt_blocked_main(tmp_path, signals=1)
    assert rc == 130, err
    assert took < 5.0, f"took {took:.1f}s"
    assert err.count("interrupted (SIGINT): stopping now.") == 1, err
    assert "`resume-me` resumes after them" in err
    assert "Traceback" not in err, err


def test_a_second_ctrl_c_ends_it_at_once(tmp_path: object) -> None:
    rc, took, err = _interrupt_blocked_main(tmp_path, signals=2)
    assert rc == 130, err
    assert took < 5.0
    assert err.count("stopping now") == 1, err  # one notice, not one per signal
