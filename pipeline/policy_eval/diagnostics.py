"""Per-sample facts -> the four diagnostic families: pass@k, length, Ruff profile, error types."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.policy_eval.passk import bootstrap_interval, pass_at_k
from pipeline.policy_eval.severity import SEVERITIES, severity_of

NO_PROGRAM = "NO_PROGRAM"  # no program could be extracted from the completion (never judged)
ERROR_TYPES = ("AC", "WA", "RE", "TLE", "MLE", "CE", "OLE", "SE", NO_PROGRAM)
# The last line of a Python traceback: "NameError: name 'x' is not defined" (dotted names too).
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b")


def exception_name(stderr: str | None) -> str | None:
    """The exception a failing Python test raised, from its stderr tail; None if none is named."""
    for line in reversed((stderr or "").strip().splitlines()):
        m = _EXC_LINE.match(line.strip())
        if m:
            return m.group(1).rsplit(".", 1)[-1]
    return None


def code_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip())


def _dist(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "p90": None}
    x = np.asarray(values, dtype=float)
    return {
        "mean": float(x.mean()),
        "median": float(np.median(x)),
        "p90": float(np.quantile(x, 0.9)),
    }


def per_problem(samples: Sequence[dict[str, Any]], ks: Sequence[int]) -> list[dict[str, Any]]:
    """One row per problem: n samples, c correct (AC), pass@k for each k."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        groups.setdefault(s["problem_id"], []).append(s)
    out = []
    for pid in sorted(groups, key=lambda p: (groups[p][0]["source_id"], p)):
        rows = groups[pid]
        n, c = len(rows), sum(r["verdict"] == "AC" for r in rows)
        out.append(
            {
                "problem_id": pid,
                "source_id": rows[0]["source_id"],
                "n": n,
                "c": c,
                **{f"pass@{k}": pass_at_k(n, c, k) for k in ks if k <= n},
            }
        )
    return out


def pass_metrics(
    problems: Sequence[dict[str, Any]], ks: Sequence[int], boot: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ks:
        vals = [p[f"pass@{k}"] for p in problems if f"pass@{k}" in p]
        lo, hi = bootstrap_interval(
            vals, resamples=boot.resamples, confidence=boot.confidence, seed=boot.seed
        )
        out[f"pass@{k}"] = {
            "value": float(np.mean(vals)) if vals else None,
            "ci_low": lo,
            "ci_high": hi,
            "problems": len(vals),
        }
    out["interval"] = (
        f"percentile bootstrap over problems, {boot.resamples} resamples, "
        f"{boot.confidence:.0%}, seed {boot.seed}"
    )
    return out


def length_metrics(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    tokens = [s["completion_tokens"] for s in samples if s.get("completion_tokens") is not None]
    return {
        "tokens": _dist(tokens),
        "chars": _dist([s["completion_chars"] for s in samples]),
        "truncated_share": (sum(bool(s["truncated"]) for s in samples) / len(samples))
        if samples
        else None,
        "samples": len(samples),
        "samples_with_token_counts": len(tokens),
    }


def ruff_metrics(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Over the samples with a program: violations per family and severity, per program and per 100 lines."""
    linted = [s for s in samples if s.get("ruff_families") is not None]
    programs = len(linted)
    lines = sum(s["code_lines"] for s in linted)
    fam: Counter[str] = Counter()
    for s in linted:
        fam.update(s["ruff_families"])
    sev: Counter[str] = Counter()
    for f, c in fam.items():
        sev[severity_of(f)] += c

    def rates(count: int) -> dict[str, float | int | None]:
        return {
            "count": count,
            "per_program": count / programs if programs else None,
            "per_100_lines": 100 * count / lines if lines else None,
        }

    total = sum(fam.values())
    return {
        "programs": programs,
        "lines": lines,
        "total": rates(total),
        "clean_share": (sum(1 for s in linted if not s["ruff_families"]) / programs)
        if programs
        else None,
        "by_severity": {s: rates(sev.get(s, 0)) for s in SEVERITIES},
        "by_family": {f: {**rates(c), "severity": severity_of(f)} for f, c in sorted(fam.items())},
    }


def error_metrics(samples: Sequence[dict[str, Any]], top: int = 10) -> dict[str, Any]:
    n = len(samples)
    counts = Counter(s["verdict"] for s in samples)
    extra = sorted(v for v in counts if v not in ERROR_TYPES)
    exc = Counter(s["exception"] for s in samples if s.get("exception"))
    return {
        "samples": n,
        "by_type": {
            v: {"count": counts.get(v, 0), "share": counts.get(v, 0) / n if n else None}
            for v in (*ERROR_TYPES, *extra)
        },
        "top_exceptions": [{"name": k, "count": c} for k, c in exc.most_common(top)],
    }
