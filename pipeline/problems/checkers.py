"""Source checker programs -> the sandbox's checker protocols.

Two kinds reach the sandbox:
  testlib  C++ checkers written to testlib's conventions (CodeContests+ and Codeforces ship
           them): handed over as they are, compare mode `testlib`; the sandbox compiles each
           once per container against the image's pinned testlib.h. A checker it cannot build
           (no testlib.h, a compile error) quarantines its problem in the judge stage; it is
           never replaced by a token compare.
  checker  Python checkers, wrapped as below.

The sandbox runs `python3 checker.py INPUT EXPECTED ACTUAL` and reads the exit code
(0 accept, 1 reject, anything else = checker failure). open-r1/codeforces ships
`generated_checker` programs taking the same three paths in the same order; they
report either through the exit code or by printing a score (1 = correct). The
wrapper below accepts both, so a checker that prints "0" and exits 0 is a reject,
never a silent pass. (The exact convention of every published checker could not be
verified offline; a checker that crashes is reported by the sandbox, not passed.)
"""

from __future__ import annotations

_WRAPPER = """import contextlib
import io
import sys

_SOURCE = {source!r}
_buf = io.StringIO()
_code = 0
_argv = sys.argv
try:
    sys.argv = [_argv[0], *_argv[1:4]]
    with contextlib.redirect_stdout(_buf):
        exec(compile(_SOURCE, "source_checker.py", "exec"), {{"__name__": "__main__"}})
except SystemExit as e:
    _code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
_words = _buf.getvalue().split()
if _words:
    try:
        sys.exit(0 if float(_words[-1]) >= 1.0 - 1e-9 else 1)
    except ValueError:
        pass  # a verdict word ("ok", "wrong answer ..."): fall back to the exit code
sys.exit(0 if _code == 0 else 1)
"""


def wrap_score_or_exit_checker(source: str) -> str:
    """A sandbox checker that runs `source` and maps its score/exit code to accept/reject."""
    return _WRAPPER.format(source=source)


def compare_fields(testlib_source: str | None, python_source: str | None = None) -> dict:
    """The Problem fields for a source's checker: a testlib checker wins over a Python one;
    neither means the default token compare. Blank sources count as absent."""
    if testlib_source and testlib_source.strip():
        return {"compare_mode": "testlib", "checker": testlib_source}
    if python_source and python_source.strip():
        return {"compare_mode": "checker", "checker": wrap_score_or_exit_checker(python_source)}
    return {"compare_mode": "tokens", "checker": None}
