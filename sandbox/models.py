"""The sandbox's request / result contract (pydantic)."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sandbox.runner.languages import load as load_languages

# The languages the runner judges, one module each (sandbox/runner/languages/): a language
# added there is accepted here with no other edit.
LANGUAGES: tuple[str, ...] = tuple(load_languages())
Language = Literal[LANGUAGES]  # type: ignore[valid-type]
Mode = Literal["stdio", "function"]
CompareMode = Literal["tokens", "exact", "float", "checker", "testlib"]
Verdict = Literal["AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "SE"]
VERDICTS: tuple[str, ...] = ("AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "SE")

MAX_MEMORY_LIMIT_MB = (
    1024  # per test; the pool's containers get this plus room for tmpfs and the runner
)


class TestCase(BaseModel):
    """stdio: `input` -> expected `output`; function mode: `code` run after the candidate."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(frozen=True)

    input: str = ""
    output: str = ""
    code: str | None = None

    @field_validator("input", "output", mode="before")
    @classmethod
    def _null_is_empty(cls, v: object) -> object:
        return "" if v is None else v  # Parquet list<struct> rows carry nulls for absent fields

    @cached_property
    def digest(self) -> str:
        """Content hash, computed once per object: a problem's TestCase objects are shared by all
        its candidates' requests, so megabytes of tests are hashed once, not once per candidate."""
        h = hashlib.sha256()
        for part in (self.input, self.output, self.code):
            blob = b"\xff" if part is None else part.encode("utf-8", "surrogatepass")
            h.update(len(blob).to_bytes(8, "little") + blob)
        return h.hexdigest()


class CompareSpec(BaseModel):
    """How a test's stdout is compared with its expected output.

    tokens  whitespace-insensitive (CRLF, trailing spaces, blank lines ok; a prefix never passes)
    exact   byte-identical
    float   token-wise; numbers match within abs_tol or rel_tol (both default 1e-6 when neither is set)
    checker `checker` is the Python source of a program run as
            `python3 checker.py INPUT_FILE EXPECTED_FILE ACTUAL_FILE` inside the sandbox:
            exit 0 = accept (AC), exit 1 = reject (WA), anything else = checker failure (SE).
    testlib `checker` is the C++ source of a checker written to testlib's conventions, compiled
            once per container against the image's pinned testlib.h and run as
            `checker INPUT_FILE OUTPUT_FILE ANSWER_FILE`: exit 0 = AC, 1 (wrong answer) and
            2 (presentation error) = WA, 7 = points (AC only at full score, `points 1`),
            3 (the checker failed) or anything else = SE. A checker that cannot be built (no
            testlib.h in the image, a compile error) gives SE with `JudgeResult.checker_error`.
    """

    model_config = ConfigDict(frozen=True)

    mode: CompareMode = "tokens"
    abs_tol: float | None = None
    rel_tol: float | None = None
    checker: str | None = None

    @model_validator(mode="after")
    def _checker_needs_source(self) -> CompareSpec:
        if self.mode in ("checker", "testlib") and not self.checker:
            raise ValueError(
                f"compare mode {self.mode!r} needs `checker` (the checker program's source)"
            )
        return self


class JudgeRequest(BaseModel):
    """One candidate program with all of its tests and limits."""

    model_config = ConfigDict(frozen=True)

    language: Language
    source: str
    mode: Mode = "stdio"
    tests: list[TestCase] = Field(min_length=1)
    time_limit_s: float = Field(2.0, gt=0, le=60)
    memory_limit_mb: int = Field(256, ge=16, le=MAX_MEMORY_LIMIT_MB)
    compare: CompareSpec = CompareSpec()
    output_limit_mb: int = Field(32, ge=1, le=256)
    # After a test that runs out of time, run no more tests: they count as not passed and the
    # verdict is TLE. A looping program then costs one time limit, not one per test (RLVR
    # rewards ask for it; the judge stage runs every test).
    stop_at_timeout: bool = False

    @model_validator(mode="after")
    def _mode_fits(self) -> JudgeRequest:
        if self.mode == "function":
            if self.language != "python":
                raise ValueError("function mode is Python only")
            missing = [i for i, t in enumerate(self.tests) if t.code is None]
            if missing:
                raise ValueError(f"function mode: tests {missing[:5]} have no `code`")
        return self

    @cached_property
    def tests_bytes(self) -> int:
        """Characters in the tests: small sets travel inline, large ones by reference."""
        return sum(len(t.input) + len(t.output) + len(t.code or "") for t in self.tests)

    @cached_property
    def tests_ref(self) -> str:
        """The test set's content hash: its name in a container's test store."""
        h = hashlib.sha256(self.mode.encode())
        for t in self.tests:
            h.update(t.digest.encode())
        return h.hexdigest()

    def cache_key(self, image_id: str) -> str:
        """Content hash of everything that decides the verdict: source, tests, limits, compare, image."""
        payload = self.model_dump(mode="json", exclude=self._unsent())
        payload["tests"] = self.tests_ref
        payload["image"] = image_id
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def wire(self, by_ref: bool = False) -> dict:
        """The runner's judge request (see sandbox/runner/runner.py): the tests inline, or by_ref
        only their hash (the container has them from `store_wire`)."""
        d = self.model_dump(mode="json", exclude=self._unsent())
        if by_ref:
            d["tests_ref"] = self.tests_ref
        else:
            d["tests"] = self._wire_tests()
        d["op"] = "judge"
        return d

    def store_wire(self) -> bytes:
        """The runner's store request: this request's test set, kept in the container by hash.
        One JSON line naming each test's byte sizes, then the tests' raw bytes (no JSON escaping
        or decoding of megabytes on either side)."""
        blobs: list[bytes] = []
        sizes: list[list[int]] = []
        stdio = self.mode == "stdio"
        for t in self.tests:
            inp = t.input.encode("utf-8", "surrogatepass") if stdio else b""
            out = t.output.encode("utf-8", "surrogatepass") if stdio else b""
            code = None if stdio or t.code is None else t.code.encode("utf-8", "surrogatepass")
            sizes.append([len(inp), len(out), -1 if code is None else len(code)])
            blobs += [inp, out, code or b""]
        head = {"op": "store", "tests_ref": self.tests_ref, "sizes": sizes}
        return json.dumps(head).encode() + b"\n" + b"".join(blobs)

    def _unsent(self) -> set[str]:
        """Fields left out of the runner's request and the cache key: the tests (sent apart), and
        `stop_at_timeout` when off, so requests without it keep their cache keys."""
        return {"tests"} | (set() if self.stop_at_timeout else {"stop_at_timeout"})

    def _wire_tests(self) -> list[dict]:
        if self.mode == "stdio":
            return [{"input": t.input, "output": t.output} for t in self.tests]
        return [{"code": t.code} for t in self.tests]


class TestResult(BaseModel):
    """One test. time_s is CPU time (user + sys, what the time limit bounds); wall_s is wall-clock.
    exit_code is the exit status, or minus the signal number when a signal ended the process."""

    __test__ = False

    verdict: Verdict
    time_s: float = 0.0
    wall_s: float = 0.0
    memory_kb: int = 0
    exit_code: int | None = None
    stderr_tail: str = ""


class JudgeResult(BaseModel):
    """A candidate's verdict.

    verdict: AC when every test passed; otherwise CE when compilation failed, otherwise the verdict
    of the first test that did not pass (SE included: SE means the sandbox, not the program, failed).
    """

    verdict: Verdict
    passed: int
    total: int
    pass_rate: float
    tests: list[TestResult] = Field(default_factory=list)
    compile_output: str | None = None
    compile_cached: bool = (
        False  # the pool container reused a build of the same (language, flags, source)
    )
    image: str = ""
    cache_key: str = ""
    cached: bool = False
    error: str | None = None  # why a result is SE, when it is
    # The problem's checker is unusable (no testlib.h in the image, a compile error): the problem,
    # not the candidate or the sandbox, is at fault; callers quarantine the problem.
    checker_error: str | None = None

    @classmethod
    def from_tests(
        cls, tests: list[TestResult], total: int, *, compile_ok: bool = True, **kw
    ) -> JudgeResult:
        passed = sum(t.verdict == "AC" for t in tests)
        if not compile_ok:
            verdict = "CE"
        elif passed == total and total == len(tests):
            verdict = "AC"
        else:
            first_bad = next((t.verdict for t in tests if t.verdict != "AC"), "SE")
            verdict = first_bad
        return cls(
            verdict=verdict,
            passed=passed,
            total=total,
            pass_rate=(passed / total) if total else 0.0,
            tests=tests,
            **kw,
        )

    @classmethod
    def system_error(cls, total: int, error: str, **kw) -> JudgeResult:
        return cls(verdict="SE", passed=0, total=total, pass_rate=0.0, error=error, **kw)
