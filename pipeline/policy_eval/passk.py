"""pass@k (Chen et al. 2021's unbiased estimator) and seeded bootstrap intervals over problems."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.common.passk import pass_at_k

__all__ = ["bootstrap_interval", "paired_bootstrap_difference", "pass_at_k"]


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, resampling problems with replacement (seeded)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def paired_bootstrap_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """mean(b - a) over the same problems, and its percentile bootstrap interval (problems resampled)."""
    if len(a) != len(b):
        raise ValueError(
            f"paired difference needs the same problems on both sides ({len(a)} vs {len(b)})"
        )
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    lo, hi = bootstrap_interval(d, resamples=resamples, confidence=confidence, seed=seed)
    return (float(d.mean()) if d.size else float("nan"), lo, hi)
