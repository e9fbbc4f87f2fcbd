"""`aletheia build-train --dry-run` and the flows' preflight: each late failure named in
issue 15 is caught in seconds, and user mistakes print one line. Real parts: the real
Docker engine, the real HF cache lookup (an empty cache dir), real sockets on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.config import load_run_config
from pipeline.errors import ExitCode
from pipeline.preflight import PreflightError, preflight, resolve_model

REPO = Path(__file__).resolve().parents[1]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "aletheia", *args],
        check=False,
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _demo(tmp_path: Path, **changes: Any) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    raw["out_dir"] = str(tmp_path / "out")
    for key, value in changes.items():
        raw[key] = value
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _fatal(path: Path) -> list[str]:
    report = preflight(load_run_config(path), docker=False)
    return [f"[{f.check}] {f.message}" for f in report.findings if f.fatal]


@pytest.fixture(autouse=True)
def _empty_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty HF cache and an offline Hub (here and in the CLI's processes): a Hub id not
    cached is reported, never looked up on the network."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)


def test_the_demo_config_passes_and_plans_what_the_readme_says(tmp_path: Path) -> None:
    report = preflight(load_run_config(_demo(tmp_path)), docker=False)
    assert report.ok, report.lines()
    assert report.sources[0].rows == 27 and report.problems() == 27
    assert report.tests() == 271  # README: 271 tests over the 27 bundled problems


def test_missing_repo_id_and_token_with_push(tmp_path: Path) -> None:
    fatal = _fatal(_demo(tmp_path, hub={"push": True}))
    assert any("hub.repo_id is None" in f for f in fatal), fatal
    assert any("HF_TOKEN is not set" in f for f in fatal), fatal


def test_wrong_dpo_model_path(tmp_path: Path) -> None:
    dpo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["dpo"]
    dpo["judges"][0]["model_path"] = str(tmp_path / "no-such-model")
    fatal = _fatal(_demo(tmp_path, dpo=dpo))
    assert len(fatal) == 1 and "dpo.judges.tiny-qwen2-verifier" in fatal[0], fatal


def test_the_evaluate_sections_model_must_exist_or_be_built(tmp_path: Path) -> None:
    """The demo evaluates the tiny model the build makes (no finding); a model path nothing
    builds is named before the build starts, not by transformers after publish."""
    evaluate = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["evaluate"]
    evaluate["model"] = str(tmp_path / "no-such-verifier")
    fatal = _fatal(_demo(tmp_path, evaluate=evaluate))
    assert len(fatal) == 1 and "evaluate.model" in fatal[0] and "no-such-verifier" in fatal[0]


def test_hub_id_not_in_the_local_cache_is_reported_not_fetched(tmp_path: Path) -> None:
    assert resolve_model("Qwen/Qwen3-8B") is None  # an empty cache, no network
    cached = Path(os.environ["HF_HUB_CACHE"]) / "models--acme--tiny" / "snapshots" / "abc"
    cached.mkdir(parents=True)
    (cached / "config.json").write_text("{}")
    (cached.parents[1] / "refs").mkdir()
    (cached.parents[1] / "refs" / "main").write_text("abc")
    assert resolve_model("acme/tiny") == "HF cache"


def test_missing_and_unparseable_sources(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    row = '{"source": "mine", "source_id": "x", "statement": "", "test_mode": "stdio", "tests": []}'
    bad.write_text(row + "\n")
    fatal = _fatal(_demo(tmp_path, sources=[f"jsonl:{tmp_path}/missing.jsonl", f"jsonl:{bad}"]))
    assert any("missing.jsonl" in f and "no file" in f for f in fatal), fatal
    assert any("bad.jsonl" in f and "none of the first 1 rows parse" in f for f in fatal), fatal


def test_vllm_environment_and_server(tmp_path: Path) -> None:
    with socket.socket() as s:  # a loopback port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sample = {
        "sources": [
            {
                "kind": "model",
                "name": "offline",
                "model": str(tmp_path),
                "tier": "weak",
                "backend": {"type": "vllm", "python": str(tmp_path / "venv-vllm/bin/python")},
            },
            {
                "kind": "model",
                "name": "served",
                "model": "served",
                "tier": "weak",
                "backend": {"type": "openai", "base_url": f"http://127.0.0.1:{port}/v1"},
            },
        ]
    }
    fatal = _fatal(_demo(tmp_path, sample=sample))
    assert any("sample.offline" in f and "venv-vllm/bin/python" in f for f in fatal), fatal
    assert any(
        "sample.served.backend.base_url" in f and "no model server answers" in f for f in fatal
    ), fatal


def test_dpo_judges_are_checked_like_policy_sources(tmp_path: Path) -> None:
    """Judges take the policy sources' backend options and get the same checks: a vLLM
    judge's interpreter, a judge server that does not answer, a missing local model.
    (vLLM itself is UNTESTED HERE: only its environment's path is checked.)"""
    with socket.socket() as s:  # a loopback port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dpo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["dpo"]
    dpo["judges"] = [
        {
            "name": "offline",
            "model": str(tmp_path / "no-weights"),
            "backend": {"type": "vllm", "python": str(tmp_path / "venv-vllm/bin/python")},
        },
        {
            "name": "served",
            "backend": {"type": "openai", "base_url": f"http://127.0.0.1:{port}/v1"},
        },
        {
            "name": "present",
            "model": str(tmp_path),
            "backend": {"type": "vllm", "python": sys.executable},
        },
    ]
    dpo["strong_judge"] = "present"
    report = preflight(load_run_config(_demo(tmp_path, dpo=dpo)), docker=False)
    fatal = [f.message for f in report.findings if f.fatal]
    notes = [f.message for f in report.findings if not f.fatal]
    assert any("dpo.judges.offline" in f and "venv-vllm/bin/python" in f for f in fatal), fatal
    assert any("dpo.judges.offline" in f and "no-weights" in f for f in fatal), fatal
    assert any(
        "dpo.judges.served.backend.base_url" in f and "no model server answers" in f for f in fatal
    ), fatal
    assert not any("dpo.judges.present" in f for f in fatal), fatal
    assert any("dpo.judges.present" in n and f"vLLM runs in {sys.executable}" in n for n in notes)
    shards = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["runner"]["dpo_shards"]
    assert any(
        "3 verifier model(s)" in line and f"{shards} shard(s)" in line for line in report.lines()
    )


@pytest.mark.docker
def test_docker_and_image_are_checked(tmp_path: Path) -> None:
    report = preflight(load_run_config(_demo(tmp_path, sandbox={"image": "aletheia-no-such:1"})))
    assert [f.check for f in report.findings if f.fatal] == ["judge"]
    with pytest.raises(PreflightError, match="sandbox image aletheia-no-such:1"):
        report.raise_if_fatal()


def test_dry_run_prints_the_plan_and_fails_on_a_problem(tmp_path: Path) -> None:
    ok = _cli("build-train", "--dry-run", "-c", str(_demo(tmp_path)), "--limit", "5")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "problems ~5, tests ~" in ok.stdout and "preflight: OK" in ok.stdout
    bad = _cli("build-train", "--dry-run", "-c", str(_demo(tmp_path, hub={"push": True})))
    assert bad.returncode == ExitCode.BAD_INPUT  # as the build without --dry-run exits
    assert "problem: [hub]" in bad.stdout and "preflight: FAILED" in bad.stdout


def test_a_config_typo_is_one_line_with_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("name: x\njudge:\n  chunk_sise: 3\n")
    start = time.monotonic()
    r = _cli("build-train", "-c", str(path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "judge.chunk_sise: unknown key; did you mean 'chunk_size'?" in lines[0]
    assert "Prefect" not in r.stdout + r.stderr  # no server started before the config is read
    assert time.monotonic() - start < 60
    debug = _cli("--debug", "build-train", "-c", str(path))
    assert "Traceback" in debug.stderr and debug.returncode != 0


def test_missing_config_file_is_one_line(tmp_path: Path) -> None:
    r = _cli("build-eval", "-c", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "nope.yaml not found" in r.stderr


def test_help_imports_no_heavy_library() -> None:
    code = (
        "import sys; from aletheia.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'transformers', 'matplotlib', 'datasketch', 'prefect')"
        " if m in sys.modules]\nprint('HEAVY', heavy)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "HEAVY []" in r.stdout, r.stdout + r.stderr
    assert "build-train" in r.stdout


def test_preflight_imports_no_library_it_does_not_use() -> None:
    """The dry run's budget is seconds: the graph's stage modules may load pyarrow and polars
    (their tables), never the model, plotting or statistics stacks (scipy alone cost 1-9 s
    through the card's position test, issue 28)."""
    code = (
        "import sys, pipeline.preflight\n"
        "print('HEAVY', [m for m in ('torch', 'transformers', 'trl', 'datasets', 'scipy', "
        "'matplotlib', 'datasketch', 'prefect', 'huggingface_hub', 'docker', 'sklearn') "
        "if m in sys.modules])"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "HEAVY []" in r.stdout, r.stdout + r.stderr


def test_limit_per_source_ingests_the_first_rows(tmp_path: Path) -> None:
    out = tmp_path / "problems.parquet"
    r = _cli("problems", "ingest", "-s", "bundled", "-o", str(out), "--limit", "4")
    assert r.returncode == 0, r.stdout + r.stderr
    import pyarrow.parquet as pq

    assert pq.read_table(out).num_rows == 4


def test_the_documented_problem_format_ingests(tmp_path: Path) -> None:
    """The two example rows of docs/problem-format.md ingest as they are written."""
    import json

    import pyarrow.parquet as pq

    doc = (REPO / "docs" / "problem-format.md").read_text()
    block = doc.split("```jsonl\n", 1)[1].split("```", 1)[0]
    rows = [json.loads(line) for line in block.splitlines() if line.strip()]
    src = tmp_path / "my-set.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "problems.parquet"
    r = _cli("problems", "ingest", "-s", f"jsonl:{src}", "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    table = pq.read_table(out).to_pylist()
    assert sorted(p["source_id"] for p in table) == ["double", "sum-two"]
    assert {p["test_mode"] for p in table} == {"stdio", "function"}


def test_limit_gives_its_own_build_id_everywhere(tmp_path: Path) -> None:
    from flows.cli import _prepare

    path = _demo(tmp_path)
    full = load_run_config(path)
    limited = _prepare(path, 3, dry_run=False)
    assert limited.ingest.limit_per_source == 3
    assert limited.build_id != full.build_id
    assert limited.assemble.build_id == limited.build_id


def test_a_prompt_template_with_wrong_placeholders_fails_preflight(tmp_path: Path) -> None:
    """Caught by the dry run in seconds, not by `assemble` minutes into the build."""
    template = tmp_path / "verifier.txt"
    template.write_text("Problem:\n{questoin}\n\n{candidates}\n\nAnswer with {{X}}.\n")
    system = tmp_path / "system.txt"
    system.write_text("Options: {valid_options}; style: {tone}\n")
    dpo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["dpo"]
    dpo.update(variants=["think", "instruct"], system_template=str(system))
    fatal = _fatal(_demo(tmp_path, prompt_template=str(template), dpo=dpo))
    assert fatal == [
        (
            f"[templates] prompt_template: {template}: unknown {{questoin}} (did you mean "
            "{question}?); missing {valid_options} (a user template has exactly {candidates}, "
            "{question}, {valid_options})"
        ),
        (
            f"[templates] dpo.system_template: {system}: unknown {{tone}} (a system template has "
            "exactly {valid_options})"
        ),
    ], fatal
    bad = _cli(
        "build-train", "--dry-run", "-c", str(_demo(tmp_path, prompt_template=str(template)))
    )
    assert bad.returncode == ExitCode.BAD_INPUT
    assert "problem: [templates] prompt_template:" in bad.stdout
    template.write_text("{question}\n{candidates}\nOne of {valid_options}; {{literal}}\n")
    assert _fatal(_demo(tmp_path, prompt_template=str(template))) == []


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once this returns


def _problem_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("problem: ")]


def test_dry_run_names_a_dead_http_judge_in_one_line(tmp_path: Path) -> None:
    """Issue 28: the dry run said `preflight: OK` for an http judge nobody serves; the build
    then sampled for minutes and failed in judge-shard-0. Now the server is asked for
    /v1/version with the token (a real closed port on 127.0.0.1), in one line."""
    url = f"http://127.0.0.1:{_closed_port()}"
    config = _demo(tmp_path, sandbox={"engine": "http", "url": url})
    started = time.monotonic()
    dead = _cli("build-train", "--dry-run", "-c", str(config), env={"ALETHEIA_SANDBOX_TOKEN": "x"})
    took = time.monotonic() - started
    assert dead.returncode == ExitCode.UNAVAILABLE, dead.stdout + dead.stderr
    [line] = _problem_lines(dead.stdout)
    assert line.startswith("problem: [judge] sandbox engine http: no sandbox server answers")
    assert url in line and "preflight: FAILED" in dead.stdout
    assert took < 60, took  # the check itself is a refused connection: milliseconds
    unauthenticated = _cli(
        "build-train", "--dry-run", "-c", str(config), env={"ALETHEIA_SANDBOX_TOKEN": ""}
    )
    [line] = _problem_lines(unauthenticated.stdout)
    assert "needs the servers' token" in line and "--token-file" in line, line
    assert unauthenticated.returncode == ExitCode.BAD_INPUT  # a config to fix, not a dead server


def test_dry_run_names_a_dead_docker_daemon_in_whole_words(tmp_path: Path) -> None:
    """A Docker engine that does not answer (DOCKER_HOST at a socket path where nothing
    listens): one line, naming the socket, never cut inside a word ("as root it starts d")."""
    sock = tmp_path / "no-docker.sock"
    dead = _cli(
        "build-train",
        "--dry-run",
        "-c",
        str(_demo(tmp_path)),
        env={"DOCKER_HOST": f"unix://{sock}"},
    )
    assert dead.returncode == ExitCode.UNAVAILABLE, dead.stdout + dead.stderr
    [line] = _problem_lines(dead.stdout)
    assert f"unix://{sock}" in line and "No such file or directory" in line, line
    assert line.endswith("(--engine process)"), line  # whole, to its last word


def test_the_process_engine_is_probed_not_started(tmp_path: Path) -> None:
    """engine: process: bwrap, cgroups and a throw-away sandbox, without a pool; this host
    runs all three languages, so nothing is fatal."""
    report = preflight(load_run_config(_demo(tmp_path, sandbox={"engine": "process"})))
    assert not [f for f in report.findings if f.fatal and f.check == "judge"], report.lines()


def test_plan_line_of_a_missing_local_source_is_not_a_hub_dataset(tmp_path: Path) -> None:
    config = _demo(tmp_path, sources=[f"jsonl:{tmp_path}/nothing-*.jsonl"])
    lines = preflight(load_run_config(config), docker=False).lines()
    [plan] = [line for line in lines if line.startswith("  source ")]
    assert "Hub dataset" not in plan and f"nothing at {tmp_path}/nothing-*.jsonl" in plan, plan


def test_a_missing_model_folder_is_not_sent_to_hf_download(tmp_path: Path) -> None:
    """`hf download` takes a Hub id: a missing folder gets the nearest path instead, and a
    Hub id missing from the cache gets its `hf download`."""
    (tmp_path / "models").mkdir()
    sample = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["sample"]
    sample["sources"][0]["model"] = str(tmp_path / "modles" / "nope-model")
    [line] = _fatal(_demo(tmp_path, sample=sample))
    assert "hf download" in line and f"hf download {tmp_path}" not in line, line
    assert "no model folder at" in line and "did you mean 'models'" in line, line
    sample["sources"][0]["model"] = "acme/nope-model"
    [line] = _fatal(_demo(tmp_path, sample=sample))
    assert "hf download acme/nope-model" in line, line


def test_a_process_engine_without_bwrap_is_one_fatal_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine: process on a host without bubblewrap (ALETHEIA_BWRAP at a missing file): the
    preflight says so in one line instead of the judge shard failing after sampling."""
    monkeypatch.setenv("ALETHEIA_BWRAP", str(tmp_path / "no-bwrap"))
    report = preflight(load_run_config(_demo(tmp_path, sandbox={"engine": "process"})))
    [line] = [f"[{f.check}] {f.message}" for f in report.findings if f.fatal]
    assert line.startswith("[judge] sandbox engine process: ") and "bubblewrap" in line, line
    assert "\n" not in line


@pytest.mark.skipif(os.geteuid() != 0, reason="hides the JVM with a bwrap mount: needs root")
def test_dry_run_names_a_sampled_language_the_engine_refuses(tmp_path: Path) -> None:
    """A host without Java (the JVM hidden by a tmpfs, as on a machine that never installed
    it) while the demo samples Java: the process engine would answer every Java candidate SE,
    so the dry run fails in one line naming the language."""
    from sandbox.process.hostroot import find_bwrap

    if not Path("/usr/lib/jvm").is_dir():
        pytest.skip("no JVM on this host to hide")
    config = _demo(tmp_path, sandbox={"engine": "process"})
    no_java = [str(find_bwrap()), "--dev-bind", "/", "/", "--tmpfs", "/usr/lib/jvm", "--"]
    dry = subprocess.run(
        [*no_java, sys.executable, "-m", "aletheia", "build-train", "--dry-run", "-c", str(config)],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert dry.returncode == ExitCode.UNAVAILABLE, dry.stdout + dry.stderr
    [line] = _problem_lines(dry.stdout)
    assert line.startswith("problem: [judge] sandbox engine process refuses java"), line
