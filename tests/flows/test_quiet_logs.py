"""A CLI flow's log holds the pipeline's lines, not library noise (issue 28).

`aletheia ablation` is run as a user runs it: its own process, a temporary Prefect server
(no PREFECT_API_URL, a fresh PREFECT_HOME, none of the quieting variables set), one real
DPO-Think cell (a tiny random Qwen2 through TRL's DPOTrainer, then the evaluation). Before
the fix this run logged CPython bytecode at INFO (Prefect's `log_prints` took dill's
captured `dis.dis` output for the task's prints), the temporary server's telemetry error,
tqdm bars and transformers' FutureWarnings (flows/quiet.py says which is which)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from flows.quiet import LIBRARY_ENV, TEMPORARY_SERVER_ENV
from tests.flows.flows_helpers import REPO
from tests.train.rowgen import write_dataset

# A line of `dis.dis` output: "  160     2 LOAD_GLOBAL     0 (pa)" (opcode names are caps)
BYTECODE = re.compile(
    r"\b\d+ (LOAD|STORE|CALL|RETURN|BUILD|RESUME|PRECALL|KW_NAMES|BINARY|DICT|LIST|POP|PUSH"
    r"|JUMP|COMPARE|COPY|SWAP|UNPACK|FORMAT|IMPORT|GET|FOR_ITER|MAKE)[A-Z_]*\b"
)
PROGRESS_BAR = re.compile(r"\d+%\|")  # tqdm: " 40%|████      | 2/5 [...]"
RECORD = re.compile(r"^\d\d:\d\d:\d\d\.\d+ \| (?P<level>[A-Z]+) +\|", re.MULTILINE)


@pytest.fixture(scope="module")
def ablation_log(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("quiet")
    cfg = yaml.safe_load((REPO / "configs" / "ablation" / "demo.yaml").read_text())
    cfg.update(out_dir=str(root / "ablation"), data_dir=str(write_dataset(root / "data")),
               recipes=["dpo-think"], models={"think": str(tiny_model_dir),
                                              "instruct": str(tiny_model_dir)})  # fmt: skip
    cfg["recipe_train"] = {}  # its keys must name cells: the demo's shrink the other cells
    cfg["train"]["data"]["limit"] = 4
    cfg["train"]["optim"]["max_steps"] = 1
    cfg["evaluation"].update(limit=2, max_new_tokens=8)
    config = root / "ablation.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    # The user's environment: none of our quieting set, no server to reuse. (The flow tests'
    # session server sets the analytics variable in this process; the CLI must not need it.)
    env = {k: v for k, v in os.environ.items()
           if k not in {*LIBRARY_ENV, *TEMPORARY_SERVER_ENV, "PREFECT_API_URL"}}  # fmt: skip
    env.update(PREFECT_HOME=str(root / "prefect"), PREFECT_LOGGING_COLORS="false",
               HF_HUB_OFFLINE="1", COLUMNS="200")  # fmt: skip
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "600"  # a loaded test machine
    run = subprocess.run(
        [sys.executable, "-m", "aletheia", "ablation", "-c", str(config)],
        check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=3000,
    )  # fmt: skip
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-3000:]
    # it really ran: a temporary server, the cell trained and evaluated, the table printed
    assert "Starting temporary server" in log
    assert "Task run 'train-dpo-think' - Finished in state Completed()" in log
    assert "Task run 'evaluate-dpo-think' - Finished in state Completed()" in log
    assert "| DPO-Think |" in log
    return log


@pytest.mark.timeout(3600)
def test_no_bytecode_in_a_flow_log(ablation_log: str) -> None:
    """TRL's dataset maps are fingerprinted through dill, which prints `dis.dis` into a
    captured stdout; no flow turns those prints into log records."""
    bytecode = [line for line in ablation_log.splitlines() if BYTECODE.search(line)]
    assert bytecode == [], f"{len(bytecode)} lines of bytecode, e.g. {bytecode[:3]}"


@pytest.mark.timeout(3600)
def test_the_temporary_server_sends_no_telemetry(ablation_log: str) -> None:
    """Offline, the heartbeat was an ERROR record (the run's "first error" for
    flows.runlog) or a `database is locked` traceback; this run has no ERROR at all."""
    assert "telemetry" not in ablation_log.lower()
    levels = [m["level"] for m in RECORD.finditer(ablation_log)]
    assert levels and "ERROR" not in levels and "CRITICAL" not in levels


@pytest.mark.timeout(3600)
def test_no_progress_bars_or_library_warnings(ablation_log: str) -> None:
    """Weight loading, the trainer's steps and dataset maps drew tqdm bars; transformers
    warned about its own deprecated internals (called by TRL)."""
    bars = [line for line in ablation_log.splitlines() if PROGRESS_BAR.search(line)]
    assert bars == [], bars[:3]
    assert "FutureWarning" not in ablation_log and "warnings.warn(" not in ablation_log


def test_a_users_own_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every quieting value is a default: bars and warnings come back when asked for."""
    from flows.quiet import quiet_libraries, temporary_server_env

    monkeypatch.setenv("TQDM_DISABLE", "0")
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "warning")
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "true")
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.delenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", raising=False)
    quiet_libraries()
    temporary_server_env()
    assert os.environ["TQDM_DISABLE"] == "0" and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert os.environ["TRANSFORMERS_VERBOSITY"] == "warning"
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "true"
    assert os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] == "120"
