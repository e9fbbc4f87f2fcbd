"""Ruff over a batch of Python programs in one process (one `ruff check` per batch, not per program)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

_RULE = re.compile(r"([A-Z]+)[0-9]+")
SYNTAX = "syntax"  # ruff reports syntax errors with no rule code (or "invalid-syntax")


@dataclass(frozen=True)
class LintReport:
    violations: int
    by_prefix: dict[str, int] = field(
        default_factory=dict
    )  # rule family (E, F, W, B, ...) -> count


def rule_prefix(code: str | None) -> str:
    m = _RULE.fullmatch(code or "")
    if m:
        return m.group(1)
    return SYNTAX if not code or "syntax" in code else code


def lint_python(
    sources: Sequence[str], select: Sequence[str], *, timeout_s: float = 120.0
) -> list[LintReport]:
    """One LintReport per source. `--isolated`: the project's own ruff settings never leak in."""
    if not sources:
        return []
    with tempfile.TemporaryDirectory(prefix="aletheia-lint-") as tmp:
        names = [f"c{i:06d}.py" for i in range(len(sources))]
        for name, src in zip(names, sources, strict=True):
            (Path(tmp) / name).write_text(src)
        cmd = [
            sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "json", "--select", ",".join(select), tmp,
        ]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"ruff failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}")
        found: dict[str, Counter[str]] = {name: Counter() for name in names}
        for item in json.loads(proc.stdout or "[]"):
            found[Path(item["filename"]).name][rule_prefix(item.get("code"))] += 1
    return [LintReport(sum(c.values()), dict(sorted(c.items()))) for c in (found[n] for n in names)]


def lint_penalty(report: LintReport, per_violation: float) -> float:
    """0 for clean code, `-per_violation` per violation, floored at -1."""
    return -min(1.0, report.violations * per_violation) or 0.0  # never -0.0
