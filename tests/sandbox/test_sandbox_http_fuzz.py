"""POST /v1/judge against bad bodies, on a real `python -m sandbox serve` on 127.0.0.1: deep
nesting, huge numbers, a wrong type at every level of a valid batch, truncated bodies, invalid
UTF-8, bodies sent slowly, bodies that stop arriving or whose client hangs up, broken HTTP
framing. Every bad body gets a 4xx with one line (never a 5xx, never a hang, never a traceback
in the server's log), and the server judges a good batch afterwards. The mutations are drawn
from a fixed seed, so a failure replays."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serve_here import TOKEN, Server

from sandbox import JudgeRequest, TestCase
from sandbox.http.wire import encode_batch

pytestmark = pytest.mark.process
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
BODY_IDLE_S = 3  # the server's --body-timeout-s: a body with no byte for this long is a 408
GOOD = JudgeRequest(
    language="python",
    source="a, b = map(int, input().split())\nprint(a + b)\n",
    tests=[TestCase(input="1 2\n", output="3\n")],
    compare={"mode": "float", "abs_tol": 1e-6},
)
# A value of each JSON type, and the awkward ones: huge and non-finite numbers, a lone surrogate.
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    10**400,
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x" * 10_000,
    "\ud800",
    [],
    [[[]]],
    {},
    {"tests_ref": None},
]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    # cached verdicts: mutants that stay valid cost nothing
    s = Server("--body-timeout-s", str(BODY_IDLE_S), pool_size=1, cache=True)
    yield s
    log = s.log.read_text()
    s.stop()
    assert "Traceback" not in log and "Exception in ASGI" not in log, log[-3000:]


def _good_body() -> dict[str, Any]:
    return json.loads(encode_batch([GOOD], {GOOD.tests_ref}))


def _paths(value: Any, at: tuple = ()) -> Iterator[tuple]:
    """Every place in a JSON value: the value itself, each key's, each item's."""
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


def _replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    out = list(value)
    out[head] = _replaced(out[head], rest, new)
    return out


def _post(server: Server, body: bytes | Iterator[bytes], timeout: float = 60) -> httpx.Response:
    return httpx.post(server.url + "/v1/judge", content=body, headers=AUTH, timeout=timeout)


def _assert_refused(resp: httpx.Response, what: str) -> None:
    assert 400 <= resp.status_code < 500, f"{what}: HTTP {resp.status_code} {resp.text[:300]}"
    error = resp.json().get("error") or resp.json().get("missing_tests")
    assert error, f"{what}: no reason given ({resp.text[:200]})"
    assert "\n" not in str(error), f"{what}: {error!r}"


def _assert_judges(server: Server) -> None:
    resp = _post(server, encode_batch([GOOD], {GOOD.tests_ref}))
    assert resp.status_code == 200, resp.text[:500]
    assert [r["verdict"] for r in resp.json()["results"]] == ["AC"]


def test_deep_nesting_and_huge_numbers_are_refused(server: Server) -> None:
    bodies = {
        "[ x 100,000": b"[" * 100_000,
        "closed [ x 100,000": b"[" * 100_000 + b"]" * 100_000,
        '{"requests": [ x 100,000': b'{"requests":' + b"[" * 100_000,
        "nested objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "a 100,000-digit integer": b'{"requests": [], "protocol": ' + b"9" * 100_000 + b"}",
        "a 100,000-digit tests_ref": b'{"requests": [{"tests_ref": ' + b"7" * 100_000 + b"}]}",
        "1e999999": b'{"requests": [], "use_cache": 1e999999}',
    }
    for what, body in bodies.items():
        _assert_refused(_post(server, body), what)
    _assert_judges(server)


def test_a_wrong_type_at_every_level(server: Server) -> None:
    """Each place of a valid batch in turn gets each odd value; a mutant that is still a valid
    batch (a number where a bool is read) may be judged, any other is refused; none is a 5xx."""
    good = _good_body()
    rng = random.Random(28)
    tried = refused = 0
    for path in list(_paths(good)):
        for new in rng.sample(ODD_VALUES, 6):
            body = json.dumps(_replaced(good, path, new)).encode()  # ascii: \\ud800 escaped
            resp = _post(server, body)
            tried += 1
            if resp.status_code != 200:
                _assert_refused(resp, f"{path} = {str(new)[:40]}")
                refused += 1
    assert tried > 100 and refused > tried // 2, (tried, refused)
    _assert_judges(server)


def test_truncated_and_invalid_utf8_bodies(server: Server) -> None:
    body = encode_batch([GOOD], {GOOD.tests_ref})
    rng = random.Random(7)
    for cut in sorted({0, 1, len(body) - 1, *rng.sample(range(2, len(body) - 1), 40)}):
        _assert_refused(_post(server, body[:cut]), f"cut at {cut}")
    # (An encoded surrogate, b"\xed\xa0\x80", is read on purpose: the client sends a program's
    # undecodable bytes that way, and the program gets its verdict.)
    for bad in (b"\xff", b"\xc3\x28", b"\xf8\x88\x80\x80\x80", b"\x00"):
        at = body.index(b"print")
        _assert_refused(_post(server, body[:at] + bad + body[at:]), f"{bad!r} in the source")
    _assert_judges(server)


def test_slow_bodies_do_not_stall_the_server(server: Server) -> None:
    """A client trickling a bad body over ~3 s: meanwhile another client is answered; the slow
    one gets its 4xx at the end. Then a good body sent slowly is judged."""

    def trickle(body: bytes, pause_s: float) -> Iterator[bytes]:
        for i in range(0, len(body), max(1, len(body) // 12)):
            time.sleep(pause_s)
            yield body[i : i + max(1, len(body) // 12)]

    out: dict[str, httpx.Response] = {}
    slow = threading.Thread(
        target=lambda: out.update(slow=_post(server, trickle(b"[" * 50_000, 0.25)))
    )
    slow.start()
    time.sleep(0.5)
    started = time.monotonic()
    _assert_judges(server)
    assert time.monotonic() - started < 10  # not queued behind the slow body
    slow.join(timeout=60)
    _assert_refused(out["slow"], "a slow deep body")
    good = encode_batch([GOOD], {GOOD.tests_ref})
    resp = _post(server, trickle(good, 0.1))
    assert resp.status_code == 200 and resp.json()["results"][0]["verdict"] == "AC"


def test_a_planted_test_set_is_not_kept(server: Server) -> None:
    """Tests sent under another set's name, with no request proving them, are not stored: a
    later batch naming that set is asked for it (409) instead of judged on the planted tests."""
    other = JudgeRequest(language="python", source="print(5)", tests=[TestCase(output="5\n")])
    ref = other.tests_ref
    planted = {"requests": [], "tests": {ref: [{"input": "", "output": "6\n"}]}}
    assert _post(server, json.dumps(planted).encode()).status_code == 200
    resp = _post(server, encode_batch([other], set()))
    assert resp.status_code == 409 and resp.json()["missing_tests"] == [ref]


def _raw(server: Server, head: bytes, body: bytes, *, hang_up: bool = False) -> bytes:
    """Send a request byte for byte on a socket (what httpx never sends: a body shorter than
    its Content-Length, broken chunks); the status line answered, or b"" after hanging up."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=BODY_IDLE_S + 30) as c:
        c.sendall(
            b"POST /v1/judge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\n"
            + head
            + b"\r\n"
            + body
        )
        if hang_up:
            return b""
        answer = b""
        while b"\r\n" not in answer:
            got = c.recv(4096)
            if not got:
                break
            answer += got
        return answer.split(b"\r\n")[0]


def test_a_body_that_stops_arriving_is_answered_408(server: Server) -> None:
    """Headers promise 1,000 bytes (or chunks), 14 come, the client waits: after the idle limit
    the server answers 408 and closes; meanwhile it answers others."""
    good = encode_batch([GOOD], {GOOD.tests_ref})
    stalled = {
        "content-length": (b"Content-Length: %d\r\n" % len(good), good[:14]),
        "chunked": (b"Transfer-Encoding: chunked\r\n", b"e\r\n" + good[:14] + b"\r\n"),
    }
    for what, (head, part) in stalled.items():
        out: dict[str, bytes] = {}
        started = time.monotonic()
        waiter = threading.Thread(
            target=lambda h=head, p=part, o=out: o.update(s=_raw(server, h, p))
        )
        waiter.start()
        time.sleep(0.5)
        _assert_judges(server)  # the stalled body holds no one up
        waiter.join(timeout=BODY_IDLE_S + 60)
        took = time.monotonic() - started
        assert out["s"].startswith(b"HTTP/1.1 408"), (what, out)
        assert BODY_IDLE_S - 0.5 <= took < BODY_IDLE_S + 30, (what, took)
    _assert_judges(server)


def test_hang_ups_and_broken_framing_leave_the_server_answering(server: Server) -> None:
    """A client that closes mid-body gets no answer and costs the server one warning line
    (the module's check: no traceback in its log); a Content-Length that is not a number and
    a chunk size that is not hex are 400s before the app sees them."""
    good = encode_batch([GOOD], {GOOD.tests_ref})
    for cut in (0, 1, len(good) // 2, len(good) - 1):
        _raw(server, b"Content-Length: %d\r\n" % len(good), good[:cut], hang_up=True)
    _raw(server, b"Transfer-Encoding: chunked\r\n", b"5\r\n[[[[[", hang_up=True)
    time.sleep(0.5)  # the server notices the closed sockets
    for head, body in (
        (b"Content-Length: abc\r\n", b"{}"),
        (b"Content-Length: -5\r\n", b"{}"),
        (b"Transfer-Encoding: chunked\r\n", b"zz\r\n[]\r\n0\r\n\r\n"),
    ):
        status = _raw(server, head, body)
        assert status.startswith(b"HTTP/1.1 400"), (head, body, status)
    _assert_judges(server)
    assert server.health()["ok"] is True
    log = server.log.read_text()
    assert log.count("before its end") >= 4 and "Traceback" not in log, log[-3000:]
