"""Per (generator, language) summaries: counts, extraction failures, verdicts, pass rates, tokens."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

# Pass-rate bins; Hard's near misses (0.7-0.9) get a bin of their own.
PASS_RATE_BINS: tuple[tuple[str, float, float], ...] = (
    ("0", 0.0, 0.0),
    ("(0,0.3]", 0.0, 0.3),
    ("(0.3,0.7]", 0.3, 0.7),
    ("(0.7,0.9]", 0.7, 0.9),
    ("(0.9,1)", 0.9, 1.0),
    ("1", 1.0, 1.0),
)


def pass_rate_bin(rate: float) -> str:
    if rate <= 0.0:
        return "0"
    if rate >= 1.0:
        return "1"
    for name, lo, hi in PASS_RATE_BINS[1:-1]:
        if lo < rate <= hi:
            return name
    return "(0.9,1)"


def group_key(row: Mapping[str, Any]) -> str:
    return f"{row['generator']} | {row['language']}"


def candidate_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per generator x language: count, extraction statuses and failures, tokens."""
    out: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "count": 0,
            "extraction": Counter(),
            "extraction_failures": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
    )
    for r in rows:
        g = out[group_key(r)]
        g["count"] += 1
        g["extraction"][r["extraction"]] += 1
        g["extraction_failures"] += r["extraction"] in ("no_code", "wrong_language")
        g["prompt_tokens"] += r.get("prompt_tokens") or 0
        g["completion_tokens"] += r.get("completion_tokens") or 0
    return {k: {**v, "extraction": dict(v["extraction"])} for k, v in sorted(out.items())}


def verdict_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per generator x language: judged count, verdict histogram, pass-rate histogram (SE apart)."""
    out: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"judged": 0, "verdicts": Counter(), "pass_rates": Counter()}
    )
    for r in rows:
        g = out[group_key(r)]
        g["judged"] += 1
        g["verdicts"][r["verdict"]] += 1
        if r["verdict"] != "SE":  # an SE says nothing about the program
            g["pass_rates"][pass_rate_bin(r["pass_rate"])] += 1
    return {
        k: {
            "judged": v["judged"],
            "verdicts": dict(sorted(v["verdicts"].items())),
            "pass_rates": {name: v["pass_rates"].get(name, 0) for name, _, _ in PASS_RATE_BINS},
        }
        for k, v in sorted(out.items())
    }
