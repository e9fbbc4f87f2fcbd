"""scripts/gpu_rlvr_learning.sh's two-command path: the first command's fitted.tgz (under $OUT)
is the second's FROM, which reuses the fitted policy and the before-training measurements.

Run at the script's smoke size (the docker engine, 6 tasks, the CPU, this virtualenv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.train.node_env import REPO
from tests.train.test_rlvr_node import DEMO_MBPP, _engine_or_skip

SCRIPT = REPO / "scripts" / "gpu_rlvr_learning.sh"


def _run(out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = ["bash", str(SCRIPT), "-", str(DEMO_MBPP), str(out)]
    base = {k: v for k, v in os.environ.items() if k not in {"OUT", "FROM"}}
    full = base | {"SMOKE": "1", "TRAIN_S_SMOKE": "5", "ALGOS": "grpo", "PY": sys.executable} | env
    return subprocess.run(
        cmd, check=False, cwd=REPO, env=full, capture_output=True, text=True, timeout=900
    )


def test_from_refuses_a_folder_without_a_fitted_run(tmp_path: Path) -> None:
    proc = _run(tmp_path / "out", {"FROM": str(tmp_path)})
    assert proc.returncode == 2
    assert "no summary.json and policy/" in proc.stderr


@pytest.mark.timeout(1200)
def test_second_command_starts_from_the_first_commands_fitted_policy(tmp_path: Path) -> None:
    _engine_or_skip("docker")  # the smoke size judges in the Docker sandbox
    back = tmp_path / "back"  # what a lent machine's $OUT brings back
    back.mkdir()
    first = _run(tmp_path / "first", {"OUT": str(back)})
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    with tarfile.open(back / "fitted.tgz") as tar:
        names = set(tar.getnames())
        assert {"summary.json", "policy/model.safetensors", "policy/fit.json"} <= names
        start = tmp_path / "fitted"
        tar.extractall(start, filter="data")

    second = _run(tmp_path / "second", {"FROM": str(start)})
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    earlier = json.loads((start / "summary.json").read_text())
    later = json.loads((tmp_path / "second" / "grpo" / "summary.json").read_text())
    assert later["fit"] == earlier["fit"]  # the same fitted weights, not fitted again
    assert later["timings"]["fit_s"] < 0.25 * earlier["timings"]["fit_s"]
    for key in ("temperature_probe", "temperature_chosen_by"):
        assert later["rlvr"][key] == earlier["rlvr"][key]
    assert later["rlvr"]["settings"]["temperature"] == earlier["rlvr"]["settings"]["temperature"]
    for split, both in later["rlvr"]["passk"].items():
        assert both["before"] == earlier["rlvr"]["passk"][split]["before"]
    assert later["rlvr"]["steps_run"] >= 1
