"""The `aletheia` command mounts every stage's commands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aletheia.cli import app

EXPECTED = {
    "problems",
    "sample",
    "judge",
    "assemble",
    "adversarial",
    "dpo",
    "train",
    "evaluate",
    "publish",
    "build-train",
    "build-eval",
}


def test_every_stage_command_is_mounted() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    listed = {
        line.split()[1]
        for line in result.output.splitlines()
        if line.startswith("│ ") and len(line.split()) > 1
    }
    assert EXPECTED <= listed, f"missing commands: {EXPECTED - listed}"


def test_problems_subcommands() -> None:
    result = CliRunner().invoke(app, ["problems", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "ingest" in result.output and "split" in result.output


# --- user mistakes: one line, naming the file / key / path, before heavy imports -----

HEAVY = ("torch", "transformers", "trl", "peft", "prefect", "datasets")
REPO = Path(__file__).resolve().parents[1]
RUNNER = """
import sys
from aletheia.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
else:
    code = 0
print("RC", code)
print("HEAVY", sorted(m for m in {heavy!r} if m in sys.modules))
"""


def _aletheia(*args: str, cwd: Path = REPO) -> tuple[int, list[str], list[str]]:
    """(exit code, stderr lines, heavy modules imported) of `aletheia ARGS` in a fresh
    interpreter. The heavy modules stand for the time: torch + transformers alone took the
    old errors 13-16 s."""
    r = subprocess.run(
        [sys.executable, "-c", RUNNER.format(heavy=HEAVY), *args],
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    rc = int(re.search(r"^RC (\d+)", r.stdout, re.MULTILINE).group(1))
    heavy = re.search(r"^HEAVY \[(.*)\]", r.stdout, re.MULTILINE).group(1)
    return rc, r.stderr.strip().splitlines(), [h.strip(" '") for h in heavy.split(",") if h]


def _one_error_line(rc: int, lines: list[str], heavy: list[str]) -> str:
    assert rc == 2, lines
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert heavy == [], f"imported {heavy} before saying what is wrong"
    assert "Traceback" not in lines[0] and "pydantic.dev" not in lines[0]
    return lines[0]


def test_missing_model_path_is_one_line_for_train_evaluate_and_evaluate_policy(
    tmp_path: Path,
) -> None:
    config = tmp_path / "dpo.yaml"
    raw = yaml.safe_load((REPO / "configs" / "train" / "demo-dpo.yaml").read_text())
    raw["model"] = str(tmp_path / "models" / "tiny-qwen2")
    config.write_text(yaml.safe_dump(raw))
    line = _one_error_line(*_aletheia("train", "-c", str(config)))
    assert f"{config}: model: no such path {tmp_path}/models/tiny-qwen2" in line
    assert f"({tmp_path} has no 'models')" in line
    (tmp_path / "models" / "tiny-qwen2").mkdir(parents=True)
    (tmp_path / "models" / "tiny-qwen2" / "config.json").write_text("{}")
    line = _one_error_line(*_aletheia("train", "-c", str(config), cwd=tmp_path))
    assert f"{config}: data.dir: no such folder out/demo/hub" in line  # checked before TRL loads

    (tmp_path / "hub").mkdir()
    (tmp_path / "train" / "dpo" / "final").mkdir(parents=True)
    (tmp_path / "train" / "dpo" / "final" / "config.json").write_text("{}")
    line = _one_error_line(
        *_aletheia(
            "evaluate",
            "--model",
            "train/dpo/fianl",
            "--data",
            "hub",
            "--out",
            "eval",
            cwd=tmp_path,
        )
    )
    assert "--model: no such path train/dpo/fianl; did you mean 'train/dpo/final'?" in line
    line = _one_error_line(
        *_aletheia("evaluate", "--model", "train/dpo", "--data", "hub", "-o", "eval", cwd=tmp_path)
    )
    assert "train/dpo holds no config.json" in line and "train/dpo/final" in line

    problems = tmp_path / "problems.parquet"
    problems.write_bytes(b"")  # never read: the model is checked first
    line = _one_error_line(
        *_aletheia(
            "evaluate-policy",
            "--model",
            "out/rlvr/policy/final",
            "-p",
            str(problems),
            "-o",
            "rep",
            cwd=tmp_path,
        )
    )
    assert "--model: no such path out/rlvr/policy/final (the current folder has no 'out')" in line


def test_training_config_typo_names_the_file_key_and_closest_key(tmp_path: Path) -> None:
    raw = yaml.safe_load((REPO / "configs" / "train" / "demo-dpo.yaml").read_text())
    raw["methd"] = raw.pop("method")
    raw["optim"]["learning_rte"] = raw["optim"].pop("learning_rate")
    config = tmp_path / "typo.yaml"
    config.write_text(yaml.safe_dump(raw))
    line = _one_error_line(*_aletheia("train", "-c", str(config)))
    # Both typos named with their keys; `methd` also makes `method` "missing": one mistake.
    assert line.startswith(f"error: {config}: ")
    assert "optim.learning_rte: unknown key; did you mean 'learning_rate'?" in line
    assert "[and 1 more: methd (did you mean 'method'?)]" in line

    line = _one_error_line(*_aletheia("train", "-c", "configs/train/demo-dop.yaml"))
    assert (
        "configs/train/demo-dop.yaml not found; did you mean 'configs/train/demo-dpo.yaml'?" in line
    )


def test_a_bad_bias_type_names_the_file_and_every_known_type(tmp_path: Path) -> None:
    from pipeline.instances.adversarial.catalogue import BY_NAME

    raw = yaml.safe_load((REPO / "configs" / "instances" / "adversarial.yaml").read_text())
    raw["bias_types"][0] = "authorty"
    config = tmp_path / "adv.yaml"
    config.write_text(yaml.safe_dump(raw))
    args = ("adversarial", "--stage-config", str(config), "-i", "i.parquet", "-p", "p.parquet")
    args += ("-o", "out")
    line = _one_error_line(*_aletheia(*args, cwd=tmp_path))
    assert f"error: {config}: bias_types: unknown bias type(s) ['authorty']" in line
    assert "did you mean 'authority'?" in line
    known = line.split("known: ", 1)[1].split("  (--debug")[0]
    assert known.split(", ") == sorted(BY_NAME)  # the whole list, none cut mid-word


def test_a_misspelt_source_kind_gets_the_closest_kind(tmp_path: Path) -> None:
    rc, lines, _ = _aletheia(
        "problems", "ingest", "-s", "jsnol:x.jsonl", "-o", "p.parquet", cwd=tmp_path
    )
    assert rc == 2 and len(lines) == 1, lines
    assert "unknown source kind 'jsnol' in 'jsnol:x.jsonl'; did you mean 'jsonl'?" in lines[0]


def test_option_and_command_mistakes_are_one_line_with_the_closest_name(tmp_path: Path) -> None:
    """click's own errors (a missing folder, an unknown option or command) were a boxed
    panel with a usage block; now one `error:` line like every other mistake."""
    cases = {
        ("trian", "-c", "x.yaml"): "no such command 'trian'; did you mean 'train'?",
        ("evaluate-policy", "--max-token", "3"): "No such option: --max-token",
        ("evaluate", "--data", "nope", "--out", "o", "--model", "m"): "'nope' does not exist",
    }
    for args, expected in cases.items():
        rc, lines, heavy = _aletheia(*args, cwd=tmp_path)
        assert rc == 2 and len(lines) == 1 and heavy == [], (args, lines)
        assert lines[0].startswith("error: ") and expected in lines[0], (args, lines)
        assert "--help shows what it takes" in lines[0]
    assert "--max-tokens" in _aletheia("evaluate-policy", "--max-token", "3")[1][0]


def test_train_options_count_over_a_config_file(tmp_path: Path) -> None:
    """`train -c F --model X` trained F's model and never looked at X (a newcomer retry of
    issue 23 found the error naming the config's path, not theirs); --model, --out, --data
    and --set now apply to a config file as to a zoo cell, and the cell-only options say so."""
    config = str(REPO / "configs" / "train" / "demo-dpo.yaml")
    line = _one_error_line(*_aletheia("train", "-c", config, "--model", str(tmp_path / "m")))
    assert f"model: no such path {tmp_path}/m" in line and "tiny-qwen2" not in line

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    line = _one_error_line(
        *_aletheia("train", "-c", config, "--model", "m", "--data", "hub", cwd=tmp_path)
    )
    assert "data.dir: no such folder hub" in line

    line = _one_error_line(*_aletheia("train", "-c", config, "--set", "optim.max_step=3"))
    assert "optim.max_step: unknown key; did you mean 'max_steps'?" in line

    line = _one_error_line(*_aletheia("train", "-c", config, "--size", "7b"))
    assert "--size: picks a zoo cell, only with --recipe" in line

    r = CliRunner().invoke(
        app, ["train", "-c", config, "--show", "-o", "elsewhere", "--set", "optim.max_steps=3"]
    )
    assert r.exit_code == 0, r.output
    shown = yaml.safe_load(r.output)
    assert shown["output_dir"] == "elsewhere" and shown["optim"]["max_steps"] == 3


def test_a_missing_source_file_is_named_before_datasets_loads(tmp_path: Path) -> None:
    """`-s jsonl:PATH` with no such file went through `datasets` (3 s) and its own message;
    now one line naming the file and what is near it, with `datasets` never imported."""
    (tmp_path / "data.jsonl").write_text("")
    code = (
        "import sys\nfrom aletheia.cli import main\ntry:\n"
        "    main(['problems', 'ingest', '-s', 'jsonl:dat.jsonl', '-o', 'p.parquet'])\n"
        "except SystemExit as e:\n    print('rc', e.code)\nprint('datasets' in sys.modules)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stdout.split() == ["rc", "2", "False"], r.stdout + r.stderr
    assert r.stderr.strip() == (
        "error: source 'jsonl:dat.jsonl': no such file dat.jsonl; did you mean 'data.jsonl'?"
    )


def test_a_misspelt_run_config_gets_the_closest_path_at_once() -> None:
    """`build-train -c configs/demo.yml` loaded every stage's config (2 s) to say "not
    found" with no suggestion; now the path is checked first, with the closest file."""
    for args in (
        ("build-train", "-c", "configs/demo.yml"),
        ("build-eval", "-c", "config/demo.yaml"),
    ):
        line = _one_error_line(*_aletheia(*args, "--dry-run"))
        assert line.startswith(f"error: run config {args[2]} not found; did you mean "
                               "'configs/demo.yaml'?  (--debug"), line  # fmt: skip
    line = _one_error_line(*_aletheia("build-train", "-c", "configs/nothing-like-it.yaml"))
    assert "(configs has no 'nothing-like-it.yaml'); see configs/ for examples" in line


def test_a_value_near_a_choice_gets_the_closest_choice(tmp_path: Path) -> None:
    """A misspelt choice (`method: dop`) listed the choices but suggested none."""
    raw = yaml.safe_load((REPO / "configs" / "train" / "demo-dpo.yaml").read_text())
    raw["method"] = "dop"
    config = tmp_path / "m.yaml"
    config.write_text(yaml.safe_dump(raw))
    line = _one_error_line(*_aletheia("train", "-c", str(config)))
    assert line.startswith(
        f"error: {config}: method: Input should be 'grpo', 'dpo', 'sft', 'raft', 'rlvr', "
        "'star' or 'restem' (got 'dop'); did you mean 'dpo'?"
    ), line


# --- one exit code per class of failure ----------------------------------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_same_failure_exits_with_the_same_code_from_every_command(tmp_path: Path) -> None:
    """A judge server nobody serves exited 1 from a dry run, 2 from `judge` and the build,
    3 from `python -m sandbox`. Now each class of failure has one code (ExitCode,
    docs/architecture.md "Exit codes"): 3 for it from every command, in one line; a config
    mistake 2 from every command, dry run or not."""
    from pipeline.errors import ExitCode

    url = f"http://127.0.0.1:{_closed_port()}"
    token = tmp_path / "token"
    token.write_text("x\n")
    engine = ("--engine", "http", "--url", url, "--token-file", str(token))
    problems = tmp_path / "problems.parquet"
    problems.write_bytes(b"")  # never read: the engine is asked first
    dead = {
        "judge": ("judge", "--candidates", "c.parquet", "-p", "p.parquet", "-o", "j.parquet"),
        "check-references": ("check-references", "-p", str(problems), "-o", "refs"),
        "adversarial": ("adversarial", "-i", "i.parquet", "-p", "p.parquet", "-o", "adv"),
        "build-train --dry-run": ("build-train", "--dry-run"),
        "build-train": ("build-train",),
        "build-eval": ("build-eval",),
    }
    for name, args in dead.items():
        rc, lines, heavy = _aletheia(*args, *engine, cwd=REPO)
        assert rc == ExitCode.UNAVAILABLE, (name, rc, lines)
        if "--dry-run" not in args:  # a dry run prints its plan; the others one line
            assert len(lines) == 1 and lines[0].startswith("error: "), (name, lines)
            assert "no sandbox server answers" in lines[0] and url in lines[0], (name, lines)
            assert heavy == [] or name.startswith("build"), (name, heavy)
    (tmp_path / "r.jsonl").write_text(
        json.dumps(
            {"language": "python", "source": "print(1)", "tests": [{"input": "", "output": "1"}]}
        )
    )
    r = subprocess.run(
        [sys.executable, "-m", "sandbox", "judge", str(tmp_path / "r.jsonl"), "out.jsonl", *engine],
        check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert r.returncode == ExitCode.UNAVAILABLE, r.stderr

    typo = tmp_path / "typo.yaml"
    typo.write_text("name: x\njudge:\n  chunk_sise: 3\n")
    bad = {
        "build-train --dry-run": ("build-train", "--dry-run", "-c", str(typo)),
        "build-train": ("build-train", "-c", str(typo)),
        "sample": ("sample", "-c", str(typo), "-p", "p.parquet", "-o", "s"),
        "assemble": ("assemble", "-c", str(typo), "-j", "j", "-p", "p", "--splits", "s", "-o", "a"),
    }
    for name, args in bad.items():
        rc, lines, _ = _aletheia(*args, cwd=tmp_path)
        assert rc == ExitCode.BAD_INPUT, (name, rc, lines)
        assert any("judge.chunk_sise: unknown key" in line for line in lines), (name, lines)


def test_exit_code_by_class() -> None:
    """The class of each failure the commands meet, as `aletheia` exits with it."""
    from pipeline.errors import ExitCode, Unavailable, UserError, exit_code
    from pipeline.instances.tokens import TokenizerUnavailable
    from pipeline.judge.availability import JudgeUnavailable
    from pipeline.preflight import Report
    from pipeline.publish.checks import CheckResult, InvariantViolation
    from sandbox.engines import EngineUnavailable

    assert exit_code(UserError("a typo")) == ExitCode.BAD_INPUT
    assert exit_code(FileNotFoundError("x")) == ExitCode.BAD_INPUT
    for unavailable in (Unavailable, JudgeUnavailable, EngineUnavailable, TokenizerUnavailable):
        assert exit_code(unavailable("gone")) == ExitCode.UNAVAILABLE, unavailable
    broken = CheckResult(name="one correct", invariant="1", checked_rows=1, violations=["row 0"])
    assert exit_code(InvariantViolation([broken])) == ExitCode.RUN_FAILED
    assert exit_code(KeyError("a bug")) == ExitCode.RUN_FAILED

    from pipeline.common.stage import Finding
    from pipeline.config import RunConfig

    report = Report(RunConfig())
    assert report.exit_code == ExitCode.OK
    report.extend([Finding("judge", "no sandbox server answers", unavailable=True)])
    assert report.exit_code == ExitCode.UNAVAILABLE
    report.add("config", "judge.chunk_sise: unknown key")
    assert report.exit_code == ExitCode.BAD_INPUT  # the config mistake first
    try:
        report.raise_if_fatal()
    except UserError as e:
        assert exit_code(e) == ExitCode.BAD_INPUT and "[config]" in str(e)


def test_the_exit_codes_are_documented() -> None:
    """`aletheia --help` ends with them, and docs/architecture.md has a section of them."""
    from aletheia.cli import EXIT_CODES
    from pipeline.errors import ExitCode

    page = CliRunner().invoke(app, ["--help"], terminal_width=200).output
    assert " ".join(EXIT_CODES.split()) in " ".join(page.split())
    doc = (REPO / "docs" / "architecture.md").read_text()
    section = doc.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ExitCode:
        assert f"{int(code)} " in EXIT_CODES or f"{int(code)};" in EXIT_CODES, code
        assert f"| {int(code)} |" in section, code
