"""bench/bench_http_soak.py for ~20 s: 2 servers (Docker engine), 3 clients, the first server
killed at a third of the run and started again on its port. Every request is answered exactly
once with its expected verdict, around the restart too, and the restarted server gets traffic
back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engines_here import child_pythonpath

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_http_soak_loses_doubles_and_misjudges_nothing_across_a_restart(tmp_path: Path):
    out = tmp_path / "soak.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_http_soak.py"), "--seconds", "20",
         "--restart-at", "0.3", "--restart-pause", "2", "--window", "10", "--sample", "2",
         "--json", str(out)],
        check=False, cwd=REPO, env={**os.environ, "PYTHONPATH": child_pythonpath(REPO)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r = json.loads(out.read_text())
    a, around = r["accounting"], r["restart"]["accounting"]
    assert a["submitted"] > 0 and a["answered"] == a["submitted"]
    assert (a["lost"], a["doubled"], a["wrong"]) == (0, 0, 0)
    assert around["submitted"] > 0
    assert (around["lost"], around["doubled"], around["wrong"]) == (0, 0, 0)
    assert r["failover"]["requests_answered_by_two_servers"] == 0
    assert r["restart"]["traffic_back_after_up_s"] is not None, "the restarted server idled"
    assert set(r["memory"]) == {"s1", "s1'", "s2"}
    assert r["containers_left"] == 0
