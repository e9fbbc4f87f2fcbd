"""What each sample outputs on the tests' inputs, for the majority-by-output baseline.

The sandbox answers verdicts, not outputs, so a probe is a judge request (built by the one
request builder, `judge_spec`) whose program reports a digest of its output on stderr,
which the sandbox returns per test (`stderr_tail`). Expected outputs are never looked at:
the baseline uses the inputs alone, as a verifier-free selector must.

- stdio, Python: the sample runs inside a small wrapper that captures its standard output
  (whitespace runs folded, as the default token comparison reads it) and writes its SHA-256;
- function mode (Python): each test's `assert X == Y` becomes "record repr(X)" (Y, the
  expected value, is dropped), anywhere in the test code (MBPP's one assert per test,
  HumanEval's `check(candidate)`); other asserts are dropped too, as they name no output.

A test on which the sample raised, ran out of time or printed no digest has no output; a
sample with no output on any test is in no group. C++ and Java samples are not probed (no
wrapper: their outputs are unknown and they are in no group).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence

from pipeline.judge.interface import JudgeSpec
from sandbox.models import JudgeRequest, JudgeResult, TestCase

MARK = "BON-OUTPUT"
_LINE = re.compile(rf"{MARK} (ok|none):([0-9a-f]{{64}})?")

Signature = tuple[str | None, ...]  # one output digest per test; None: no output there

_STDIO_WRAPPER = """\
import hashlib as _bon_h
import io as _bon_io
import sys as _bon_sys

_bon_buf = _bon_io.BytesIO()
_bon_out = _bon_io.TextIOWrapper(_bon_buf, encoding="utf-8", write_through=True)
_bon_real = _bon_sys.stdout
_bon_sys.stdout = _bon_out
_bon_ok = True
try:
    exec(compile({source!r}, "solution.py", "exec"), {{"__name__": "__main__"}})
except SystemExit as _bon_e:
    _bon_ok = _bon_e.code in (None, 0)
except BaseException:
    _bon_ok = False
_bon_out.flush()
_bon_sys.stdout = _bon_real
if _bon_ok:
    _bon_data = b" ".join(_bon_buf.getvalue().split())
    _bon_sys.stderr.write("\\n{mark} ok:" + _bon_h.sha256(_bon_data).hexdigest() + "\\n")
else:
    _bon_sys.stderr.write("\\n{mark} none:\\n")
"""

_FUNCTION_HEAD = """\
import hashlib as _bon_h
import sys as _bon_sys
_bon_seen = []
def _bon_record(value):
    _bon_seen.append(repr(value))
"""

_FUNCTION_TAIL = f"""\
    _bon_ok = True
except BaseException:
    _bon_ok = False
if _bon_ok and _bon_seen:
    _bon_digest = _bon_h.sha256("\\x00".join(_bon_seen).encode("utf-8", "replace")).hexdigest()
    _bon_sys.stderr.write("\\n{MARK} ok:" + _bon_digest + "\\n")
else:
    _bon_sys.stderr.write("\\n{MARK} none:\\n")
"""


class _RecordOutputs(ast.NodeTransformer):
    """`assert X == Y` -> `_bon_record(X)`; any other assert -> `pass`."""

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            call = ast.Call(func=ast.Name("_bon_record", ast.Load()), args=[test.left], keywords=[])
            return ast.copy_location(ast.Expr(call), node)
        return ast.copy_location(ast.Pass(), node)


def function_probe(test_code: str) -> str | None:
    """The test code rewritten to record what the sample returns; None if it does not parse."""
    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return None
    body = ast.unparse(ast.fix_missing_locations(_RecordOutputs().visit(tree))) or "pass"
    indented = "\n".join("    " + line for line in body.splitlines())
    return f"{_FUNCTION_HEAD}try:\n{indented}\n{_FUNCTION_TAIL}"


def stdio_probe(source: str) -> str:
    """The sample wrapped to report the digest of its standard output."""
    return _STDIO_WRAPPER.format(source=source, mark=MARK)


def probe_request(spec: JudgeSpec, language: str, code: str) -> JudgeRequest | None:
    """The probe of one sample, or None when it cannot be probed (not Python, no program, or
    function-mode tests that do not parse)."""
    if language != "python" or not code.strip():
        return None
    if spec.mode == "function":
        rewritten = [function_probe(t.code or "") for t in spec.tests]
        if any(r is None for r in rewritten):
            return None
        tests = tuple(TestCase(code=r) for r in rewritten)
        # A probe stops at its first time-out: the rest of its tests would only time out too.
        request = dataclasses.replace(spec, tests=tests).request(language, code)
    else:
        tests = tuple(TestCase(input=t.input, output="") for t in spec.tests)
        request = dataclasses.replace(spec, tests=tests).request(language, stdio_probe(code))
    return request.model_copy(update={"stop_at_timeout": True})


def signature(result: JudgeResult, tests: int) -> Signature:
    """The output digest of each test (None where the sample left none)."""
    out: list[str | None] = []
    for i in range(tests):
        tail = result.tests[i].stderr_tail if i < len(result.tests) else ""
        found = _LINE.findall(tail)
        out.append(found[-1][1] if found and found[-1][0] == "ok" else None)
    return tuple(out)


def majority_pick(signatures: Sequence[Signature | None]) -> int | None:
    """The first sample of the largest group of samples with the same outputs on every test
    (ties to the group met first); samples with no output anywhere are in no group. None when
    no sample has an output."""
    groups: dict[Signature, list[int]] = {}
    for i, sig in enumerate(signatures):
        if sig is not None and any(x is not None for x in sig):
            groups.setdefault(sig, []).append(i)
    if not groups:
        return None
    best = max(groups.values(), key=len)  # max keeps the first of equal sizes: met first
    return best[0]
