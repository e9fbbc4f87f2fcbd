"""Ruff rule family -> severity, the mapping the policy reports use (documented in docs/rlvr-study.md).

Ruff itself has no severities; we group rule families by what a violation says about a program:
- error: the program is broken or very likely wrong: syntax errors, Pyflakes (F: undefined
  names, unused or shadowed imports and variables), Pylint errors (PLE), flake8-bugbear (B).
- warning: legal but risky or sloppy: pycodestyle errors (E), warnings (W), Pylint warnings
  (PLW), complexity (C90), security (S), performance (PERF), unused arguments (ARG).
- convention: style only: everything else (naming N, docstrings D, imports I, UP, SIM, C4, RUF, ...).
"""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning", "convention"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "convention")

_ERROR = frozenset({"syntax", "F", "PLE", "B"})
_WARNING = frozenset({"E", "W", "PLW", "C", "S", "PERF", "ARG"})


def severity_of(family: str) -> Severity:
    """The severity of a rule family as `pipeline.train.lint.rule_prefix` names it (F, E, syntax, ...)."""
    if family in _ERROR:
        return "error"
    if family in _WARNING:
        return "warning"
    return "convention"
