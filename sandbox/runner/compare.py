"""Output comparison (stdlib only). All comparisons are on bytes, so invalid UTF-8 never crashes us."""

from __future__ import annotations

import math

DEFAULT_TOL = 1e-6


def tokens_equal(actual: bytes, expected: bytes) -> bool:
    """Whitespace-insensitive: trailing spaces, blank lines and CRLF are fine; a prefix is not.

    Most accepted outputs are byte-identical to the answer, or differ only at the end: those are
    decided by one memory compare, without splitting megabytes into tokens."""
    if actual == expected or actual.rstrip() == expected.rstrip():
        return True
    return actual.split() == expected.split()


def exact_equal(actual: bytes, expected: bytes) -> bool:
    return actual == expected


def _as_float(tok: bytes) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


def floats_equal(
    actual: bytes, expected: bytes, abs_tol: float | None, rel_tol: float | None
) -> bool:
    """Token-wise; numeric tokens match within abs_tol OR rel_tol, other tokens must be identical."""
    if abs_tol is None and rel_tol is None:
        abs_tol = rel_tol = DEFAULT_TOL
    a_tol = abs_tol or 0.0
    r_tol = rel_tol or 0.0
    got, want = actual.split(), expected.split()
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if g == w:
            continue
        gf, wf = _as_float(g), _as_float(w)
        if gf is None or wf is None:
            return False
        if math.isnan(gf) or math.isnan(wf):
            if not (math.isnan(gf) and math.isnan(wf)):
                return False
            continue
        if math.isinf(gf) or math.isinf(wf):
            if gf != wf:
                return False
            continue
        diff = abs(gf - wf)
        if diff > a_tol and diff > r_tol * abs(wf):
            return False
    return True
