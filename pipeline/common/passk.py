"""pass@k, Chen et al. 2021's unbiased estimator: one definition for policy evaluation
(pipeline.policy_eval) and RLVR's before/after measurements (pipeline.train.rlvr_probe)."""

from __future__ import annotations

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k): the chance that k of the n samples, drawn without replacement,
    include a correct one. Needs k <= n. Product form: no huge binomials."""
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: c={c} must be within 0..n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k: k={k} must be within 1..n={n}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
