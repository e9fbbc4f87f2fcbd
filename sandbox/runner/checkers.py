"""Checker programs (stdlib only): the Python checker protocol and testlib-convention checkers.

Both run after the candidate has exited and been swept, on files written only then: the test's
input, the candidate's output and the expected answer. So a candidate never sees an answer file.

python   `python3 checker.py INPUT EXPECTED ACTUAL`: exit 0 accept, 1 reject, else a checker failure.
testlib  a C++ checker compiled once per container against the pinned testlib.h, run as
         `checker INPUT OUTPUT ANSWER` (testlib's argument order): exit 0 ok, 1 wrong answer,
         2 presentation error (a reject), 3 checker failure, 7 points (accepted only at full
         score: the checker reports `points P` with P >= 1 on a 0..1 scale; Aletheia's verdicts
         are all-or-nothing), anything else a checker failure.
"""

from __future__ import annotations

import os
import re

from execute import Limits

TESTLIB_DIR = os.environ.get("ALETHEIA_TESTLIB_DIR", "/opt/aletheia/testlib")
TESTLIB_FLAGS = ["-I", TESTLIB_DIR]
CHECKER_LIMITS = Limits(
    cpu_s=10, wall_s=20, address_space_mb=1024, output_bytes=1 << 20, file_bytes=1 << 20, nproc=16
)
_POINTS = re.compile(rb"points\s+([-+0-9.eE]+)")
_INCLUDES_TESTLIB = re.compile(r'#\s*include\s*[<"]testlib\.h[>"]')


def testlib_available() -> bool:
    return os.path.isfile(os.path.join(TESTLIB_DIR, "testlib.h"))


def missing_testlib(source: str) -> str | None:
    """Why a checker cannot be built here, before trying (None: it can be tried)."""
    if _INCLUDES_TESTLIB.search(source) and not testlib_available():
        return (
            "testlib.h is not in this sandbox: `python -m sandbox testlib fetch` gets the pinned "
            "copy (or give one: ALETHEIA_TESTLIB_H=/path/to/testlib.h); the process engine "
            "takes it at its next start, the image at its next build"
        )
    return None


def python_verdict(exit_code: int | None) -> str:
    return {0: "AC", 1: "WA"}.get(exit_code, "SE")  # type: ignore[arg-type]


def testlib_verdict(exit_code: int | None, report: bytes) -> str:
    if exit_code == 0:
        return "AC"
    if exit_code in (1, 2):
        return "WA"
    if exit_code == 7:
        m = _POINTS.search(report)
        try:
            return "AC" if m and float(m.group(1)) >= 1.0 - 1e-9 else "WA"
        except ValueError:
            return "SE"
    return "SE"  # 3 = the checker itself failed; others are not testlib's
