"""A failed deployment run tells its first error and where the full log is
(`python -m flows.failure`, which scripts/demo.sh calls), and a worker without
ALETHEIA_HOME is told to set it. Real parts: Prefect flow runs and Prefect's own pull-step
runner on prefect.yaml's pull section, each in its own process against the session's Prefect
server, as a worker's runs report to one (a temporary server per process cost ~20 s each)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.deploy_steps import CheckoutError, enter_checkout
from tests.flows.flows_helpers import REPO

FAILING_FLOW = """
from prefect import flow, task


@task(retries=0)
def judge_shard(i: int) -> int:
    if i == 1:
        raise ValueError("tests row 3 of problem p_1 has no expected output")
    return i


@flow(name="failing-demo")
def failing_demo() -> None:
    for i in range(3):
        judge_shard(i)


failing_demo()
"""


def _python(args: list[str], tmp_path: Path, log: Path, api: str, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    environ.pop("ALETHEIA_HOME", None)
    environ.update(
        PYTHONPATH=str(REPO),
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_API_URL=api,
        **env,
    )
    with open(log, "w") as out:
        return subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            env=environ,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=600,
            check=False,
        ).returncode


def _report(log: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "flows.failure", "--log", str(log), "--ui", "http://127.0.0.1:4200"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r.stderr


@pytest.mark.slow
def test_first_error_of_a_real_failed_flow_run(prefect_api: str, tmp_path: Path) -> None:
    script = tmp_path / "failing_flow.py"
    script.write_text(FAILING_FLOW)
    log = tmp_path / "worker.log"
    assert _python([str(script)], tmp_path, log, prefect_api) != 0
    assert log.read_text().count("Traceback") >= 2  # the error, then everything it failed
    first, where, ui = _report(log).splitlines()
    assert first.startswith("first error: Task run 'judge_shard-")
    assert first.endswith("': ValueError: tests row 3 of problem p_1 has no expected output")
    line = int(where.rsplit("line ", 1)[1].rstrip(")"))
    assert where.startswith(f"full log: {log} ")
    assert "judge_shard" in log.read_text().splitlines()[line - 1]  # where its record starts
    assert ui.endswith("http://127.0.0.1:4200/runs")


@pytest.mark.slow
def test_a_worker_without_aletheia_home_is_told_to_set_it(prefect_api: str, tmp_path: Path) -> None:
    """prefect.yaml's pull section, run by Prefect's step runner as a worker's flow run does."""
    code = (
        "import asyncio, yaml\n"
        "from prefect.deployments.steps.core import run_steps\n"
        f"steps = yaml.safe_load(open({str(REPO / 'prefect.yaml')!r}))['pull']\n"
        "print('STEPS', steps)\n"
        "asyncio.run(run_steps(steps))\n"
    )
    log = tmp_path / "worker.log"
    assert _python(["-c", code], tmp_path, log, prefect_api) != 0, log.read_text()
    first = _report(log).splitlines()[0]
    assert "ALETHEIA_HOME is not set on this worker" in first and "export ALETHEIA_HOME" in first
    assert "No such file or directory: ''" not in log.read_text()  # the old crash

    log_ok = tmp_path / "ok.log"
    ok = code.replace("asyncio.run(run_steps(steps))", "print(asyncio.run(run_steps(steps)))")
    assert _python(["-c", ok], tmp_path, log_ok, prefect_api, ALETHEIA_HOME=str(REPO)) == 0, (
        log_ok.read_text()
    )
    assert f"'directory': '{REPO.resolve()}'" in log_ok.read_text()


def test_enter_checkout_names_the_variable_and_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALETHEIA_HOME", raising=False)
    with pytest.raises(CheckoutError, match="ALETHEIA_HOME is not set on this worker"):
        enter_checkout()
    monkeypatch.setenv("ALETHEIA_HOME", str(tmp_path / "aletheia"))
    (tmp_path / "aletheai").mkdir()
    with pytest.raises(CheckoutError, match=r"ALETHEIA_HOME=.*no such folder; did you mean"):
        enter_checkout()
    monkeypatch.setenv("ALETHEIA_HOME", str(tmp_path / "aletheai"))
    with pytest.raises(CheckoutError, match="is not the checkout"):
        enter_checkout()
    monkeypatch.setenv("ALETHEIA_HOME", str(REPO))
    monkeypatch.chdir(tmp_path)
    assert enter_checkout() == {"directory": str(REPO.resolve())}
    assert Path.cwd() == REPO.resolve()
