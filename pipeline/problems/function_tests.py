"""Function-mode test code from (arguments, expected result) pairs.

Sources such as TACO, APPS and LiveCodeBench describe a function-mode test as JSON
arguments and a JSON result. The sandbox runs a function-mode test as Python code
appended after the candidate (pass = exit 0), so each pair becomes a tiny script.
Values travel as JSON text inside the script, so no source data is ever evaluated
as Python code.
"""

from __future__ import annotations

import json
from typing import Any

_TEMPLATE = """
import json as _aj


def _aletheia_norm(value):
    # tuples -> lists, and other JSON round-trip differences
    try:
        return _aj.loads(_aj.dumps(value))
    except (TypeError, ValueError):
        return value


_args = _aj.loads({args!r})
_expected = _aj.loads({expected!r})
_got = _aletheia_norm({call}(*_args))
_ok = _got == _expected{wrapped}
assert _ok, "expected %r, got %r" % (_expected, _got)
"""


def call_target(entry_point: str, starter_code: str | None) -> str:
    """`Solution().f` for LeetCode-style class starters, else the plain function `f`."""
    if starter_code and "class Solution" in starter_code:
        return f"Solution().{entry_point}"
    return entry_point


def function_test_code(
    entry_point: str,
    args: list[Any],
    expected: Any,
    *,
    starter_code: str | None = None,
    accept_wrapped: bool = False,
) -> str:
    """Test code calling the entry point with `args` and asserting the result equals `expected`.

    `accept_wrapped`: APPS/TACO often store a result `r` as `[r]`; accept either form.
    """
    wrapped = " or [_got] == _expected" if accept_wrapped else ""
    return _TEMPLATE.format(
        args=json.dumps(args, ensure_ascii=False),
        expected=json.dumps(expected, ensure_ascii=False),
        call=call_target(entry_point, starter_code),
        wrapped=wrapped,
    ).lstrip("\n")
