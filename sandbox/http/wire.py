"""The HTTP engine's batch format (protocol 1), shared by the server and the client.

POST /v1/judge, JSON body:
    {"use_cache": true,
     "tests": {TESTS_REF: [{"input": ..., "output": ...} | {"code": ...}, ...], ...},
     "requests": [{<JudgeRequest fields but tests>, "tests_ref": TESTS_REF}, ...]}
A batch names each test set by its content hash (`JudgeRequest.tests_ref`) and carries it once,
however many of its candidates it holds. The server keeps recent sets (LRU by bytes), so a client
may leave out a set the server already has; if the server has dropped it, it answers 409
{"missing_tests": [...]} and the client sends the batch again with those sets. The server checks
that each set hashes to its name (a set no request of the batch
proves is not kept). Whatever the body, a bad one is answered 400 with one line, never 500.

Answers: 200 {"results": [JudgeResult, ...], "stamp": ...} in request order; 400 bad batch;
401 bad token; 409 missing tests; 413 too large; 429 busy (Retry-After); 503 shutting down.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable

from sandbox.http.versions import PROTOCOL
from sandbox.models import JudgeRequest, TestCase

__all__ = ["PROTOCOL", "BadBatch", "TestSets", "decode_batch", "encode_batch"]
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BadBatch(ValueError):
    """A batch the server cannot judge; the message names the request and field."""


def encode_batch(
    requests: list[JudgeRequest], send_tests: Iterable[str], use_cache: bool = True
) -> bytes:
    """The body for `requests`, carrying the test sets named in `send_tests` (others by name)."""
    wanted = set(send_tests)
    tests: dict[str, list[dict]] = {}
    reqs = []
    for r in requests:
        ref = r.tests_ref
        if ref in wanted and ref not in tests:
            tests[ref] = [t.model_dump(exclude_defaults=True) for t in r.tests]
        d = r.model_dump(mode="json", exclude={"tests"})
        d["tests_ref"] = ref
        reqs.append(d)
    body = {"protocol": PROTOCOL, "use_cache": use_cache, "tests": tests, "requests": reqs}
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")


def test_set_bytes(tests: list[TestCase]) -> int:
    return sum(len(t.input) + len(t.output) + len(t.code or "") for t in tests)


class TestSets:
    """Recently received test sets, by hash, up to a byte budget (least recently used dropped)."""

    __test__ = False

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.used = 0
        self._sets: OrderedDict[str, tuple[list[TestCase], int]] = OrderedDict()
        self._lock = threading.Lock()  # batches are decoded in worker threads, several at once

    def get(self, ref: str) -> list[TestCase] | None:
        with self._lock:
            hit = self._sets.get(ref)
            if hit is None:
                return None
            self._sets.move_to_end(ref)
            return hit[0]

    def put(self, ref: str, tests: list[TestCase]) -> None:
        size = test_set_bytes(tests)
        with self._lock:
            if ref in self._sets:
                self._sets.move_to_end(ref)
                return
            self._sets[ref] = (tests, size)
            self.used += size
            while self.used > self.budget and len(self._sets) > 1:
                _, (_, dropped) = self._sets.popitem(last=False)
                self.used -= dropped

    def __len__(self) -> int:
        return len(self._sets)


def _load_json(body: bytes) -> object:
    """The body as JSON; any way it is not (bad UTF-8, bad syntax, nesting too deep for the
    decoder, an integer too long to convert) is a BadBatch, never an exception of the server."""
    try:
        return json.loads(body)
    except RecursionError as exc:
        raise BadBatch("the body is nested too deeply to be a batch") from exc
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise BadBatch(f"the body is not JSON: {' '.join(str(exc).split())[:200]}") from exc


def decode_batch(body: bytes, sets: TestSets) -> tuple[list[JudgeRequest], bool, list[str]]:
    """(requests, use_cache, missing test-set names). Raises BadBatch with a one-line reason.

    A test set that arrives with the batch is kept for later batches only once a request of
    this batch has shown that it hashes to its name (so no client can plant tests under
    another set's name)."""
    data = _load_json(body)
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        raise BadBatch('the body must be an object with a "requests" list')
    if data.get("protocol", PROTOCOL) != PROTOCOL:
        raise BadBatch(
            f"protocol {data.get('protocol')!r:.40} is not {PROTOCOL}: update the client"
        )
    use_cache = data.get("use_cache", True)
    if not isinstance(use_cache, bool):
        raise BadBatch('"use_cache" must be true or false')
    given = data.get("tests") or {}
    if not isinstance(given, dict):
        raise BadBatch('"tests" must map test-set hashes to lists of tests')
    fresh: dict[str, list[TestCase]] = {}
    for ref, raw in given.items():
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            raise BadBatch(f"test set {ref[:12]!r}: a list of test objects, each a JSON object")
        try:
            tests = [TestCase(**t) for t in raw]
        except (TypeError, ValueError) as exc:
            raise BadBatch(f"test set {ref[:12]!r}: {exc}".splitlines()[0]) from exc
        fresh[ref] = tests
    requests, missing, verified = [], [], set()
    for i, raw in enumerate(data["requests"]):
        if not isinstance(raw, dict):
            raise BadBatch(f"request {i} is not an object")
        ref = raw.pop("tests_ref", None)
        if ref is not None and not (isinstance(ref, str) and _SHA256.fullmatch(ref)):
            raise BadBatch(f"request {i}: tests_ref must be a test set's sha256 (64 hex digits)")
        tests = fresh.get(ref) if ref in fresh else sets.get(ref) if ref else None
        if tests is None:
            if ref:
                missing.append(ref)
                continue
            raise BadBatch(f"request {i} names no tests_ref")
        try:
            req = JudgeRequest.model_validate({**raw, "tests": tests})
        except ValueError as exc:
            first = str(exc).splitlines()
            raise BadBatch(f"request {i}: {' '.join(first[:3])}") from exc
        if req.tests_ref != ref:
            raise BadBatch(f"request {i}: its tests do not hash to tests_ref {ref[:12]}")
        verified.add(ref)
        requests.append(req)
    for ref in verified & fresh.keys():
        sets.put(ref, fresh[ref])
    return requests, use_cache, sorted(set(missing))
