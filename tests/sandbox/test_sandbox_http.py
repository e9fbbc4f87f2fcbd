"""The HTTP engine over loopback, with two real processes: `python -m sandbox serve` (the process
engine behind it) and this test's client. Verdicts as the fronted engine gives them; the token and
the size limits; overload answered "busy" with nothing lost; a server killed mid-batch (the
client goes to another one, or fails in one line); a graceful shutdown that finishes its batch.
Servers listen on 127.0.0.1 only."""

from __future__ import annotations

import signal
import socket
import threading
import time
import uuid

import httpx
import pytest
from sandbox_programs import ADD_TESTS, PROGRAMS
from serve_here import TOKEN, Server

from sandbox import JudgeRequest, TestCase
from sandbox.engines import EngineUnavailable, JudgeEngine, open_engine
from sandbox.pool import SandboxError

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def server():
    s = Server(pool_size=2)
    yield s
    s.stop()


def _slow(n: int, sleep_s: float) -> tuple[list[JudgeRequest], list[str]]:
    nonce = uuid.uuid4().hex
    reqs, want = [], []
    for i in range(n):
        wrong = i % 3 == 2
        src = (
            f"import time\ntime.sleep({sleep_s})\na, b = map(int, input().split())\n"
            f"print(a + b{' + 1' if wrong else ''})  # {nonce} {i}\n"
        )
        reqs.append(
            JudgeRequest(
                language="python",
                source=src,
                tests=[TestCase(input=f"{i} 1\n", output=f"{i + 1}\n")],
                time_limit_s=2,
            )
        )
        want.append("WA" if wrong else "AC")
    return reqs, want


def test_http_gives_the_fronted_engines_verdicts(server, process_engine):
    reqs = [
        JudgeRequest(
            language=lang,
            source=PROGRAMS[lang][v],
            tests=ADD_TESTS,
            time_limit_s=1.0,
            output_limit_mb=4,
        )
        for lang in ("python", "cpp")
        for v in ("AC", "WA", "TLE", "RE", "CE", "OLE")
    ]
    with open_engine("http", url=server.url, token=TOKEN, batch_size=4) as http:
        assert isinstance(http, JudgeEngine)
        assert http.stamp == process_engine.stamp  # the same engine, so the same cache entries
        remote = http.judge(reqs, use_cache=False)
    local = process_engine.judge(reqs, use_cache=False)
    assert [r.verdict for r in remote] == [r.verdict for r in local]
    assert [[t.verdict for t in r.tests] for r in remote] == [
        [t.verdict for t in r.tests] for r in local
    ]
    assert [r.verdict for r in remote][:6] == ["AC", "WA", "TLE", "RE", "CE", "OLE"]


def test_http_sends_each_test_set_once(server):
    """A problem's tests travel once per server: later batches name them by hash only."""
    tests = [TestCase(input=f"{i} {i}\n" + "x" * 2000, output=f"{2 * i}\n") for i in range(20)]
    src = "a, b = map(int, input().split()[:2])\nprint(a + b)  # {}\n"
    reqs = [JudgeRequest(language="python", source=src.format(k), tests=tests) for k in range(6)]
    with open_engine("http", url=server.url, token=TOKEN, batch_size=2, parallel=1) as http:
        sent: list[int] = []
        original = http._http.post

        def counting_post(url, content, **kw):
            sent.append(len(content))
            return original(url, content=content, **kw)

        http._http.post = counting_post
        results = http.judge(reqs, use_cache=False)
    assert [r.verdict for r in results] == ["AC"] * 6
    assert len(sent) == 3 and sent[0] > 40_000 and sent[1] < 5_000 and sent[2] < 5_000


def test_http_token_and_health(server):
    assert httpx.get(server.url + "/v1/health", timeout=5).json()["ok"] is True
    assert httpx.post(server.url + "/v1/judge", content=b"{}", timeout=5).status_code == 401
    with pytest.raises(EngineUnavailable) as err:
        open_engine("http", url=server.url, token="wrong")
    assert "token was refused" in str(err.value) and "\n" not in str(err.value)


def test_http_size_limits():
    s = Server("--max-body-mb", "1", "--max-batch", "4")
    try:
        big = JudgeRequest(
            language="python", source="print(1)", tests=[TestCase(input="x" * (2 << 20))]
        )
        with open_engine("http", url=s.url, token=TOKEN, batch_size=16) as http:
            assert http.batch_size == 4  # the client keeps to the server's batch limit
            with pytest.raises(SandboxError) as err:
                http.judge([big])
            assert "too large" in str(err.value) and "\n" not in str(err.value)
            small = [
                JudgeRequest(
                    language="python", source=f"print({i})", tests=[TestCase(output=str(i))]
                )
                for i in range(10)
            ]
            assert [r.verdict for r in http.judge(small, use_cache=False)] == ["AC"] * 10
        raw = httpx.post(
            s.url + "/v1/judge",
            content=b"x" * (2 << 20),
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert raw.status_code == 413
    finally:
        s.stop()


def test_http_overload_answers_busy_and_loses_nothing():
    """A server admitting 2 requests at a time, one slot; a client pushing 6 batches at once.
    The server answers "busy" rather than queueing; the client backs off; every request gets
    its verdict, once."""
    s = Server("--max-queue", "2")
    try:
        reqs, want = _slow(12, 0.3)
        with open_engine("http", url=s.url, token=TOKEN, batch_size=1, parallel=6) as http:
            results = http.judge(reqs, use_cache=False)
        assert [r.verdict for r in results] == want
        health = s.health()
        assert health["refused_busy"] > 0 and health["judged"] == 12
        assert health["pending"] == 0
    finally:
        s.stop()


def test_http_server_killed_mid_batch_goes_to_another():
    a, b = Server(), Server()
    try:
        reqs, want = _slow(10, 0.4)
        out: dict = {}
        with open_engine("http", url=[a.url, b.url], token=TOKEN, batch_size=2, parallel=2) as http:
            t = threading.Thread(target=lambda: out.update(r=http.judge(reqs, use_cache=False)))
            t.start()
            time.sleep(1.5)
            a.proc.kill()  # no drain: connections reset mid-batch
            t.join(timeout=240)
        assert [r.verdict for r in out["r"]] == want
        assert b.health()["judged"] > 0
    finally:
        a.stop()
        b.stop()


def test_http_lone_server_killed_fails_in_one_line():
    s = Server()
    try:
        reqs, _ = _slow(6, 0.5)
        errors: list[BaseException] = []

        def judge():
            try:
                with open_engine("http", url=s.url, token=TOKEN, batch_size=2) as http:
                    http.judge(reqs, use_cache=False)
            except SandboxError as exc:
                errors.append(exc)

        t = threading.Thread(target=judge)
        t.start()
        time.sleep(1.5)
        s.proc.kill()
        t.join(timeout=120)
        assert errors, "the client did not fail after its only server died"
        message = str(errors[0])
        assert "\n" not in message and s.url in message and "no other server" in message
    finally:
        s.stop()


def test_http_graceful_shutdown_finishes_the_admitted_batch():
    s = Server()
    reqs, want = _slow(4, 0.5)
    out: dict = {}
    with open_engine("http", url=s.url, token=TOKEN, batch_size=4) as http:
        t = threading.Thread(target=lambda: out.update(r=http.judge(reqs, use_cache=False)))
        t.start()
        deadline = time.monotonic() + 60
        while s.health()["pending"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the batch is admitted and running
        s.proc.send_signal(signal.SIGTERM)
        t.join(timeout=120)
    log = s.log.read_text()
    assert [r.verdict for r in out["r"]] == want
    # uvicorn re-raises the signal once it has shut down cleanly: exit status -SIGTERM
    assert s.proc.wait(timeout=60) in (0, -signal.SIGTERM)
    assert "draining, 4 request(s) pending" in log
    s.stop()


@pytest.mark.docker
def test_http_never_mixes_engines_after_a_restart():
    """A server restarted with another engine on the same address (docker instead of process):
    the client notices the stamp on the answer and stops, in one line, rather than mixing
    verdicts of two engines under one stamp."""
    s = Server()
    port = s.port
    try:
        with open_engine("http", url=s.url, token=TOKEN) as http:
            ok = JudgeRequest(language="python", source="print(3)", tests=[TestCase(output="3")])
            assert http.judge([ok], use_cache=False)[0].verdict == "AC"
            s.stop()
            s = Server(port=port, engine="docker")
            with pytest.raises(EngineUnavailable) as err:
                http.judge([ok], use_cache=False)
        assert "another engine" in str(err.value) and "\n" not in str(err.value)
    finally:
        s.stop()


def test_http_probe_reaches_every_server_with_the_token(server):
    """What the build's preflight and every judging command ask first: /v1/version of each
    server with the token, in well under a second; a dead server beside a live one is a note;
    no live server, or a refused token, is EngineUnavailable in one line (never a SandboxError,
    which the flows would retry)."""
    from sandbox.engines import probe_engine

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    started = time.monotonic()
    probe = probe_engine("http", url=server.url, token=TOKEN)
    assert time.monotonic() - started < 5
    assert probe.engine == "http" and probe.unavailable == {} and probe.notes == []
    both = probe_engine("http", url=[dead, server.url], token=TOKEN)
    assert len(both.notes) == 1 and dead in both.notes[0]
    for kwargs, words in (
        ({"url": server.url, "token": "wrong"}, "token was refused"),
        ({"url": dead, "token": TOKEN}, "no sandbox server answers"),
    ):
        for reach in (probe_engine, open_engine):
            with pytest.raises(EngineUnavailable) as err:
                reach("http", **kwargs)
            assert words in str(err.value) and "\n" not in str(err.value)
            assert not isinstance(err.value, SandboxError)
