"""The runner's test store (stdlib only): a problem's tests, sent once per container, named by hash.

Each test's input and expected output live in sealed memfds held by the runner, not in files:
candidates run under the runner's uid, so any file in the container would be theirs to read,
chmod and rewrite, while the runner's descriptors are out of their reach (not inherited; the
runner is PID 1 and non-dumpable, so /proc/1/fd is closed to them). Seals forbid any write, so
a test's input can be given to a candidate as its stdin (a fresh read-only open) without a copy.
The contents stay out of the runner's heap: a forked child's maxrss (which the MLE check reads)
would otherwise include a store of hundreds of megabytes.

Least recently used test sets are dropped beyond a byte budget; a request naming a dropped set is
answered `missing_tests`, and the host sends it again.
"""

from __future__ import annotations

import fcntl
import os
from collections import OrderedDict
from dataclasses import dataclass

_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def _sealed(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
    return fd


@dataclass(frozen=True)
class StoredTest:
    input_fd: int
    input_size: int
    output_fd: int
    output_size: int
    code: str | None = None

    @property
    def input_path(self) -> str:
        """Opening this gives a new read-only description of the sealed input (for stdin)."""
        return f"/proc/self/fd/{self.input_fd}"

    def input(self) -> bytes:
        return os.pread(self.input_fd, self.input_size, 0) if self.input_size else b""

    def output(self) -> bytes:
        return os.pread(self.output_fd, self.output_size, 0) if self.output_size else b""

    def close(self) -> None:
        os.close(self.input_fd)
        os.close(self.output_fd)


def _encode(text: str | None) -> bytes:
    return (text or "").encode("utf-8", "surrogatepass")


def decode_tests(raw: list[dict]) -> list[StoredTest]:
    """Wire tests ({input, output} or {code}) -> sealed memfds (the caller owns and closes them)."""
    out = []
    for t in raw:
        inp, exp = _encode(t.get("input")), _encode(t.get("output"))
        out.append(
            StoredTest(_sealed("in", inp), len(inp), _sealed("out", exp), len(exp), t.get("code"))
        )
    return out


def read_tests(stream, sizes: list) -> list[StoredTest]:
    """A store request's raw test bytes, read from `stream` straight into sealed memfds.

    `sizes` holds [input bytes, output bytes, code bytes (-1: no code)] per test; the bytes
    follow the request's JSON line in that order. No JSON on this path: megabytes of tests are
    neither escaped by the host nor decoded into strings here. A short or malformed frame
    raises (the stream is then out of step: the runner exits and the pool replaces it)."""
    out: list[StoredTest] = []
    try:
        for entry in sizes:
            n_in, n_out, n_code = (int(x) for x in entry)
            if n_in < 0 or n_out < 0 or n_code < -1:
                raise ValueError(f"bad test sizes {entry!r}")
            inp, exp = _read_exact(stream, n_in), _read_exact(stream, n_out)
            code = (
                None if n_code < 0 else _read_exact(stream, n_code).decode("utf-8", "surrogatepass")
            )
            out.append(StoredTest(_sealed("in", inp), n_in, _sealed("out", exp), n_out, code))
    except BaseException:
        for t in out:
            t.close()
        raise
    return out


def _read_exact(stream, n: int) -> bytes:
    data = stream.read(n) if n else b""
    if len(data) != n:
        raise EOFError(f"store request ended after {len(data)} of {n} bytes")
    return data


class TestStore:
    __test__ = False  # not a pytest class

    def __init__(self, budget_bytes: int, max_sets: int = 256):
        self.budget = budget_bytes
        self.max_sets = max_sets  # each test holds two descriptors: bound them too
        self.used = 0
        self._sets: OrderedDict[str, tuple[list[StoredTest], int]] = OrderedDict()

    def put(self, digest: str, tests: list[StoredTest]) -> int:
        size = sum(t.input_size + t.output_size + len(t.code or "") for t in tests)
        self.drop(digest)
        self._sets[digest] = (tests, size)
        self.used += size
        while (self.used > self.budget or len(self._sets) > self.max_sets) and len(self._sets) > 1:
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
            for t in old[0]:
                t.close()

    def __len__(self) -> int:
        return len(self._sets)
