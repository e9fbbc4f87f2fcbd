"""The runner's test store (stdlib only): a problem's tests, sent once per container, named by hash.

Held in the runner's own memory, not in files: candidates run under the runner's uid, so any
file in the container is theirs to read, chmod and rewrite, while the runner (PID 1,
non-dumpable) is the one place they cannot reach. Expected outputs therefore never exist on
disk while a candidate runs, and a candidate cannot alter a stored test or read another
problem's tests. Each test's input is written to a per-test stdin file, as for inline tests.
Least recently used test sets are dropped beyond a byte budget; a request naming a dropped set
is answered `missing_tests`, and the host sends it again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class StoredTest:
    input: bytes
    output: bytes
    code: str | None = None


def _encode(text: str | None) -> bytes:
    return (text or "").encode("utf-8", "surrogatepass")


def decode_tests(raw: list[dict]) -> list[StoredTest]:
    """Wire tests ({input, output} or {code}) -> encoded once, compared as bytes."""
    return [
        StoredTest(_encode(t.get("input")), _encode(t.get("output")), t.get("code")) for t in raw
    ]


class TestStore:
    __test__ = False  # not a pytest class

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.used = 0
        self._sets: OrderedDict[str, tuple[list[StoredTest], int]] = OrderedDict()

    def put(self, digest: str, tests: list[StoredTest]) -> int:
        size = sum(len(t.input) + len(t.output) + len(t.code or "") for t in tests)
        self.drop(digest)
        self._sets[digest] = (tests, size)
        self.used += size
        while self.used > self.budget and len(self._sets) > 1:
            self.drop(next(iter(self._sets)))
        return size

    def get(self, digest: str) -> list[StoredTest] | None:
        hit = self._sets.get(digest)
        if hit is None:
            return None
        self._sets.move_to_end(digest)
        return hit[0]

    def drop(self, digest: str) -> None:
        old = self._sets.pop(digest, None)
        if old is not None:
            self.used -= old[1]

    def __len__(self) -> int:
        return len(self._sets)
