"""Which failures a task retries, and where its result storage block lives, on a real
Prefect server (prefect_test_harness: a temporary SQLite database behind a local API)."""

from __future__ import annotations

import errno
import logging

import pytest
from prefect import flow, task

from flows.task import is_transient, permanent_os_error, retry_transient


@pytest.mark.parametrize(
    "exc",
    [
        PermissionError(errno.EACCES, "Permission denied", "/data/out"),
        PermissionError("raised by hand, no errno"),
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EDQUOT, "Disk quota exceeded"),
        OSError(errno.EROFS, "Read-only file system"),
        IsADirectoryError(errno.EISDIR, "Is a directory"),
        FileNotFoundError("no input"),
    ],
    ids=lambda e: type(e).__name__ + (f"-{errno.errorcode[e.errno]}" if e.errno else ""),
)
def test_setup_errors_are_not_transient(exc: OSError) -> None:
    assert not is_transient(exc) and permanent_os_error(exc)


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionResetError(),
        TimeoutError(),
        BrokenPipeError(),
        OSError(errno.EAGAIN, "Resource temporarily unavailable"),
        OSError(errno.EIO, "Input/output error"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_hiccups_are_transient(exc: OSError) -> None:
    assert is_transient(exc) and permanent_os_error(exc) is None


def _attempts_until_failure(prefect_api: str, exc: BaseException) -> int:
    calls = []

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_transient)
    def failing() -> None:
        calls.append(1)
        raise exc

    @flow
    def run() -> None:
        failing()

    with pytest.raises(type(exc)):
        run()
    return len(calls)


def test_a_full_disk_fails_at_once_with_a_clear_message(
    prefect_api: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="flows.task")
    assert _attempts_until_failure(prefect_api, OSError(errno.ENOSPC, "No space left")) == 1
    assert "no space left on device" in caplog.text and "not retried" in caplog.text
    assert _attempts_until_failure(prefect_api, ConnectionResetError("peer reset")) == 3


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: nothing listens there


def test_a_judge_engine_that_cannot_run_fails_at_once_in_one_line(
    prefect_api: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge shard opening an http engine whose only server is down (a real closed port on
    127.0.0.1): one attempt, not three, and one error line that names the server. It used to
    be a SandboxError, retried as if transient, after all the sampling."""
    from pipeline.judge.config import SandboxSection
    from pipeline.judge.interface import JudgeUnavailable, open_judge

    monkeypatch.setenv("ALETHEIA_SANDBOX_TOKEN", "x")
    url = f"http://127.0.0.1:{_closed_port()}"
    calls = []

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_transient)
    def judge_shard() -> None:
        calls.append(1)
        open_judge(SandboxSection(engine="http", url=url)).close()

    @flow
    def run() -> None:
        judge_shard()

    caplog.set_level(logging.ERROR, logger="flows.task")
    with pytest.raises(JudgeUnavailable) as err:
        run()
    assert len(calls) == 1
    assert url in str(err.value) and "\n" not in str(err.value)
    lines = [r.getMessage() for r in caplog.records if "not retried" in r.getMessage()]
    assert len(lines) == 1 and url in lines[0] and "\n" not in lines[0], lines
