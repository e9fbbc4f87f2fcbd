"""A failed flow run's log gives its first error in two lines (what scripts/demo.sh prints):
a real Prefect flow run failing in a task, its console log written to a file as a
worker's would be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flows.runlog import first_error, main
from tests.flows.flows_helpers import REPO

FAILING_FLOW = """
from prefect import flow, task

@task(name="judge-shard")
def shard(i: int) -> int:
    if i == 1:
        raise ValueError("problems.parquet: no column 'tests' (the file is not a problems table)")
    return i

@flow(name="demo-like")
def run() -> None:
    for i in range(3):
        shard(i)

run()
"""


def test_the_first_error_of_a_failed_run(prefect_api: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "PREFECT_LOGGING_COLORS": "false"}
    with log.open("w") as out:
        rc = subprocess.run(
            [sys.executable, "-c", FAILING_FLOW],
            check=False,
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=300,
        ).returncode
    assert rc != 0
    text = log.read_text()
    error = first_error(text)
    assert error is not None, text[-2000:]
    assert error.where.startswith("Task run 'judge-shard")
    assert "ValueError" in error.message
    assert error.exception == (
        "ValueError: problems.parquet: no column 'tests' (the file is not a problems table)"
    )
    assert text.splitlines()[error.line_number - 1].endswith(error.message)


def test_the_command_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "worker.log"
    log.write_text(
        "12:00:00.000 | INFO    | Flow run 'x' - Beginning flow run\n"
        "12:00:01.000 | ERROR   | Task run 'sample-shard-0' - Task run failed with exception: "
        "OSError('no model at /m') - No retries left.\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "OSError: no model at /m\n"
        "12:00:02.000 | ERROR   | Flow run 'x' - Finished in state Failed('1/1 states failed.')\n"
    )
    assert main(["first-error", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "first error (Task run 'sample-shard-0'): Task run failed with exception: "
        "OSError('no model at /m') - No retries left."
    )
    assert out[1] == "  OSError: no model at /m"
    assert out[2] == f"full log: {log.resolve()} (line 2)"
    assert main(["nonsense"]) == 2
