"""Ctrl-C on `aletheia build-train`, as a terminal sends it (SIGINT to the whole process
group): the build stops within seconds, leaves no process behind and prints one line, not
minutes of connection tracebacks; the same command then resumes, reusing every stage that
finished. Real parts: the CLI in its own process, Prefect's temporary server, the Docker
sandbox."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.flows.flows_helpers import REPO, fingerprint, small_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]

STOP_WITHIN_S = 15.0  # the old build ran on for minutes


def _config(tmp_path: Path, bundled: Path) -> Path:
    cfg = small_config(tmp_path / "out", bundled, tmp_path / "models" / "tiny")
    cfg["policies"] = []  # references and mutants only: the test is about stopping, not models
    cfg["sample"]["sources"] = [s for s in cfg["sample"]["sources"] if s["kind"] != "model"]
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _interrupted_run(
    config: Path, log: Path, tmp_path: Path, ready: re.Pattern[str]
) -> tuple[int, float, str, int]:
    """Run build-train until `ready` shows in its log, then Ctrl-C it. Returns (exit code,
    seconds from the signal to the exit, the log text, the process id)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(
        PYTHONPATH=str(REPO),
        PYTHONUNBUFFERED="1",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
    )
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "aletheia", "build-train", "-c", str(config)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        deadline = time.monotonic() + 600
        while proc.poll() is None and not ready.search(log.read_text()):
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        assert proc.poll() is None, f"the build ended before the signal:\n{log.read_text()}"
        time.sleep(1.0)  # into the stage
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does
        try:
            rc = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        took = time.monotonic() - sent
    # Nothing of the group is left: no server, no shard (a killed child may take a moment
    # to be reaped by init once its parent is gone).
    settle = time.monotonic() + 3.0
    while (left := _group_members(proc.pid)) and time.monotonic() < settle:
        time.sleep(0.2)
    assert left == [], left
    return rc, took, log.read_text(), proc.pid


def _group_members(pgid: int) -> list[str]:
    """The processes still in the process group, by pid, parent and command line."""
    import psutil

    left = []
    for p in psutil.process_iter(["pid", "ppid", "cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(p.pid) == pgid:
                left.append(
                    f"{p.pid} (parent {p.info['ppid']}): {' '.join(p.info['cmdline'] or [])[:200]}"
                )
        except (ProcessLookupError, psutil.Error):
            continue
    return left


def _own_containers(pid: int) -> list[str]:
    import socket

    out = subprocess.run(
        [
            "docker",
            "ps",
            "-aq",
            "--filter",
            f"label=aletheia.sandbox.owner={socket.gethostname()}:{pid}",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    ).stdout
    return out.split()


def test_ctrl_c_stops_build_train_in_seconds_and_it_resumes(
    tmp_path: Path, small_bundled: Path
) -> None:
    config = _config(tmp_path, small_bundled)
    work = tmp_path / "out" / "work"

    # 1. Ctrl-C while the candidates are being judged.
    rc, took, text, pid = _interrupted_run(
        config, tmp_path / "first.log", tmp_path, re.compile(r"Task run 'judge-shard")
    )
    assert rc == 130, text[-3000:]
    assert took < STOP_WITHIN_S, f"took {took:.1f}s to stop"
    _, _, after = text.partition("interrupted (SIGINT): stopping now.")
    assert after, text[-3000:]
    assert "build-train -c" in after.splitlines()[0]  # says how to resume
    assert "Traceback" not in text, text[-3000:]
    finished = {rel: fingerprint(work / rel) for rel in ("problems.parquet", "candidates.parquet")}
    assert _own_containers(pid) == []  # its sandbox containers went with it

    # 2. The same command again: the stages that finished are reused, not redone.
    rc, took, text, _ = _interrupted_run(
        config,
        tmp_path / "second.log",
        tmp_path,
        re.compile(r"Task run 'judge-shard[^']*' - (?:>>|Finished)"),
    )
    assert rc == 130 and took < STOP_WITHIN_S, text[-3000:]
    for stage in ("ingest", "splits", "sample-shard"):
        assert re.search(rf"Task run '{stage}-\w+' - Finished in state Cached", text), (
            f"{stage} was not reused:\n{text[-3000:]}"
        )
    assert {rel: fingerprint(work / rel) for rel in finished} == finished
