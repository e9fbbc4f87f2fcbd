"""Nothing fails after work has started: every model server, tokenizer and benchmark file a
run names is checked before any work, in one line naming the config key (or option).

Real parts, on 127.0.0.1 only: a dead server is a closed loopback port; a live one is a tiny
HTTP server started here that answers `GET /v1/models` as vLLM does (a TEST DOUBLE of that
one endpoint: no vLLM or SGLang can run on these machines). A Hub that answers is the
project's Hub test double (tests/publish/hub_double.py); an unreachable one, HF_ENDPOINT at a
closed loopback port. The HF cache is real and empty; nothing is downloaded."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.common.stage import CheckContext
from pipeline.config import load_run_config
from pipeline.instances.config import AssembleConfig
from pipeline.instances.tokens import check_tokenizer, tokenizer_problem
from pipeline.model_refs import served_problem
from pipeline.preflight import evaluation_nodes, preflight
from pipeline.stages import GRAPH

REPO = Path(__file__).resolve().parents[1]
# A loaded 2-core machine: the seconds each case takes are bench/bench_fail_fast.py's to
# measure; a test only bounds them well below the minute a retry loop took.
SECONDS = 60


class ModelList:
    """A loopback HTTP server answering `GET /v1/models` with `models` (and 401 without
    `key` when one is set): the one endpoint the probe asks of a vLLM server. TEST DOUBLE."""

    def __init__(self, models: list[str], key: str | None = None) -> None:
        listed, wanted = models, key

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != "/v1/models":
                    body, status = b'{"detail": "Not Found"}', 404
                elif wanted and self.headers.get("authorization") != f"Bearer {wanted}":
                    body, status = b'{"error": "bad key"}', 401
                else:
                    data = [{"id": m, "object": "model"} for m in listed]
                    body, status = json.dumps({"object": "list", "data": data}).encode(), 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served() -> Iterator[ModelList]:
    server = ModelList(["acme/live"])
    yield server
    server.close()


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # nothing listens once closed


@pytest.fixture(autouse=True)
def _offline_empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "aletheia", *args],
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr, time.monotonic() - start


def _one_line(rc: int, out: str, err: str, took: float, code: int = 3) -> str:
    """The one `error:` line a refused command prints, well within a minute; exit code 3 (a
    server, model or tokenizer unavailable here) unless `code` says otherwise."""
    assert rc == code, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert took < SECONDS, took
    return lines[0]


def _demo(tmp_path: Path, **changes: Any) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    raw["out_dir"] = str(tmp_path / "out")
    raw.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _served_source(name: str, model: str, url: str) -> dict[str, Any]:
    return {
        "kind": "model",
        "name": name,
        "model": model,
        "tier": "weak",
        "backend": {"type": "openai", "base_url": url},
    }


# --- model servers ----------------------------------------------------------------------


def test_the_probe_says_what_a_server_serves_and_why_not(served: ModelList) -> None:
    assert served_problem(served.url, "acme/live") is None
    assert served_problem(served.url.removesuffix("/v1"), "acme/live") is None  # base w/o /v1
    assert served_problem(served.url, "acme/other") == (
        "the server serves 'acme/live', not 'acme/other'"
    )
    dead = served_problem(closed_url(), "acme/live")
    assert dead == "no model server answers (Connection refused)", dead
    no_list = served_problem(served.url.removesuffix("/v1") + "/elsewhere", "acme/live")
    assert no_list and "HTTP 404 without a model list" in no_list, no_list
    keyed = ModelList(["acme/live"], key="sk-test")
    try:
        assert "refuses the key (HTTP 401" in (served_problem(keyed.url, "acme/live") or "")
        assert served_problem(keyed.url, "acme/live", api_key="sk-test") is None
    finally:
        keyed.close()


def test_preflight_probes_every_model_endpoint_a_build_uses(
    tmp_path: Path, served: ModelList
) -> None:
    """Sampling pools, DPO judges and the evaluation backend: the live server serving the
    named model passes; a wrong name and dead servers are one line each, naming the key."""
    dead = closed_url()
    demo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    sample = {
        "sources": [
            _served_source("live", "acme/live", served.url),
            _served_source("renamed", "acme/other", served.url),
            {"kind": "reference", "tier": "weak"},
        ]
    }
    dpo = {**demo["dpo"], "judges": [{"name": "gone", "backend": {"type": "openai", "base_url": dead}}]}  # fmt: skip
    dpo.pop("strong_judge", None), dpo.pop("rejected_judges", None)
    evaluate = {**demo["evaluate"], "backend": {"type": "openai", "base_url": dead}}
    cfg = load_run_config(_demo(tmp_path, sample=sample, dpo=dpo, evaluate=evaluate))
    report = preflight(cfg, docker=False)
    servers = [f.message for f in report.findings if "base_url" in f.message]
    assert all(f.fatal for f in report.findings if "base_url" in f.message)
    assert sorted(m.split(" ", 1)[0] for m in servers) == [
        "dpo.judges.gone.backend.base_url",
        "evaluate.backend.base_url",
        "sample.renamed.backend.base_url",
    ], servers
    by_key = {m.split(" ", 1)[0]: m for m in servers}
    assert (
        f"{served.url}: the server serves 'acme/live', not 'acme/other'"
        in by_key["sample.renamed.backend.base_url"]
    )
    for key in ("dpo.judges.gone.backend.base_url", "evaluate.backend.base_url"):
        assert f"{dead}: no model server answers (Connection refused)" in by_key[key]
    assert all("\n" not in m for m in servers)


def test_evaluate_against_a_dead_server_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """The README's served-verifier line against a closed port printed nothing for 86 s,
    then a 64-line traceback, and left generations.partial.jsonl."""
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    dead = closed_url()
    out = tmp_path / "eval"
    line = _one_line(
        *_cli("evaluate", "--data", str(data), "--out", str(out), "--model", "acme/verifier",
              "--backend", dead, cwd=tmp_path)
    )  # fmt: skip
    assert line.startswith(f"error: --backend {dead}: no model server answers"), line
    assert "vllm serve acme/verifier" in line
    assert not out.exists()  # no report, no generations.partial.jsonl


def test_evaluate_names_the_model_a_live_server_does_not_serve(
    tmp_path: Path, served: ModelList
) -> None:
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    config = tmp_path / "eval.yaml"
    config.write_text(yaml.safe_dump({"backend": {"type": "openai", "base_url": served.url}}))
    line = _one_line(
        *_cli("evaluate", "--data", str(data), "--out", str(tmp_path / "eval"),
              "--stage-config", str(config), "--model", "acme/verifier", cwd=tmp_path)
    )  # fmt: skip
    assert f"{config}: backend.base_url {served.url}: the server serves 'acme/live'" in line
    assert not (tmp_path / "eval").exists()


def test_sample_and_dpo_against_a_dead_server_are_one_line(tmp_path: Path) -> None:
    """`aletheia sample` (a pool's served source) and `aletheia dpo` (a served judge): the
    server is asked before any problem or instance is read; nothing is written."""
    from pipeline.common.parquet import write_parquet
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table
    from tests.sampling.problems_fixture import sum_problem
    from tests.train.rowgen import write_dataset

    dead = closed_url()
    problems = tmp_path / "problems.parquet"
    write_parquet(models_to_table([sum_problem()], PROBLEM_SCHEMA), problems, PROBLEM_SCHEMA)
    pool = tmp_path / "pool.yaml"
    pool.write_text(yaml.safe_dump({"sources": [_served_source("served", "acme/coder", dead)]}))
    line = _one_line(
        *_cli("sample", "-p", str(problems), "-o", str(tmp_path / "sampled"), "--pool", str(pool),
              cwd=tmp_path)
    )  # fmt: skip
    assert line.startswith(f"error: sample.served.backend.base_url {dead}: no model server"), line
    assert not (tmp_path / "sampled").exists()

    data = write_dataset(tmp_path / "data")
    judges = {"judges": [{"name": "gone", "model": "acme/judge", "backend": {"type": "openai", "base_url": dead}}]}  # fmt: skip
    config = tmp_path / "dpo.yaml"
    config.write_text(yaml.safe_dump(judges))
    instances = next((data / "train").glob("*.parquet"))
    line = _one_line(
        *_cli("dpo", "-i", str(instances), "-o", str(tmp_path / "dpo"), "--stage-config", str(config),
              cwd=tmp_path)
    )  # fmt: skip
    assert line.startswith(f"error: dpo.judges.gone.backend.base_url {dead}: no model server")
    assert "vllm serve acme/judge" in line
    assert not (tmp_path / "dpo").exists()


# --- tokenizers and models by Hub id -------------------------------------------------------


def test_an_uncached_tokenizer_offline_is_one_line_in_the_dry_run(tmp_path: Path) -> None:
    """aletheia-full's `assemble.tokenizer` with `require_tokenizer: true`: fatal in the dry
    run; without `require_tokenizer`, a note (the caps are skipped); a local folder: fine."""
    need = AssembleConfig(tokenizer="acme/no-such-tokenizer", require_tokenizer=True)
    [finding] = check_tokenizer(need, CheckContext())
    assert finding.fatal and finding.message == (
        "assemble.tokenizer: 'acme/no-such-tokenizer' is not in the local HF cache, and "
        "HF_HUB_OFFLINE is set; download it first (hf download acme/no-such-tokenizer) or "
        "give a local folder"
    )
    [note] = check_tokenizer(need.model_copy(update={"require_tokenizer": False}), CheckContext())
    assert not note.fatal and "token caps skipped" in note.message
    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text("{}")
    assert check_tokenizer(need.model_copy(update={"tokenizer": str(folder)}), CheckContext()) == []
    assert check_tokenizer(need.model_copy(update={"max_candidate_tokens": None,
                                                   "max_prompt_tokens": None}), CheckContext()) == []  # fmt: skip
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())["assemble"]
    raw.update(tokenizer="acme/no-such-tokenizer", require_tokenizer=True)
    report = preflight(load_run_config(_demo(tmp_path, assemble=raw)), docker=False)
    assert [f.message for f in report.findings if f.fatal] == [finding.message]


def test_assemble_refuses_an_uncached_tokenizer_before_reading_a_table(tmp_path: Path) -> None:
    """`aletheia assemble` spent 50 s on 12 retry lines and a 140-line traceback: now one line,
    before its inputs (placeholder files here, which no reader could parse) are read."""
    for name in ("judged.parquet", "problems.parquet", "splits/assignments.parquet"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"not parquet")
    config = tmp_path / "assemble.yaml"
    config.write_text("tokenizer: acme/no-such-tokenizer\nrequire_tokenizer: true\n")
    line = _one_line(
        *_cli("assemble", "-j", "judged.parquet", "-p", "problems.parquet", "--splits",
              "splits", "-o", "instances", "--stage-config", str(config), cwd=tmp_path)
    )  # fmt: skip
    assert line.startswith("error: assemble.tokenizer: 'acme/no-such-tokenizer' is not in"), line
    assert "HF_HUB_OFFLINE is set" in line and "hf download acme/no-such-tokenizer" in line


def test_online_the_hub_is_asked_once_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Online, a Hub id not in the cache is asked of the Hub with one HEAD request: the Hub
    test double has the tokenizer (no finding) or not (HTTP 404); a Hub at a closed loopback
    port cannot be reached (one line, no retries)."""
    import huggingface_hub.constants as hc
    from huggingface_hub import HfApi

    from tests.publish.hub_double import HubDouble

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("HF_ENDPOINT", closed_url().removesuffix("/v1"))
    problem = tokenizer_problem("acme/tok")
    assert problem and "cannot be reached (Connection refused)" in problem, problem
    with HubDouble(token="hf_test") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        api = HfApi(endpoint=hub.endpoint, token="hf_test")
        api.create_repo("acme/tok")
        api.upload_file(path_or_fileobj=b"{}", path_in_repo="tokenizer_config.json",
                        repo_id="acme/tok")  # fmt: skip
        assert tokenizer_problem("acme/tok") is None
        missing = tokenizer_problem("acme/nothing")
        assert missing and f"the Hub at {hub.endpoint} has no tokenizer_config.json" in missing
        assert [m for m, _ in hub.state.requests if m == "HEAD"]  # asked, never downloaded
        assert not [p for m, p in hub.state.requests if m == "GET" and "/resolve/" in p]


# --- files a config names --------------------------------------------------------------------


def test_every_benchmark_file_is_checked_by_the_dry_run(tmp_path: Path) -> None:
    good = tmp_path / "humaneval.jsonl"
    good.write_text('{"prompt": "def f(x): return x"}\n')
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    benchmarks = [str(good), str(tmp_path / "livecodebench.jsonl"), str(broken),
                  f"mbpp:{tmp_path}/mbpp.jsonl"]  # fmt: skip
    cfg = load_run_config(_demo(tmp_path, splits={"benchmarks": benchmarks}))
    fatal = [f.message for f in preflight(cfg, docker=False).findings if f.fatal]
    missing = f"({tmp_path} has no 'livecodebench.jsonl')"
    not_json = "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    assert fatal == [
        f"splits.benchmarks[1]: no benchmark file at {tmp_path}/livecodebench.jsonl {missing}",
        f"splits.benchmarks[2]: {broken}: its first line is not JSON {not_json}",
        f"splits.benchmarks[3]: no benchmark file at {tmp_path}/mbpp.jsonl "
        + f"({tmp_path} has no 'mbpp.jsonl')",
    ], fatal


# --- a dry run checks what its command runs ---------------------------------------------------


def test_build_eval_checks_only_the_eval_graph(tmp_path: Path) -> None:
    """one-node.yaml's dry run of build-eval failed on a DPO judge the eval build never
    loads: the eval build's dry run checks and plans its own nodes; the train build's still
    names the judge."""
    demo = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    dpo = {**demo["dpo"], "judges": [{"name": "gone", "backend": {"type": "openai", "base_url": closed_url()}}]}  # fmt: skip
    dpo.pop("strong_judge", None), dpo.pop("rejected_judges", None)
    config = _demo(tmp_path, dpo=dpo)
    rc, out, err, _ = _cli("build-eval", "--dry-run", "-c", str(config), cwd=REPO)
    assert rc == 0 and out.rstrip().endswith("preflight: OK"), out + err
    cfg = load_run_config(config)
    planned = [x[9:].split(":")[0] for x in out.splitlines() if x.startswith("  stage  ")]
    eval_nodes = [n.name for n in GRAPH if n.name in evaluation_nodes() for _ in n.calls(cfg)]
    assert planned == eval_nodes and "adv" in planned and "dpo" not in planned, planned
    full = preflight(cfg, docker=False)
    assert any(f.fatal and f.message.startswith("dpo.judges.gone") for f in full.findings)


@pytest.mark.slow
def test_a_real_openai_compatible_server_lists_what_it_serves(tiny_model_dir: Path) -> None:
    """The probe against a real server (`transformers serve` on 127.0.0.1, from `.venv-serve`):
    the model it serves passes; another name is refused in one line naming what it serves,
    through the backend factory every stage opens its servers with."""
    from pipeline.model_refs import ModelUnavailable
    from pipeline.sampling.backends.factory import make_backend
    from pipeline.sampling.config import ModelSource
    from tests.sampling.serving import start_transformers_serve

    server = start_transformers_serve(tiny_model_dir)
    try:
        assert served_problem(server.base_url, str(tiny_model_dir)) is None
        source = ModelSource.model_validate(_served_source("served", "acme/other", server.base_url))
        with pytest.raises(ModelUnavailable) as e:
            make_backend(source)
    finally:
        server.stop()
    assert str(e.value).startswith(f"served: backend.base_url {server.base_url}: ")
    assert f"the server serves '{tiny_model_dir}', not 'acme/other'" in str(e.value)
