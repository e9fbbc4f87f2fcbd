"""Every command that judges answers a judge engine that cannot run in one line, at once and
before any input or model loads (issue 28: 460-480-line tracebacks, evaluate-policy only after
sampling). Real dead engines: DOCKER_HOST at a socket path where nothing listens (the real
dockerd is left alone), and an http URL on a closed 127.0.0.1 port. Each command runs in a
fresh interpreter; the heavy libraries it did not import stand for the time it did not spend."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What a dead engine must not wait for: the models' libraries, Prefect, the data libraries
# (2-3 s of imports on a busy machine) and the engines' clients (a probe needs the stdlib only).
HEAVY = ("torch", "transformers", "trl", "datasets", "prefect", "pyarrow", "polars", "numpy",
         "httpx", "docker")  # fmt: skip
RUNNER = """
import sys
from aletheia.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print("RC", code)
print("HEAVY", sorted(m for m in {heavy!r} if m in sys.modules))
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once this returns


def _aletheia(
    args: list[str], env: dict[str, str], cwd: Path
) -> tuple[int, list[str], list, float]:
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", RUNNER.format(heavy=HEAVY), *args],
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - started
    rc = int(re.search(r"^RC (\d+)", r.stdout, re.MULTILINE).group(1))
    heavy = re.search(r"^HEAVY \[(.*)\]", r.stdout, re.MULTILINE).group(1)
    return rc, r.stderr.strip().splitlines(), [h.strip(" '") for h in heavy.split(",") if h], took


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each judging command with inputs that are never read: the engine is asked first."""
    model = tmp_path / "policy"
    model.mkdir()
    (model / "config.json").write_text("{}")  # a model folder to the eye; never loaded
    problems = tmp_path / "problems.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"source_split": ["test"]}), problems)
    return {
        "judge": ["judge", "--candidates", "c.parquet", "-p", str(problems), "-o", "j.parquet"],
        "check-references": ["check-references", "-p", str(problems), "-o", "refs"],
        "evaluate-policy": ["evaluate-policy", "--model", str(model), "-p", str(problems),
                            "-o", "report", "--split", "all"],
        "adversarial": ["adversarial", "-i", "i.parquet", "-p", str(problems), "-o", "adv"],
    }  # fmt: skip


@pytest.mark.parametrize("command", ["judge", "check-references", "evaluate-policy", "adversarial"])
@pytest.mark.parametrize("dead", ["docker", "http"])
def test_a_dead_engine_is_one_line_before_any_work(tmp_path: Path, command: str, dead: str) -> None:
    args = _commands(tmp_path)[command]
    if dead == "docker":
        sock = tmp_path / "no-docker.sock"
        env, where = {"DOCKER_HOST": f"unix://{sock}"}, f"unix://{sock}"
    else:
        where = f"http://127.0.0.1:{_closed_port()}"
        env, args = {"ALETHEIA_SANDBOX_TOKEN": "x"}, [*args, "--url", where]
    rc, lines, heavy, took = _aletheia(args, env, tmp_path)
    assert rc == 3 and len(lines) == 1, lines  # an engine unavailable here: exit 3
    assert lines[0].startswith(f"error: sandbox engine {dead}: "), lines
    assert where in lines[0], lines
    assert heavy == [], f"{command} imported {heavy} before saying the engine is dead"
    assert took < 30, took  # a hang (a connect without timeout) would show here
    assert not (tmp_path / "report").exists() and not (tmp_path / "refs").exists()


def test_http_without_url_or_token_names_the_options(tmp_path: Path) -> None:
    args = _commands(tmp_path)["judge"]
    env = {"ALETHEIA_SANDBOX_TOKEN": "", "ALETHEIA_SANDBOX_URL": ""}
    rc, lines, _, _ = _aletheia([*args, "--engine", "http"], env, tmp_path)
    assert rc == 2 and len(lines) == 1 and "--url URL" in lines[0], lines
    rc, lines, _, _ = _aletheia([*args, "--url", "http://127.0.0.1:9"], env, tmp_path)
    assert rc == 2 and len(lines) == 1 and "--token-file FILE" in lines[0], lines
    token = tmp_path / "token"
    token.write_text("from-the-file\n")
    rc, lines, _, _ = _aletheia(
        [*args, "--url", f"http://127.0.0.1:{_closed_port()}", "--token-file", str(token)],
        env,
        tmp_path,
    )  # the token was read: now the server is what is missing
    assert rc == 3 and "no sandbox server answers" in lines[0], lines
    rc, lines, _, _ = _aletheia(
        [*args, "--url", "http://127.0.0.1:9", "--token-file", str(tmp_path / "none")],
        env,
        tmp_path,
    )
    assert rc == 2 and len(lines) == 1 and "sandbox token file" in lines[0], lines


def test_every_judging_command_takes_url_and_token_file() -> None:
    from aletheia.cli import load_command

    for name in ("judge", "check-references", "evaluate-policy", "adversarial", "train",
                 "build-train", "build-eval", "rlvr-study"):  # fmt: skip
        command = load_command(name)
        assert command is not None, name
        options = {o for p in command.params for o in getattr(p, "opts", [])}
        assert {"--engine", "--url", "--token-file"} <= options, (name, options)
